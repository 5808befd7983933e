package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testutil"
)

// copyPlugin copies the .wasm file at src into a new directory.
func copyPlugin(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestPluginDescribe: describe writes a plugin's lists into its module;
// --check, inspect and validate each say whether a module ships one and
// whether it matches what the plugin lists with the config given, and the
// exit codes agree.
func TestPluginDescribe(t *testing.T) {
	path := copyPlugin(t, testutil.GoPlugin(t, "plugins/time"))
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	_, _, err = runCLI(t, "plugin", "describe", "--check", path)
	if err == nil || !strings.Contains(err.Error(), "ships no description") {
		t.Fatalf("--check of a module without a description: %v", err)
	}
	out, _, err := runCLI(t, "plugin", "inspect", path)
	if err != nil || !strings.Contains(out, "ships    no description") {
		t.Fatalf("inspect of a module without a description: %v\n%s", err, out)
	}

	other := filepath.Join(t.TempDir(), "described.wasm")
	out, _, err = runCLI(t, "plugin", "describe", "-o", other, path)
	if err != nil || !strings.Contains(out, "described (2 tools") {
		t.Fatalf("describe -o: %v\n%s", err, out)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, before) {
		t.Fatal("describe -o changed the module it read")
	}
	out, _, err = runCLI(t, "plugin", "describe", path)
	if err != nil || !strings.Contains(out, "sha256 ") {
		t.Fatalf("describe: %v\n%s", err, out)
	}
	described, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(described, before) || !bytes.HasPrefix(described, before[:8]) {
		t.Fatal("describe left the module as it was")
	}
	if again, _ := os.ReadFile(other); !bytes.Equal(again, described) {
		t.Fatal("describe -o and describe in place wrote different modules")
	}
	// Describing again replaces the description: the module does not grow.
	if _, _, err := runCLI(t, "plugin", "describe", path); err != nil {
		t.Fatal(err)
	}
	if twice, _ := os.ReadFile(path); !bytes.Equal(twice, described) {
		t.Fatal("describing a described module changed it")
	}

	out, _, err = runCLI(t, "plugin", "describe", "--check", path)
	if err != nil || !strings.Contains(out, "matches its lists") {
		t.Fatalf("--check of a described module: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "plugin", "inspect", "--json", path)
	if err != nil || !strings.Contains(out, `"description": "matches its lists"`) {
		t.Fatalf("inspect --json of a described module: %v\n%s", err, out)
	}
	// With config its lists depend on, the description no longer matches:
	// --check fails and validate says so (it is no error: the host then
	// lists the plugin from its module).
	_, _, err = runCLI(t, "plugin", "describe", "--check", "--config-value", "local_timezone=Europe/Paris", path)
	if err == nil || !strings.Contains(err.Error(), "differs from its lists with this config") {
		t.Fatalf("--check with other config: %v", err)
	}
	cfg := testutil.WriteConfig(t, fmt.Sprintf("[server]\nwatch = false\nlock_file = \"off\"\n[[plugin]]\nname = \"time\"\npath = %q\nconfig = { local_timezone = \"Europe/Paris\" }\n", path))
	out, _, err = runCLI(t, "validate", "--config", cfg)
	if err != nil || !strings.Contains(out, "ships  a description that differs from its lists with this config") || !strings.Contains(out, "not used with this config") {
		t.Fatalf("validate with other config: %v\n%s", err, out)
	}
	if _, _, err := runCLI(t, "plugin", "describe", "--config-value", "local_timezone=Europe/Paris", path); err == nil || !strings.Contains(err.Error(), "only with --check") {
		t.Fatalf("describe with --config-value: %v", err)
	}
	cfg = testutil.WriteConfig(t, fmt.Sprintf("[server]\nwatch = false\nlock_file = \"off\"\n[[plugin]]\nname = \"time\"\npath = %q\n", path))
	out, _, err = runCLI(t, "validate", "--config", cfg)
	if err != nil || !strings.Contains(out, "ships  a description that matches its lists") {
		t.Fatalf("validate: %v\n%s", err, out)
	}
}

// TestPluginDescribeRefusesWhatCannotShip: a hyper-mcp plugin, whose
// lists are read from its running instance, and a file that is not a
// module are refused with the reason; the file is left as it was.
func TestPluginDescribeRefusesWhatCannotShip(t *testing.T) {
	hyper := copyPlugin(t, testutil.GoPlugin(t, "testdata/plugins/hypermcp-v1"))
	before, _ := os.ReadFile(hyper)
	_, _, err := runCLI(t, "plugin", "describe", hyper)
	if err == nil || !strings.Contains(err.Error(), "cannot ship") || !strings.Contains(err.Error(), "hyper-mcp") {
		t.Fatalf("describe of a hyper-mcp plugin: %v", err)
	}
	if after, _ := os.ReadFile(hyper); !bytes.Equal(after, before) {
		t.Fatal("a refused describe changed the file")
	}
	notWasm := filepath.Join(t.TempDir(), "x.wasm")
	if err := os.WriteFile(notWasm, []byte("not a module"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "plugin", "describe", notWasm); err == nil {
		t.Fatal("describe of a file that is not a module succeeded")
	}
	if _, _, err := runCLI(t, "plugin", "describe", "--check", "-o", notWasm, hyper); err == nil {
		t.Fatal("--check with -o accepted")
	}
}

// TestPluginWarm: warm fills the config's cache_dir with compiled code and
// descriptions and says how much; with the cache off it fails, saying why.
func TestPluginWarm(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	cfg := testutil.WriteConfig(t, fmt.Sprintf("[server]\nwatch = false\nlock_file = \"off\"\ncache_dir = %q\n[[plugin]]\nname = \"rust\"\npath = %q\n",
		cache, filepath.Join(testutil.RepoRoot(t), "plugins", "rust", "rust.wasm")))
	out, _, err := runCLI(t, "plugin", "warm", "--config", cfg)
	if err != nil || !strings.Contains(out, "warmed 1 plugin(s)") || !strings.Contains(out, "2 compiled module(s), 1 description(s)") {
		t.Fatalf("warm: %v\n%s", err, out)
	}
	off := testutil.WriteConfig(t, strings.Replace(mustRead(t, cfg), cache, "off", 1))
	if _, _, err := runCLI(t, "plugin", "warm", "--config", off); err == nil || !strings.Contains(err.Error(), `cache_dir = "off"`) {
		t.Fatalf("warm with the cache off: %v", err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
