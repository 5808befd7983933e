package config

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Profile is one [[profile]] table: a named subset of what the host
// serves, with its own endpoint (/mcp/{name} over HTTP, serve --profile
// over stdio).
type Profile struct {
	// Name is the profile's name, also the last segment of its URL path.
	Name string
	// Plugins are the plugins whose every tool, resource, resource
	// template and prompt the profile serves.
	Plugins []string
	// Tools are further tools the profile serves, each a tool's name as
	// the host serves it (after the plugin's prefix) or a glob of such
	// names (path.Match syntax: *, ?, [...]).
	Tools []string
	// Prefix is prepended to the name of every tool the profile serves
	// that Rename does not name.
	Prefix string
	// Rename gives tools another name in this profile, keyed by the
	// tool's name as the host serves it.
	Rename map[string]string
	// Scopes are the OAuth scopes a token needs for any request through
	// this profile (enforced over HTTP with [server.auth]), on top of
	// the plugins' own.
	Scopes []string
	// Search serves, instead of the profile's tools, two tools:
	// search_tools, which searches them, and call_tool, which calls a
	// tool found that way as a direct call would (host/search.go).
	Search bool
}

// Selects reports whether p serves the tool the host serves as name,
// offered by plugin.
func (p *Profile) Selects(plugin, name string) bool {
	if slices.Contains(p.Plugins, plugin) {
		return true
	}
	for _, pattern := range p.Tools {
		if ok, _ := path.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

// ServedName is the name under which p serves the tool the host serves
// as name: its Rename, else Prefix + name.
func (p *Profile) ServedName(name string) string {
	if to, ok := p.Rename[name]; ok {
		return to
	}
	return p.Prefix + name
}

type fileProfile struct {
	Name    string            `toml:"name"`
	Plugins []string          `toml:"plugins"`
	Tools   []string          `toml:"tools"`
	Prefix  string            `toml:"prefix"`
	Rename  map[string]string `toml:"rename"`
	Scopes  []string          `toml:"scopes"`
	Search  bool              `toml:"search"`
}

var profileKeys = []string{"name", "plugins", "tools", "prefix", "rename", "scopes", "search"}

// validToolName is what a tool name may look like in MCP (2025-11-25:
// 1 to 128 of A-Z a-z 0-9 _ - .).
var validToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// convertProfile checks the [[profile]] table number index and converts
// it; plugins are the names of the configured plugins. Every problem
// names the file, line, profile and key.
func convertProfile(path string, idx lineIndex, index int, fp fileProfile, plugins map[string]bool) (Profile, []error) {
	var problems []error
	where := fmt.Sprintf("[[profile]] #%d", index+1)
	if fp.Name != "" {
		where = fmt.Sprintf("profile %q", fp.Name)
	}
	bad := func(key, format string, args ...any) {
		at := idx.at(path, fmt.Sprintf("profile.%d.%s", index, key))
		problems = append(problems, fmt.Errorf("%s: %s: %s: %s", at, where, key, fmt.Sprintf(format, args...)))
	}
	switch {
	case fp.Name == "":
		bad("name", "missing (every [[profile]] needs a name: it is served at /mcp/{name})")
	case !validName.MatchString(fp.Name):
		bad("name", "%q is not a valid name (letters, digits, '_', '-', '.'; at most 64; starting with a letter or digit: it is a URL path segment)", fp.Name)
	}
	if len(fp.Plugins) == 0 && len(fp.Tools) == 0 {
		bad("plugins", "the profile serves nothing: name plugins, tools (names or globs), or both")
	}
	for _, name := range fp.Plugins {
		if !plugins[name] {
			bad("plugins", "no [[plugin]] is named %q", name)
		}
	}
	for _, pattern := range fp.Tools {
		if !validGlob(pattern) {
			bad("tools", "%q is not a tool name or glob (path.Match syntax: *, ?, [a-z])", pattern)
		}
	}
	if fp.Prefix != "" && !validPrefix.MatchString(fp.Prefix) {
		bad("prefix", "%q is not a valid tool-name prefix (letters, digits, '_', '-', '.'; at most 64)", fp.Prefix)
	}
	targets := map[string]string{}
	for _, from := range sortedKeys(fp.Rename) {
		to := fp.Rename[from]
		if !validToolName.MatchString(to) {
			bad("rename."+from, "%q is not a valid tool name (letters, digits, '_', '-', '.'; at most 128)", to)
		}
		if fp.Search && (to == "search_tools" || to == "call_tool") {
			bad("rename."+from, "%q is the name of one of the built-in tools of a search profile (search_tools, call_tool): two tools cannot share a name", to)
		}
		if other, ok := targets[to]; ok {
			bad("rename."+from, "%q is also the new name of %q: two tools cannot share a name", to, other)
		}
		targets[to] = from
	}
	for _, sc := range fp.Scopes {
		if !validScopeToken(sc) {
			bad("scopes", "%q is not an OAuth scope (printable ASCII, no spaces, quotes or backslashes)", sc)
		}
	}
	return Profile{
		Name: fp.Name, Plugins: fp.Plugins, Tools: fp.Tools, Prefix: fp.Prefix,
		Rename: fp.Rename, Scopes: fp.Scopes, Search: fp.Search,
	}, problems
}

// validGlob reports whether pattern is a tool name or a glob of them:
// path.Match syntax (which it checks whole, whatever it is matched
// against), and no '/', which no tool name has.
func validGlob(pattern string) bool {
	_, err := path.Match(pattern, "")
	return pattern != "" && err == nil && !strings.Contains(pattern, "/")
}

// validScopeToken reports whether scope is an RFC 6749 §3.3 scope-token:
// 1*( %x21 / %x23-5B / %x5D-7E ).
func validScopeToken(scope string) bool {
	ok := scope != ""
	for _, r := range scope {
		ok = ok && r >= 0x21 && r <= 0x7e && r != '"' && r != '\\'
	}
	return ok
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ProfileNamed returns the profile of cfg named name, or nil.
func (c *Config) ProfileNamed(name string) *Profile {
	for i := range c.Profiles {
		if c.Profiles[i].Name == name {
			return &c.Profiles[i]
		}
	}
	return nil
}
