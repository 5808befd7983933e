package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// grantsConfig serves plugin.wasm, granted %s, with its cache in %s.
const grantsConfig = `
[server]
watch = false
cache_dir = %q
lock_file = "off"

[[plugin]]
name = "p"
path = "plugin.wasm"
allowed_paths = { %q = "/g" }
`

// TestReloadToAGrantOfTheHostsStateIsRefused: a reload to a config that
// grants a plugin the host's cache is not applied: the previous config
// keeps serving, and the error (returned and logged) names the plugin, the
// grant and the cache. That holds when the new file also moves cache_dir
// elsewhere (a [server] change applies on restart only, so the running
// host's cache is still the one granted).
func TestReloadToAGrantOfTheHostsStateIsRefused(t *testing.T) {
	dir := t.TempDir()
	data, cache, other := filepath.Join(dir, "data"), filepath.Join(dir, "cache"), filepath.Join(dir, "other-cache")
	for _, d := range []string{data, cache, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), testutil.WAT(t, testutil.WATPlugin{
		Tools: `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`,
	}.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "mcphost.toml")
	write := func(cacheDir, grant string) {
		if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(grantsConfig, cacheDir, grant)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(cache, data)
	h := startIn(t, dir)
	callText(t, h.session, "a", map[string]any{})

	for _, tc := range []struct{ name, cacheDir, grant string }{
		{"grant of the cache", cache, "rw:" + cache},
		{"grant of the running cache, cache_dir moved", other, cache},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(tc.cacheDir, tc.grant)
			err := h.host.Reload(t.Context())
			if err == nil {
				t.Fatal("the reload was applied")
			}
			for _, w := range []string{`plugin "p"`, fmt.Sprintf("%q", tc.grant), "cache_dir", "still serving the previous one"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
			if !strings.Contains(h.log.String(), "config not applied") || !strings.Contains(h.log.String(), tc.grant) {
				t.Errorf("the log does not say the reload was refused, naming %s", tc.grant)
			}
			for _, p := range h.host.Plugins() {
				if p.Name == "p" && strings.Contains(strings.Join(p.Grants, " "), cache) {
					t.Errorf("the refused grant is in force: %v", p.Grants)
				}
			}
			callText(t, h.session, "a", map[string]any{})
		})
	}
}

// TestNewRefusesAConfigMadeInCode: host.New holds a config changed after
// it was parsed to the same rule as the file: here a lock file moved into
// the plugin's writable grant.
func TestNewRefusesAConfigMadeInCode(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), testutil.WAT(t, testutil.WATPlugin{
		Tools: `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`,
	}.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(grantsConfig, filepath.Join(dir, "cache"), "rw:"+data)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.LockFile = filepath.Join(data, "mcphost.lock")
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.NewNullLogger()})
	if err == nil {
		h.Close(context.Background())
		t.Fatal("host.New accepted a lock file inside a writable grant")
	}
	if !strings.Contains(err.Error(), "the lock file") || !strings.Contains(err.Error(), `plugin "p"`) {
		t.Errorf("error: %v", err)
	}
}
