package reftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// examples/reference-servers.toml, the config README.md gives for
// replacing the reference servers, validates and serves all five plugins
// as a user would run it: from a home directory with the two directories
// it asks to be created, and nothing else.
func TestExampleReferenceServersConfig(t *testing.T) {
	bin := mcphostBin(t)
	home := t.TempDir()
	for _, d := range []string{"mcp/files", "mcp/memory"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "mcp/files/hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The example, its plugin paths made absolute, in a directory of its
	// own: serve writes the lock file beside the config, and the checkout
	// stays as it was.
	example, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "reference-servers.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(example), `path = "../plugins/`, `path = "`+filepath.Join(repoRoot(t), "plugins")+"/")
	if strings.Contains(text, "../") {
		t.Fatal("the example config has a relative path the test does not rewrite")
	}
	config := filepath.Join(t.TempDir(), "reference-servers.toml")
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+sharedCache)

	validate := exec.Command(bin, "validate", "--config", config)
	validate.Env = env
	if out, err := validate.CombinedOutput(); err != nil {
		t.Fatalf("validate %s: %v\n%s", config, err, out)
	}

	serve := exec.Command(bin, "serve", "--config", config)
	serve.Env = env
	cs := connect(t, serve, nil)
	// A first start compiles the plugins: those not ready within
	// start_wait join later (list_changed), so list until all are there,
	// as a client told of the change would.
	want := []string{"read_text_file", "create_entities", "sequentialthinking", "fetch", "get_current_time", "convert_time"}
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(time.Second) {
		tools := listTools(t, cs)
		missing := slices.DeleteFunc(slices.Clone(want), func(name string) bool { return tools[name] != nil })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools %v are not served after 5 minutes", missing)
		}
	}
	files := filepath.Join(home, "mcp", "files")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_text_file", map[string]any{"path": filepath.Join(files, "hello.txt")}, "hello\n"},
		{"list_allowed_directories", map[string]any{}, files},
		{"create_entities", map[string]any{"entities": []any{map[string]any{"name": "mcphost", "entityType": "project", "observations": []any{"serves plugins"}}}}, `"name": "mcphost"`},
		{"sequentialthinking", map[string]any{"thought": "one", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": false}, `"thoughtHistoryLength": 1`},
		{"get_current_time", map[string]any{"timezone": "Asia/Kolkata"}, `"timezone": "Asia/Kolkata"`},
	} {
		got := call(t, cs, tc.tool, tc.args)
		if got.IsError || got.ProtocolError != "" || len(got.Content) == 0 || !strings.Contains(got.Content[0], tc.want) {
			t.Errorf("%s: %s, want a result holding %q", tc.tool, got, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "mcp", "memory", "memory.jsonl")); err != nil {
		t.Errorf("memory did not write its file in the granted directory: %v", err)
	}
	// fetch may reach public hosts only: a loopback address is refused.
	got := call(t, cs, "fetch", map[string]any{"url": "http://127.0.0.1:1/"})
	if !got.IsError {
		t.Errorf("fetch of a loopback address: %s, want a refusal", got)
	}
}
