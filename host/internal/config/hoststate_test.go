package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGrantsThatReachTheHostsStateAreRefused: a grant that holds, or lies
// within, the config, the lock file, the cache (configured or default),
// the plugin store or the audit log is refused whether read-only or
// writable; one that holds a plugin's module or a trusted key only when
// writable. Symbolic links are followed both ways, and the error names
// the plugin, the grant, what it would expose and the line.
func TestGrantsThatReachTheHostsStateAreRefused(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "xdg")) // the default cache_dir's base (Linux)
	t.Setenv("HOME", filepath.Join(root, "home"))          // and elsewhere
	mk := func(parts ...string) string {
		d := filepath.Join(append([]string{root}, parts...)...)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	conf := mk("conf")
	cache := mk("cache")
	mk("cache", "lists")
	store := mk("store")
	logs := mk("logs")
	plugins := mk("plugins")
	data := mk("data")
	keys := mk("keys")
	mk("xdg", "mcphost", "wazero")
	mk("home", "Library", "Caches", "mcphost", "wazero") // macOS's user cache dir
	if err := os.Symlink(cache, filepath.Join(root, "link-to-cache")); err != nil {
		t.Fatal(err)
	}
	defCache, err := DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(plugins, "a.wasm"), filepath.Join(keys, "cosign.pub")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(conf, "mcphost.toml")
	server := fmt.Sprintf("[server]\ncache_dir = %q\nplugin_store = %q\nlock_file = %q\ntrusted_keys = [%q]\n[server.audit]\nfile = %q\n",
		cache, store, filepath.Join(logs, "m.lock"), filepath.Join(keys, "cosign.pub"), filepath.Join(logs, "audit.log"))
	plugin := fmt.Sprintf("[[plugin]]\nname = \"a\"\npath = %q\n", filepath.Join(plugins, "a.wasm"))
	for _, tc := range []struct {
		name, server, grant string
		want                string // "" when allowed
	}{
		{"unrelated", server, data, ""},
		{"config dir", server, conf, "the config file"},
		{"cache", server, cache, "the compilation and description cache (cache_dir)"},
		{"inside the cache", server, filepath.Join(cache, "lists"), "lies within the compilation and description cache"},
		{"cache through a link", server, filepath.Join(root, "link-to-cache"), "(cache_dir)"},
		{"parent of everything", server, root, "holds the config file"},
		{"store", server, store, "the plugin store (plugin_store)"},
		{"lock file and audit log", server, logs, "the lock file (lock_file)"},
		{"audit log", server, "rw:" + logs, "the audit log ([server.audit] file)"},
		{"default cache", "", defCache, "the default compilation cache and plugin store"},
		{"default cache's parent", "[server]\ncache_dir = \"off\"\n", filepath.Dir(defCache), "the default compilation cache and plugin store"},
		{"modules read-only", server, plugins, ""},
		{"modules writable", server, "rw:" + plugins, `plugin "a"'s module`},
		{"keys read-only", server, keys, ""},
		{"keys writable", server, "rw:" + keys, "a trusted signing key (trusted_keys)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.server + plugin + fmt.Sprintf("allowed_paths = { %q = \"/g\" }\n", tc.grant)
			_, err := Parse(cfgPath, []byte(text))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("a grant of %s was accepted", tc.grant)
			}
			t.Log(err)
			line := strings.Count(tc.server+plugin, "\n") + 1
			for _, w := range []string{tc.want, `plugin "a"`, fmt.Sprintf("%q", tc.grant), "allowed_paths", fmt.Sprintf("mcphost.toml:%d", line)} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
