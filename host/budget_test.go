package host_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// budgetPlugin is a [[plugin]] table of hello named name, its tools
// prefixed with name, each instance counted at 32 MiB.
const budgetPlugin = `
[[plugin]]
name = "%[1]s"
path = "{hello}"
prefix = "%[1]s_"
memory_mb = 32
max_instances = 2
timeout = "60s"
idle_timeout = "1h"
`

// TestMemoryBudgetEvictsUnderLoad: four plugins of up to two instances
// each share a budget of three instances. Under concurrent calls to all
// of them every call succeeds: a plugin that needs an instance evicts
// another's idle one, or waits for one to go idle; the memory held never
// passes the budget.
func TestMemoryBudgetEvictsUnderLoad(t *testing.T) {
	cfg := "[server]\nmax_memory_mb = 96\n[server.metrics]\nenabled = true\n"
	names := []string{"p0", "p1", "p2", "p3"}
	for _, n := range names {
		cfg += fmt.Sprintf(budgetPlugin, n)
	}
	s := start(t, cfg)
	const budget = 96 << 20
	if v := metric(t, s.host, "mcphost_memory_budget_bytes"); v != budget {
		t.Errorf("mcphost_memory_budget_bytes = %v, want %v", v, budget)
	}

	var highest float64
	var watchMu sync.Mutex
	watch := func() {
		v := metric(t, s.host, "mcphost_memory_held_bytes")
		watchMu.Lock()
		highest = max(highest, v)
		watchMu.Unlock()
	}
	const callers, rounds = 8, 8
	var wg sync.WaitGroup
	var failed sync.Map
	for c := range callers {
		wg.Go(func() {
			for r := range rounds {
				name := names[(c+r)%len(names)]
				text := fmt.Sprintf("%d.%d", c, r)
				res, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: name + "_echo", Arguments: map[string]any{"text": text}})
				if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != text {
					failed.Store(text, fmt.Sprintf("%s: %v %+v", name, err, res))
				}
				watch()
			}
		})
	}
	wg.Wait()
	n := 0
	failed.Range(func(k, v any) bool {
		n++
		t.Errorf("call %v failed: %v", k, v)
		return n < 5
	})
	if highest > budget {
		t.Errorf("memory held reached %v bytes, over the budget of %v", highest, budget)
	}
	evicted := metric(t, s.host, "mcphost_memory_evictions_total")
	if evicted == 0 {
		t.Error("no instance evicted, yet four plugins were served within room for three instances")
	}
	var perPlugin float64
	for _, n := range names {
		perPlugin += metric(t, s.host, fmt.Sprintf(`mcphost_plugin_evictions_total{plugin=%q}`, n))
	}
	if perPlugin != evicted {
		t.Errorf("evictions by plugin sum to %v, the host's total is %v", perPlugin, evicted)
	}
	if held := metric(t, s.host, "mcphost_memory_held_bytes"); held > budget || held == 0 {
		t.Errorf("mcphost_memory_held_bytes = %v after the calls, want (0, %v]", held, budget)
	}
}

// TestMemoryBudgetRefusesACallThatCannotFit: a hyper-mcp plugin's instance
// keeps state and is never evicted; when it holds the room another
// plugin's instance needs, a call to that plugin fails, after its timeout,
// with an error naming the budget, the plugin and what is held. The host
// and the hyper-mcp plugin keep serving.
func TestMemoryBudgetRefusesACallThatCannotFit(t *testing.T) {
	hello := testutil.GoPlugin(t, "plugins/hello")
	helloOnly := `
[server]
max_memory_mb = 96
watch = false
[[plugin]]
name = "hello"
path = "` + hello + `"
memory_mb = 64
timeout = "1s"
`
	path := testutil.WriteConfig(t, helloOnly)
	cfg, err := host.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.Close(context.Background())
		if t.Failed() {
			t.Logf("host log:\n%s", logs.String())
		}
	})
	// Added once hello is idle (its load's instance released), the
	// hyper-mcp plugin takes 64 of the 96 MiB for good.
	withHyper := helloOnly + `
[[plugin]]
name = "keeper"
path = "` + testutil.GoPlugin(t, "testdata/plugins/hypermcp-v1") + `"
memory_mb = 64
timeout = "60s"
`
	if err := os.WriteFile(path, []byte(withHyper), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(t.Context()); err != nil {
		t.Fatalf("reload: %v", err)
	}
	cs := connect(t, h, nil, "")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	var msg string
	switch {
	case err != nil:
		msg = err.Error()
	case res.IsError && len(res.Content) > 0:
		msg = res.Content[0].(*mcp.TextContent).Text
	default:
		t.Fatalf("echo with no room in the budget: %+v, want an error", res)
	}
	for _, want := range []string{`plugin "hello"`, "memory budget", "max_memory_mb = 96", "memory_mb = 64", `"keeper" 64 MiB (0 in use, 1 idle, kept: hyper-mcp)`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	// The hyper-mcp plugin still serves.
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "echo" && !strings.HasPrefix(tool.Name, "echo") {
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool.Name, Arguments: map[string]any{}}); err != nil {
				t.Errorf("%s: %v", tool.Name, err)
			}
			break
		}
	}
}
