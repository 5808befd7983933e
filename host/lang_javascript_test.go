package host_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/internal/jsplugin"
	"github.com/mcphost/mcphost/internal/testutil"
)

// JavaScript plugins (sdk/js) run in the committed engine
// (sdk/js/engine/engine.wasm, built by its build.sh, which CI runs with
// --check): these tests make each plugin from it and a source, as
// plugins/js-hello/build.sh does, so they need no C toolchain.

// jsPlugin writes the engine with source in its mcphost.js section to a
// file of the test's and returns its path.
func jsPlugin(t *testing.T, source string) string {
	t.Helper()
	engine, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "sdk", "js", "engine", "engine.wasm"))
	if err != nil {
		t.Fatalf("%v (build it with sdk/js/engine/build.sh)", err)
	}
	wasm, err := jsplugin.Build(engine, []byte(source))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plugin.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJSHello: the committed example plugins/js-hello through a go-sdk
// client: a text result with the plugin's config, structured content, and
// a thrown error as a tool error naming the JavaScript file and line.
func TestJSHello(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "js"
path = %s
timeout = "10s"
config = { greeting = "Howdy" }
`, strconv.Quote(committedWasm(t, "js-hello"))))
	cs := connect(t, h, nil, "")
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "add,fail,greet" {
		t.Errorf("tools = %s, want add,fail,greet", got)
	}
	if res, text := callText(t, cs, "greet", map[string]any{"name": "Ada"}); res.IsError || text != "Howdy, Ada!" {
		t.Errorf("greet = %q (isError %v), want \"Howdy, Ada!\"", text, res.IsError)
	}
	res, text := callText(t, cs, "add", map[string]any{"a": 2, "b": 40})
	if res.IsError || text != `{"sum":42}` {
		t.Errorf("add = %q (isError %v), want {\"sum\":42}", text, res.IsError)
	}
	if sc, ok := res.StructuredContent.(map[string]any); !ok || sc["sum"] != 42.0 {
		t.Errorf("add structuredContent = %#v, want {sum: 42}", res.StructuredContent)
	}
	res, text = callText(t, cs, "fail", map[string]any{})
	if !res.IsError || !strings.Contains(text, "Error: it failed on purpose") || !strings.Contains(text, "plugin.js:38") {
		t.Errorf("fail = %q (isError %v), want the error and plugin.js:38", text, res.IsError)
	}
}
