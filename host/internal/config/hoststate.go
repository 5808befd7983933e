package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The host's own state (its config, lock file, caches, plugin store and
// audit log) must be out of every plugin's reach: a plugin that could
// write the compilation cache would run its native code in the host, one
// that could write the lock file would accept its own changed
// definitions, and one that could read the config would read every other
// plugin's secrets. So a config whose allowed_paths reach any of it is
// refused, by every command that reads a config (serve, validate, a
// reload, plugin accept, plugin update). SECURITY.md states the rule and
// why; docs/config.md lists what is protected.

// DefaultCacheDir is the compilation cache's directory when cache_dir is
// not set: wazero's code under the user cache directory. The description
// cache is inside it, and the default plugin store beside it.
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "mcphost", "wazero"), nil
}

// stateItem is one file or directory of the host's state.
type stateItem struct {
	path string // absolute, as configured
	// what names it in messages ("the lock file (lock_file)").
	what string
	// readable: a read-only grant may hold it (plugin modules and public
	// keys: code and keys that are no secret, whose integrity is what
	// matters).
	readable bool
}

// hostState lists the host's state as cfg configures it.
func hostState(cfg *Config) []stateItem {
	var items []stateItem
	add := func(path, what string, readable bool) {
		if path != "" {
			items = append(items, stateItem{path: path, what: what, readable: readable})
		}
	}
	add(cfg.Path, "the config file", false)
	add(cfg.Server.LockFile, "the lock file (lock_file)", false)
	switch dir := cfg.Server.CacheDir; dir {
	case "", "off":
		// The default compilation cache and the default plugin store
		// (even with cache_dir = "off") are both under the user cache
		// directory's mcphost.
		if def, err := DefaultCacheDir(); err == nil {
			add(filepath.Dir(def), "the default compilation cache and plugin store (cache_dir and plugin_store unset)", false)
		}
	default:
		add(dir, "the compilation and description cache (cache_dir)", false)
	}
	add(cfg.Server.PluginStore, "the plugin store (plugin_store)", false)
	if f := cfg.Server.Audit.File; f != "stderr" {
		add(f, "the audit log ([server.audit] file)", false)
	}
	add(cfg.Server.Auth.KeyFile, "the token verification key ([server.auth] key_file)", true)
	for _, k := range cfg.Server.TrustedKeys {
		add(k, "a trusted signing key (trusted_keys)", true)
	}
	add(cfg.Server.TrustedRoot, "the Sigstore trusted root (trusted_root)", true)
	for _, p := range cfg.Plugins {
		if p.Source == "" {
			add(p.Path, fmt.Sprintf("plugin %q's module", p.Name), true)
		}
		for _, k := range p.TrustedKeys {
			add(k, fmt.Sprintf("plugin %q's trusted signing key (trusted_keys)", p.Name), true)
		}
		add(p.TrustedRoot, fmt.Sprintf("plugin %q's Sigstore trusted root (trusted_root)", p.Name), true)
	}
	return items
}

// CheckStateGrants refuses cfg when a plugin's allowed_paths reach the
// host's state: a grant (read-only or writable) that holds, or lies
// within, the config file, the lock file, the compilation and description
// cache, the plugin store or the audit log; a writable grant that holds a
// plugin's module or a key the host trusts. Paths are compared absolute,
// with symbolic links resolved as far as they exist. Each error names the
// plugin, the grant and what it would expose.
func CheckStateGrants(cfg *Config) error {
	return errors.Join(stateProblems(cfg, func(int) string { return "" })...)
}

// stateProblems is CheckStateGrants' list, each error prefixed with
// at(index of the plugin) when that is not "".
func stateProblems(cfg *Config, at func(int) string) []error {
	state := hostState(cfg)
	resolved := make([]string, len(state))
	for i, s := range state {
		resolved[i] = resolve(s.path)
	}
	var problems []error
	for i, p := range cfg.Plugins {
		for _, g := range grantsOf(p) {
			dir := resolve(g.dir)
			for j, s := range state {
				if s.readable && !g.writable {
					continue
				}
				var how string
				switch {
				case within(resolved[j], dir):
					how = "holds"
				case within(dir, resolved[j]):
					how = "lies within"
				default:
					continue
				}
				access := "read"
				switch {
				case s.readable:
					access = "change" // matched by a writable grant only
				case g.writable:
					access = "read or write"
				}
				where := at(i)
				if where != "" {
					where += ": "
				}
				problems = append(problems, fmt.Errorf("%splugin %q: allowed_paths: %q %s %s %s, which no plugin may %s; grant a directory that holds none of the host's own state",
					where, p.Name, g.key(), how, s.what, shown(s.path, resolved[j]), access))
			}
		}
	}
	return problems
}

// grant is one allowed_paths entry of a plugin.
type grant struct {
	dir      string
	writable bool
}

// key is the grant as allowed_paths writes it.
func (g grant) key() string {
	if g.writable {
		return "rw:" + g.dir
	}
	return g.dir
}

// grantsOf returns p's grants, sorted.
func grantsOf(p Plugin) []grant {
	var gs []grant
	for dir := range p.AllowedPaths {
		gs = append(gs, grant{dir: dir})
	}
	for dir := range p.WritablePaths {
		gs = append(gs, grant{dir: dir, writable: true})
	}
	slices.SortFunc(gs, func(a, b grant) int { return strings.Compare(a.key(), b.key()) })
	return gs
}

// shown is path, with what it resolves to when that differs.
func shown(path, resolved string) string {
	if filepath.Clean(path) == resolved {
		return resolved
	}
	return fmt.Sprintf("%s (%s)", path, resolved)
}

// resolve makes path absolute and resolves its symbolic links as far as it
// exists: a file not made yet (a lock file, a cache) is its nearest
// existing directory, resolved, and the rest of the path.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for dir := abs; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return abs // unreadable: compared as written
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}
