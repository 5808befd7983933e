package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestGrantsOfTheHostsStateAreRefusedByEveryCommand: a config granting a
// plugin the directory that holds the config (and so the lock file and,
// here, the cache) is refused by serve, validate, plugin accept and plugin
// update alike, naming the plugin, the grant and what it would expose,
// before any plugin is loaded; the same plugin with a grant of its own
// directory is served.
func TestGrantsOfTheHostsStateAreRefusedByEveryCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "mcphost.toml")
	write := func(grant string) {
		text := fmt.Sprintf("[server]\nwatch = false\ncache_dir = \"cache\"\n[[plugin]]\nname = \"hello\"\npath = %q\nallowed_paths = { %q = \"/data\" }\n",
			testutil.GoPlugin(t, "plugins/hello"), grant)
		if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("rw:" + dir)
	for _, args := range [][]string{
		{"serve", "--config", cfgPath},
		{"validate", "--config", cfgPath},
		{"plugin", "accept", "--config", cfgPath, "hello"},
		{"plugin", "update", "--config", cfgPath},
	} {
		_, stderr, err := runCLI(t, args...)
		if err == nil {
			t.Errorf("mcphost %s accepted a grant of the config's directory", strings.Join(args, " "))
			continue
		}
		for _, w := range []string{`plugin "hello"`, `"rw:` + dir + `"`, "the config file", "the lock file", "cache_dir", "mcphost.toml:7"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("mcphost %s: error does not say %q: %v", strings.Join(args, " "), w, err)
			}
		}
		if strings.Contains(stderr, "plugin loaded") {
			t.Errorf("mcphost %s loaded a plugin before refusing the config", strings.Join(args, " "))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mcphost.lock")); err == nil {
		t.Error("a refused config wrote the lock file")
	}

	write(data)
	if out, _, err := runCLI(t, "validate", "--config", cfgPath); err != nil || !strings.Contains(out, "ok, 1 plugin") {
		t.Fatalf("validate of a grant of a data directory: %v\n%s", err, out)
	}
}
