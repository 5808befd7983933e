package config

import (
	"strings"
	"testing"
)

const profilePlugins = `
[[plugin]]
name = "a"
path = "/a.wasm"
[[plugin]]
name = "b"
path = "/b.wasm"
`

func TestParseProfiles(t *testing.T) {
	cfg, err := Parse("/etc/mcphost.toml", []byte(profilePlugins+`
[[profile]]
name = "research"
plugins = ["a"]
tools = ["b_*", "fetch"]
prefix = "r_"
rename = { fetch = "web_fetch" }
scopes = ["research"]
search = true
`))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.ProfileNamed("research")
	if p == nil || len(cfg.Profiles) != 1 || !p.Search {
		t.Fatalf("profiles = %+v", cfg.Profiles)
	}
	for _, tc := range []struct {
		plugin, name string
		want         bool
	}{{"a", "anything", true}, {"b", "b_x", true}, {"b", "fetch", true}, {"b", "c_x", false}} {
		if got := p.Selects(tc.plugin, tc.name); got != tc.want {
			t.Errorf("Selects(%s, %s) = %v", tc.plugin, tc.name, got)
		}
	}
	if p.ServedName("fetch") != "web_fetch" || p.ServedName("b_x") != "r_b_x" {
		t.Errorf("served names: %s, %s", p.ServedName("fetch"), p.ServedName("b_x"))
	}
}

func TestParseProfileErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no name", `plugins = ["a"]`, `[[profile]] #1: name: missing`},
		{"bad name", "name = \"a/b\"\nplugins = [\"a\"]", `profile "a/b": name: "a/b" is not a valid name`},
		{"nothing", `name = "p"`, `profile "p": plugins: the profile serves nothing`},
		{"unknown plugin", "name = \"p\"\nplugins = [\"zz\"]", `mcphost.toml:11: profile "p": plugins: no [[plugin]] is named "zz"`},
		{"bad glob", "name = \"p\"\ntools = [\"a[\"]", `profile "p": tools: "a[" is not a tool name or glob`},
		{"bad prefix", "name = \"p\"\nplugins = [\"a\"]\nprefix = \"a b\"", `profile "p": prefix: "a b" is not a valid tool-name prefix`},
		{"bad rename", "name = \"p\"\nplugins = [\"a\"]\nrename = { x = \"a b\" }", `profile "p": rename.x: "a b" is not a valid tool name`},
		{"rename clash", "name = \"p\"\nplugins = [\"a\"]\nrename = { x = \"y\", z = \"y\" }", `profile "p": rename.z: "y" is also the new name of "x"`},
		{"search rename to a built-in", "name = \"p\"\nplugins = [\"a\"]\nsearch = true\nrename = { x = \"call_tool\" }", `profile "p": rename.x: "call_tool" is the name of one of the built-in tools of a search profile (search_tools, call_tool)`},
		{"bad scope", "name = \"p\"\nplugins = [\"a\"]\nscopes = [\"a b\"]", `profile "p": scopes: "a b" is not an OAuth scope`},
		{"unknown key", "name = \"p\"\nplugins = [\"a\"]\nplugin = \"a\"", `unknown key "plugin" in [[profile]] (expected one of: name, plugins, tools`},
		{"wrong type", "name = \"p\"\nplugins = \"a\"", `profile "p": plugins: want a list`},
		{"twice", "name = \"p\"\nplugins = [\"a\"]\n[[profile]]\nname = \"p\"\nplugins = [\"b\"]", `[[profile]] #2: name "p" is used by an earlier profile`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("/etc/mcphost.toml", []byte(profilePlugins+"\n[[profile]]\n"+tc.text+"\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to contain %s", err, tc.want)
			}
		})
	}
}
