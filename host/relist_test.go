package host_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// TestListChangedFloodIsRateLimited: a plugin that announces a tool list
// change from its own list_tools (so every relist asks for the next) is
// relisted at most once per host.RelistInterval; announcing a thousand
// times from every call, without pause, neither speeds that up nor stops
// it. Each relist is logged at debug with counts, not the names the plugin
// chose; another plugin answers throughout, and no announcement is dropped
// with a warning.
func TestListChangedFloodIsRateLimited(t *testing.T) {
	const name = "tool-with-a-name-the-plugin-chose"
	flood := testutil.WATPlugin{
		Tools:   `{"tools":[{"name":"` + name + `","inputSchema":{"type":"object"}}]}`,
		Imports: `(import "extism:host/user" "notify_tool_list_changed" (func $tools_changed))`,
		OnList:  `(call $tools_changed)`,
		CallTool: `(local $i i32)
    (block $done (loop $again
      (br_if $done (i32.ge_u (local.get $i) (i32.const 1000)))
      (call $tools_changed)
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $again)))
    (call $out (global.get $EMPTY) (i32.const 14)) (i32.const 0)`,
	}.Build(t)
	quiet := testutil.WATPlugin{Tools: `{"tools":[{"name":"quiet","inputSchema":{"type":"object"}}]}`}.Build(t)
	began := time.Now()
	s := start(t, fmt.Sprintf(`
[server]
watch = false
lock_file = "off"
[[plugin]]
name = "flood"
path = %q
[[plugin]]
name = "quiet"
path = %q
`, flood, quiet))

	relists := func() int {
		log := s.log.String()
		return strings.Count(log, "plugin listed again: plugin=flood") + strings.Count(log, "plugin loaded: plugin=flood") - 1
	}
	// checkRate: RelistInterval apart, after the load, at most
	// elapsed/interval + 1 relists.
	checkRate := func(phase string) {
		t.Helper()
		elapsed := time.Since(began)
		n, most := relists(), int(elapsed/host.RelistInterval)+1
		t.Logf("%s: %d relists in %v (at most %d allowed)", phase, n, elapsed.Round(time.Millisecond), most)
		if n > most {
			t.Errorf("%s: %d relists in %v: more than one per %v", phase, n, elapsed, host.RelistInterval)
		}
	}
	quietCall := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
		defer cancel()
		res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: "quiet", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("the other plugin during the flood: %v %+v", err, res)
		}
	}

	// Every relist announces the next: relisted about once a second, not
	// once per debounce; the other plugin answers throughout.
	for time.Since(began) < 2*time.Second {
		quietCall()
		time.Sleep(50 * time.Millisecond)
	}
	checkRate("announcing from list_tools")

	// A flood of announcements from calls neither speeds relists up nor
	// postpones the one pending: the plugin is still relisted.
	before := relists()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
			_, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			cancel()
			if err != nil {
				t.Errorf("flooding call: %v", err)
				return
			}
		}
	})
	deadline := time.Now().Add(hangGuard)
	for relists() <= before+1 && time.Now().Before(deadline) {
		quietCall()
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if relists() <= before+1 {
		t.Errorf("no relist in %v of flooding announcements (%d before, %d after): the flood postponed them", hangGuard, before, relists())
	}
	checkRate("flooding from calls")
	log := s.log.String()
	if n := strings.Count(log, name); n > 1 {
		t.Errorf("the plugin's tool name is in the log %d times; want only in the first load's line", n)
	}
	if strings.Contains(log, "dropping one") {
		t.Error("an announcement was dropped")
	}
}
