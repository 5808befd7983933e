package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/wasmgen"
	"github.com/mcphost/mcphost/internal/testutil"
)

// bombs are modules that ended the host (2^32-1 locals: wazero allocates
// declared locals up front, an out-of-memory crash) or held it for
// minutes before issue #25, by the limit that now refuses each.
var bombs = []struct {
	name, limit string
	m           wasmgen.Module
}{
	{"2^32-1 locals", "function locals", wasmgen.Module{Funcs: []wasmgen.Func{{Locals: 1<<32 - 1, LocalGroups: 2, Export: "call_tool"}}}},
	{"2^27 locals", "function locals", wasmgen.Module{Funcs: []wasmgen.Func{{Locals: 1 << 27, Export: "call_tool"}}}},
	{"100,000 nested blocks", "nesting depth", wasmgen.Module{Funcs: []wasmgen.Func{{Body: wasmgen.Nested(100_000), Export: "call_tool"}}}},
	{"1,000,000 types", "types", wasmgen.Module{Types: 1_000_000, Funcs: []wasmgen.Func{{Export: "call_tool"}}}},
	{"50,000 locals after 10,000 branches", "branch cost", wasmgen.Module{Funcs: []wasmgen.Func{{Locals: 50_000, Body: wasmgen.BranchesThenReads(10_000, 50_000), Export: "call_tool"}}}},
}

// writeBomb writes b's module to a file and returns its path.
func writeBomb(t *testing.T, m wasmgen.Module) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bomb.wasm")
	if err := os.WriteFile(path, m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestModuleBombsDoNotStopTheHost: serve (which goes on without a plugin
// that does not load) serves hello beside each bomb, and logs the bomb's
// refusal naming the plugin and the limit.
func TestModuleBombsDoNotStopTheHost(t *testing.T) {
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			cfgText := strings.ReplaceAll(hostileFileConfig(writeBomb(t, b.m), ""), "{hello}", testutil.GoPlugin(t, "plugins/hello"))
			cfg, err := host.LoadConfig(testutil.WriteConfig(t, cfgText))
			if err != nil {
				t.Fatal(err)
			}
			logs := &syncBuffer{}
			h, err := host.New(t.Context(), cfg, host.Options{SkipBrokenPlugins: true,
				Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: logs})})
			if err != nil {
				t.Fatalf("host.New: %v", err)
			}
			defer h.Close(context.Background())
			log := logs.String()
			if !strings.Contains(log, `plugin=hostile`) || !strings.Contains(log, "refused before compiling") || !strings.Contains(log, "("+b.limit+")") {
				t.Errorf("the log does not name the plugin and the %s limit:\n%s", b.limit, log)
			}
			if got := len(h.Plugins()); got != 1 {
				t.Errorf("%d plugins loaded, want hello alone", got)
			}
			cs := connect(t, h, nil, "")
			if res, text := callText(t, cs, "echo", map[string]any{"text": "still here"}); res.IsError || text != "still here" {
				t.Errorf("echo answered %q", text)
			}
		})
	}
}

// TestModuleBombReloadKeepsTheOldPlugin: a hot reload that swaps a
// plugin's file for a bomb is refused, naming the limit, and the plugin
// it would have replaced goes on serving.
func TestModuleBombReloadKeepsTheOldPlugin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hostile.wasm")
	good, err := os.ReadFile(testutil.WATPlugin{Tools: oneTool}.Build(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, hostileFileConfig(path, "")+"\n[server]\nwatch = false\n")
	if err := os.WriteFile(path, bombs[0].m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	err = s.host.Reload(t.Context())
	if err == nil || !strings.Contains(err.Error(), `"hostile"`) || !strings.Contains(err.Error(), "(function locals)") {
		t.Fatalf("Reload: %v, want the bomb refused naming the plugin and the limit", err)
	}
	tools, err := s.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	if !names["attack"] || !names["echo"] {
		t.Errorf("after the refused reload the tools are %v, want attack and echo still served", names)
	}
	afterFault(t, s)
}

// TestPluginFileMustBeARegularFile: a FIFO in place of a plugin's file
// would hold its load (and the host's start) forever; it is refused at
// once, naming it.
func TestPluginFileMustBeARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.wasm")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	err := refusedAtLoad(t, hostileFileConfig(fifo, ""))
	if !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("load error %q does not say the file is not a regular file", err)
	}
}
