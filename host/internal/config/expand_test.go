package config

import (
	"strings"
	"testing"
)

// TestConfigValuesExpandEnvironment: ${NAME} in a plugin's config value
// is the host's environment variable, with hyper-mcp's syntax (default,
// escape); an unset one is an error naming it and the key.
func TestConfigValuesExpandEnvironment(t *testing.T) {
	t.Setenv("MCPHOST_TEST_TOKEN", "s3cret")
	t.Setenv("MCPHOST_TEST_EMPTY", "")
	cfg, err := Parse("x.toml", []byte(`
[[plugin]]
name = "a"
path = "a.wasm"
[plugin.config]
token = "Bearer ${MCPHOST_TEST_TOKEN}"
fallback = "${MCPHOST_TEST_UNSET:-none}"
empty = "${MCPHOST_TEST_EMPTY:-default}"
literal = "$${MCPHOST_TEST_TOKEN} and ${not a reference}"
plain = "no references"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"token":    "Bearer s3cret",
		"fallback": "none",
		"empty":    "default",
		"literal":  "${MCPHOST_TEST_TOKEN} and ${not a reference}",
		"plain":    "no references",
	}
	for k, v := range want {
		if got := cfg.Plugins[0].Config[k]; got != v {
			t.Errorf("config.%s = %q, want %q", k, got, v)
		}
	}

	_, err = Parse("x.toml", []byte("[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nconfig = { key = \"${MCPHOST_TEST_UNSET_B}-${MCPHOST_TEST_UNSET_A}\" }\n"))
	if err == nil || !strings.Contains(err.Error(), `plugin "a": config.key: environment variable MCPHOST_TEST_UNSET_A, MCPHOST_TEST_UNSET_B is not set`) {
		t.Errorf("unset variable: %v", err)
	}
}

// TestNamingKey: naming = "hyper-mcp" is accepted with a name hyper-mcp
// accepts, and refused with a clear error otherwise.
func TestNamingKey(t *testing.T) {
	cfg, err := Parse("x.toml", []byte("[[plugin]]\nname = \"my_time\"\npath = \"a.wasm\"\nnaming = \"hyper-mcp\"\n[[plugin]]\nname = \"b\"\npath = \"b.wasm\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Plugins[0].Naming != NamingHyperMCP || cfg.Plugins[1].Naming != NamingPlugin {
		t.Errorf("naming = %q, %q", cfg.Plugins[0].Naming, cfg.Plugins[1].Naming)
	}
	for _, tc := range []struct{ text, want string }{
		{"naming = \"hyper\"", `naming: "hyper" is not one of plugin, hyper-mcp`},
		{"naming = \"hyper-mcp\"\nprefix = \"t_\"", "prefix and naming"},
	} {
		_, err := Parse("x.toml", []byte("[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"+tc.text+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.text, err, tc.want)
		}
	}
	_, err = Parse("x.toml", []byte("[[plugin]]\nname = \"my-time\"\npath = \"a.wasm\"\nnaming = \"hyper-mcp\"\n"))
	if err == nil || !strings.Contains(err.Error(), `name: "my-time" cannot be used with naming = "hyper-mcp"`) {
		t.Errorf("bad name: %v", err)
	}
}
