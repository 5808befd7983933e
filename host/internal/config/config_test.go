package config

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseFullConfig(t *testing.T) {
	cfg, err := Parse("/etc/mcphost/mcphost.toml", []byte(`
[server]
name = "my-host"
log_level = "DEBUG"
drain_delay = "3s"

[server.metrics]
enabled = true
listen = "127.0.0.1:9464"

[server.audit]
file = "audit.jsonl"

[[plugin]]
name = "hello"
path = "plugins/hello.wasm"
timeout = "1500ms"
memory_mb = 64
max_instances = 3
max_output_kb = 100
max_items = 50
config = { greeting = "Hi", other = "x" }

[[plugin]]
name = "abs"
path = "/opt/abs.wasm"
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Name != "my-host" || cfg.Server.LogLevel != "debug" {
		t.Errorf("server = %+v", cfg.Server)
	}
	if !cfg.Server.Metrics.Enabled || cfg.Server.Metrics.Listen != "127.0.0.1:9464" || cfg.Server.DrainDelay != 3*time.Second {
		t.Errorf("metrics, drain_delay = %+v, %v", cfg.Server.Metrics, cfg.Server.DrainDelay)
	}
	if cfg.Server.Audit.File != "/etc/mcphost/audit.jsonl" || cfg.Server.Audit.Arguments {
		t.Errorf("audit = %+v, want the file beside the config and no arguments", cfg.Server.Audit)
	}
	if len(cfg.Plugins) != 2 {
		t.Fatalf("plugins = %+v", cfg.Plugins)
	}
	p := cfg.Plugins[0]
	if p.Path != "/etc/mcphost/plugins/hello.wasm" {
		t.Errorf("relative path resolved to %q, want it beside the config", p.Path)
	}
	if p.Timeout != 1500*time.Millisecond || p.MemoryMB != 64 || p.MaxInstances != 3 || p.MaxOutputKB != 100 || p.MaxItems != 50 {
		t.Errorf("plugin limits = %+v", p)
	}
	if p.Config["greeting"] != "Hi" || len(p.Config) != 2 {
		t.Errorf("plugin config = %v", p.Config)
	}
	d := cfg.Plugins[1]
	if d.Path != "/opt/abs.wasm" || d.Timeout != DefaultTimeout || d.MemoryMB != DefaultMemoryMB || d.MaxOutputKB != DefaultMaxOutputKB || d.MaxItems != DefaultMaxItems {
		t.Errorf("defaults not applied: %+v", d)
	}
}

func TestParseErrorsNameTheProblem(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"unknown plugin key", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\ntimout = \"1s\"\n",
			[]string{"x.toml:4", `unknown key "timout"`, "[[plugin]]", "timeout"}},
		{"unknown server key", "[server]\nnmae = \"x\"\n", []string{"x.toml:2", `unknown key "nmae"`, "[server]"}},
		{"unknown table", "[serve]\nname = \"x\"\n", []string{`unknown key "serve"`, "top level"}},
		{"bad duration", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\ntimeout = \"10 seconds\"\n",
			[]string{`plugin "a"`, "timeout", `"10 seconds" is not a duration`}},
		{"negative duration", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\ntimeout = \"-1s\"\n", []string{"greater than zero"}},
		{"missing name", "[[plugin]]\npath = \"a.wasm\"\n", []string{"[[plugin]] #1", "name: missing"}},
		{"missing path", "[[plugin]]\nname = \"a\"\n", []string{`plugin "a"`, "path: missing"}},
		{"bad name", "[[plugin]]\nname = \"a b\"\npath = \"a.wasm\"\n", []string{"not a valid name"}},
		{"duplicate name", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n[[plugin]]\nname = \"a\"\npath = \"b.wasm\"\n", []string{"used by an earlier plugin"}},
		{"memory out of range", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nmemory_mb = 100000\n", []string{"memory_mb", "out of range"}},
		{"max_items out of range", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nmax_items = 0\n", []string{"max_items", "out of range"}},
		{"wrong type", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nmemory_mb = \"big\"\n", []string{"x.toml", "memory_mb"}},
		{"bad log level", "[server]\nlog_level = \"loud\"\n", []string{"log_level", `"loud"`}},
		{"toml syntax", "[[plugin]\nname = \"a\"\n", []string{"x.toml:", "delimiter"}},
		{"unknown metrics key", "[server.metrics]\nenable = true\n", []string{"x.toml:2", `unknown key "enable"`, "[server.metrics]", "enabled, listen"}},
		{"metrics listen without enabled", "[server.metrics]\nlisten = \"127.0.0.1:9464\"\n", []string{"[server.metrics]", "enabled is not true"}},
		{"metrics listen not host:port", "[server.metrics]\nenabled = true\nlisten = \"9464\"\n", []string{"[server.metrics] listen", "not host:port"}},
		{"audit arguments without file", "[server.audit]\narguments = true\n", []string{"[server.audit]", "needs file"}},
		{"auth without audience", "[server.auth]\nissuer = \"https://issuer.example.com\"\njwks_url = \"https://issuer.example.com/jwks\"\n", []string{"x.toml", "server.auth.audience: required"}},
		{"unknown auth key", "[server.auth]\nissuer = \"https://i.example.com\"\nisuer = \"x\"\n", []string{`unknown key "isuer"`, "[server.auth]", "issuer, audience"}},
		{"bad plugin scope", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nscopes = [\"two words\"]\n", []string{"scopes", "not an OAuth scope"}},
		{"bad drain delay", "[server]\ndrain_delay = \"soon\"\n", []string{"drain_delay", "not a duration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.toml", []byte(tc.text))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	_, err := Parse("x.toml", []byte("[[plugin]]\nname = \"a\"\ntimeout = \"x\"\nmemory_mb = 0\n"))
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	for _, w := range []string{"path: missing", "timeout", "memory_mb"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.toml"))
	if err == nil || !strings.Contains(err.Error(), "nope.toml") || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("Load(missing) = %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// TestParseAllowedPathsReadOnlyAndWritable: a host directory is read-only
// unless its key has the "rw:" prefix ("ro:" is the explicit default);
// relative directories are resolved beside the config, and one guest path
// cannot be mounted twice.
func TestParseAllowedPathsReadOnlyAndWritable(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"data", "scratch", "docs"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(dir, "mcphost.toml")
	plugin := "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"
	cfg, err := Parse(cfgPath, []byte(plugin+`allowed_paths = { "./data" = "/data", "rw:./scratch" = "/scratch/", "ro:docs" = "/docs" }`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Plugins[0]
	wantRO := map[string]string{filepath.Join(dir, "data"): "/data", filepath.Join(dir, "docs"): "/docs"}
	wantRW := map[string]string{filepath.Join(dir, "scratch"): "/scratch"}
	if !maps.Equal(p.AllowedPaths, wantRO) || !maps.Equal(p.WritablePaths, wantRW) {
		t.Errorf("read-only %v, writable %v; want %v, %v", p.AllowedPaths, p.WritablePaths, wantRO, wantRW)
	}

	for _, tc := range []struct{ paths, want string }{
		{`{ "rw:./missing" = "/m" }`, "is not a directory"},
		{`{ "rw:./scratch" = "scratch" }`, "must be absolute"},
		{`{ "./data" = "/x", "rw:./scratch" = "/x/" }`, `both mounted at "/x"`},
	} {
		if _, err := Parse(cfgPath, []byte(plugin+"allowed_paths = "+tc.paths+"\n")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("allowed_paths = %s: %v, want %q", tc.paths, err, tc.want)
		}
	}
}

// TestParseErrorsGiveTheLine: every problem with a value names the file
// and the line of its key — in the second [[plugin]] too — and a value of
// the wrong type is told in words, not in the TOML library's.
func TestParseErrorsGiveTheLine(t *testing.T) {
	two := "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\ntimeout = \"1s\"\n\n[[plugin]]\nname = \"b\"\npath = \"b.wasm\"\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"bad duration", two + "timeout = \"soon\"\n",
			`x.toml:9: plugin "b": timeout: "soon" is not a duration`},
		{"duration as a number", two + "timeout = 5\n",
			`x.toml:9: plugin "b": timeout: want a duration like "5s", got 5`},
		{"number as a string", two + "memory_mb = \"big\"\n",
			`x.toml:9: plugin "b": memory_mb: want a whole number, got "big"`},
		{"list of the wrong items", two + "allowed_hosts = [\"a.example.com\", 7]\n",
			`x.toml:9: plugin "b": allowed_hosts: want a list like ["a", "b"] (item 2 is 7), got a list`},
		{"config value not a string", two + "[plugin.config]\nport = 8080\n",
			`x.toml:10: plugin "b": config.port: want a string, got 8080`},
		{"unnamed plugin", "[[plugin]]\npath = \"a.wasm\"\nmax_items = true\n",
			`x.toml:3: [[plugin]] #1: max_items: want a whole number, got true`},
		{"server duration", "[server]\nname = \"x\"\ndrain_delay = \"later\"\n",
			`x.toml:3: [server] drain_delay: "later" is not a duration`},
		{"server bool", "[server]\nwatch = \"yes\"\n",
			`x.toml:2: [server] watch: want true or false, got "yes"`},
		{"auth duration as a number", "[server.auth]\nissuer = \"https://i.example.com\"\nclock_skew = 30\n",
			`x.toml:3: [server.auth] clock_skew: want a duration like "30s", got 30`},
		{"auth duration text", "[server.auth]\nissuer = \"https://i.example.com\"\nclock_skew = \"soon\"\n",
			`x.toml:3: [server.auth] clock_skew: "soon" is not a duration`},
		{"range", two + "max_instances = 0\n", `x.toml:9: plugin "b": max_instances: 0 is out of range`},
		{"idle timeout", two + "idle_timeout = \"-1s\"\n", `x.toml:9: plugin "b": idle_timeout: "-1s" must not be negative`},
		{"min over max", two + "max_instances = 2\nmin_instances = 3\n", `x.toml:10: plugin "b": min_instances: 3 is more than max_instances (2)`},
		{"log level", "\n[server]\nlog_level = \"loud\"\n", `x.toml:3: [server] log_level: "loud"`},
		{"duplicate name", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n[[plugin]]\nname = \"a\"\npath = \"b.wasm\"\n",
			`x.toml:5: [[plugin]] #2: name "a" is used by an earlier plugin`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.toml", []byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant it to contain %s", err, tc.want)
			}
		})
	}
}

