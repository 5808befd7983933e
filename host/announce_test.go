package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// announcingPlugin offers tools (a ListToolsResult's JSON); every call
// announces that its tools, resources and prompts changed.
func announcingPlugin(tools string) testutil.WATPlugin {
	return testutil.WATPlugin{
		Tools: tools,
		Imports: `(import "extism:host/user" "notify_tool_list_changed" (func $tools_changed))
  (import "extism:host/user" "notify_resource_list_changed" (func $resources_changed))
  (import "extism:host/user" "notify_prompt_list_changed" (func $prompts_changed))`,
		CallTool: `(call $tools_changed) (call $resources_changed) (call $prompts_changed)
    (call $out (global.get $EMPTY) (i32.const 14)) (i32.const 0)`,
	}
}

// TestAnnouncedListChangesAreDiffed: a plugin announcing that its lists
// changed when they did not costs clients nothing (no list_changed); when
// its tools did change, clients hear it once, and of nothing else.
func TestAnnouncedListChangesAreDiffed(t *testing.T) {
	const one = `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`
	const two = `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}`
	path := filepath.Join(t.TempDir(), "announcer.wasm")
	if err := os.WriteFile(path, testutil.WAT(t, announcingPlugin(one).Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	h, logs := newHost(t, `
[server]
watch = false
[[plugin]]
name = "announcer"
path = "`+path+`"
`)
	tools := make(chan struct{}, 16)
	others := make(chan string, 16)
	cs := connect(t, h, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { tools <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { others <- "prompts" },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { others <- "resources" },
	}, "2025-11-25")

	// loads counts the plugin's generations loaded so far: each
	// announcement lists the plugin again, in a new one (logged at debug
	// when its file is unchanged, at info when it changed).
	loads := func() int {
		return strings.Count(logs.String(), "plugin loaded: plugin=announcer") + strings.Count(logs.String(), "plugin listed again: plugin=announcer")
	}
	waitLoads := func(n int) {
		t.Helper()
		deadline := time.Now().Add(hangGuard)
		for loads() < n {
			if time.Now().After(deadline) {
				t.Fatalf("the plugin was not listed again after announcing (%d loads, want %d)", loads(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// Announced, unchanged. go-sdk sends a list_changed 10 ms after the
	// registration it follows: waiting far longer lets one that should
	// not come arrive (it can only make the test fail if one does come).
	callText(t, cs, "a", map[string]any{})
	waitLoads(2)
	select {
	case <-tools:
		t.Error("tools/list_changed for an announcement that changed nothing")
	case kind := <-others:
		t.Errorf("%s/list_changed for an announcement that changed nothing", kind)
	case <-time.After(500 * time.Millisecond):
	}

	// Announced, and the tools did change: the file now offers b too
	// (without a watcher, only the announcement lists the plugin again).
	if err := os.WriteFile(path+".tmp", testutil.WAT(t, announcingPlugin(two).Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	callText(t, cs, "a", map[string]any{})
	waitLoads(3)
	select {
	case <-tools:
	case <-time.After(hangGuard):
		t.Fatal("no tools/list_changed after the tools changed")
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(res.Tools) != 2 {
		t.Fatalf("tools after the change: %v, %v", res, err)
	}
	select {
	case kind := <-others:
		t.Errorf("%s/list_changed although the plugin's %s never changed", kind, kind)
	default:
	}
}
