package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// TestSlowPluginJoinsAfterStart: serve waits for its plugins at most
// start_wait; a plugin still loading then (here: start_wait = "0s", so
// any plugin is) is not waited for, and joins when it is ready, with
// tools/list_changed. Before, New returned only once every plugin had
// compiled: one slow module held the whole host.
func TestSlowPluginJoinsAfterStart(t *testing.T) {
	cfgText := `
[server]
cache_dir = "` + t.TempDir() + `"
start_wait = "0s"
watch = false

[[plugin]]
name = "late"
path = "` + testutil.WATPlugin{Tools: oneTool}.Build(t) + `"
`
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, cfgText))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{SkipBrokenPlugins: true,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if n := len(h.Plugins()); n != 0 {
		t.Fatalf("New waited for %d plugin(s) past start_wait = 0s", n)
	}
	changed := make(chan struct{}, 4)
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := h.Server().Connect(t.Context(), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(t.Context(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	select {
	case <-changed:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no tools/list_changed after the plugin loaded; log:\n%s", logs)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "attack", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("the late plugin's tool: %v %+v", err, res)
	}
	if !strings.Contains(logs.String(), "plugin still loading after start_wait") {
		t.Errorf("the log does not say the plugin was still loading:\n%s", logs)
	}
}

// TestCloseEndsLateLoads: a host closed while a plugin still loads ends
// that load and returns.
func TestCloseEndsLateLoads(t *testing.T) {
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, `
[server]
cache_dir = "off"
start_wait = "0s"
watch = false

[[plugin]]
name = "hello"
path = "`+testutil.GoPlugin(t, "plugins/hello")+`"
`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(t.Context(), cfg, host.Options{SkipBrokenPlugins: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := len(h.Plugins()); n != 0 {
		t.Errorf("%d plugins after Close", n)
	}
}