func TestIdleTimeoutDefaultsAndZero(t *testing.T) {
	cfg, err := Parse("x.toml", []byte("[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n[[plugin]]\nname = \"b\"\npath = \"b.wasm\"\nidle_timeout = \"0\"\nmin_instances = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cfg.Plugins[0], cfg.Plugins[1]; a.IdleTimeout != DefaultIdleTimeout || a.MinInstances != 0 || b.IdleTimeout != 0 || b.MinInstances != 1 {
		t.Errorf("idle_timeout/min_instances: a %v/%d, b %v/%d; want the default/0 and 0/1", a.IdleTimeout, a.MinInstances, b.IdleTimeout, b.MinInstances)
	}
}

// TestParseAllowedPathsExpandsHome: "~" at the start of either side of an
// allowed_paths entry is the home directory of the user running mcphost,
// so a directory can be mounted at the path it has on the host; "~user"
// is left as it is, and "~" alone, which holds the default cache, is
// refused as any grant of the host's state is.
func TestParseAllowedPathsExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, d := range []string{"notes", "docs"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(t.TempDir(), "mcphost.toml")
	plugin := "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"
	cfg, err := Parse(cfgPath, []byte(plugin+`allowed_paths = { "rw:~/notes" = "~/notes", "~/docs" = "/docs" }`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Plugins[0]
	notes := filepath.Join(home, "notes")
	if want := map[string]string{notes: notes}; !maps.Equal(p.WritablePaths, want) {
		t.Errorf("writable %v, want %v", p.WritablePaths, want)
	}
	if want := map[string]string{filepath.Join(home, "docs"): "/docs"}; !maps.Equal(p.AllowedPaths, want) {
		t.Errorf("read-only %v, want %v", p.AllowedPaths, want)
	}
	for _, tc := range []struct{ paths, want string }{
		{`{ "~nobody/x" = "/x" }`, "is not a directory"},
		{`{ "rw:~/notes" = "~other/notes" }`, "must be absolute"},
		// The home directory holds the default cache: never granted whole.
		{`{ "~" = "/home" }`, "holds the default compilation cache"},
	} {
		if _, err := Parse(cfgPath, []byte(plugin+"allowed_paths = "+tc.paths+"\n")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("allowed_paths = %s: %v, want %q", tc.paths, err, tc.want)
		}
	}
}
