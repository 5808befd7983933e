package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcphost/mcphost/internal/regularfile"
)

// lockFile records what the user accepted of each plugin: a fingerprint of
// every definition clients see — tools and prompts (name, title,
// description, schemas, annotations, arguments), resources and resource
// templates (URI, name, title, description, MIME type, annotations), and
// the skills a plugin ships (their front matter and every file's digest). A
// plugin whose definitions later change — a "rug pull", or tool poisoning
// slipped into an update — is caught on the next load: warned about, or
// held out with on_change = "refuse" until `mcphost plugin accept NAME`.
type lockFile struct {
	Version int                  `json:"version"`
	Plugins map[string]lockEntry `json:"plugins"`
	// Sources pins each plugin fetched by tag from a registry to the
	// manifest digest it resolved to (remote.go).
	Sources map[string]sourcePin `json:"sources,omitempty"`
}

// lockEntry is one plugin's accepted definitions by kind, each keyed by the
// name or URI clients use. Resources and Templates are nil in an entry
// written before they were recorded: they are recorded on the next load,
// as for a plugin met for the first time.
type lockEntry struct {
	Tools     map[string]string `json:"tools"`
	Prompts   map[string]string `json:"prompts"`
	Resources map[string]string `json:"resources"`
	Templates map[string]string `json:"templates"`
	// Skills are keyed by the URI of each skill's SKILL.md; nil in an
	// entry written before skills were recorded.
	Skills map[string]string `json:"skills"`
}

const lockVersion = 1

func fingerprint(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// fingerprints returns what clients would see of lp, fingerprinted.
func fingerprints(lp *loadedPlugin) lockEntry {
	e := lockEntry{Tools: map[string]string{}, Prompts: map[string]string{}, Resources: map[string]string{}, Templates: map[string]string{}, Skills: map[string]string{}}
	for _, t := range lp.tools {
		e.Tools[t.MCP.Name] = fingerprint(t.MCP)
	}
	for _, p := range lp.prompts {
		e.Prompts[p.Name] = fingerprint(p)
	}
	for _, r := range lp.resources {
		e.Resources[r.URI] = resourceFingerprint(lp, r) // an app's page too (apps.go)
	}
	for _, t := range lp.templates {
		e.Templates[t.URITemplate] = fingerprint(t)
	}
	for _, s := range lp.skills {
		entry := skillEntryOf(lp, s)
		e.Skills[entry.URI] = fingerprint(entry)
	}
	return e
}

// readLock reads the lock file; a missing file is an empty lock.
func readLock(path string) (*lockFile, error) {
	lock := &lockFile{Version: lockVersion, Plugins: map[string]lockEntry{}}
	b, err := regularfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return lock, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	if err := json.Unmarshal(b, lock); err != nil {
		return nil, fmt.Errorf("lock file %s is not valid: %w", path, err)
	}
	if lock.Version != lockVersion {
		return nil, fmt.Errorf("lock file %s has version %d; this host reads version %d", path, lock.Version, lockVersion)
	}
	if lock.Plugins == nil {
		lock.Plugins = map[string]lockEntry{}
	}
	return lock, nil
}

// write replaces the lock file atomically.
func (l *lockFile) write(path string) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcphost-lock-*")
	if err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write lock file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// held names, per plugin, the definitions clients must not see yet, as
// "kind key" ("tool send", "resource file:///a", …): changed, new, or
// removed since they were accepted. A held key stays reserved for its
// plugin (see buildCatalog): no other plugin may serve it meanwhile.
type held map[*loadedPlugin]map[string]bool

// heldKey splits a key of held into its kind and the name or URI.
func heldKey(k string) (kind, key string) {
	kind, key, _ = strings.Cut(k, " ")
	return kind, key
}

// vet compares each plugin's definitions with the lock file: a plugin met
// for the first time is recorded; a changed, new or removed definition of a
// known plugin is reported, and held out when its plugin says
// on_change = "refuse" — a removed one too, so that its name stays
// reserved for its plugin until the change is accepted, rather than pass
// to another plugin offering the same name. An unreadable lock file holds
// out every definition of refusing plugins (it fails closed). It returns
// what to hold and the errors to report; changes served anyway are only
// logged.
func (h *Host) vet(plugins []*loadedPlugin, path string) (held, []error) {
	out := held{}
	if path == "" {
		return out, nil
	}
	var problems []error
	lock, err := readLock(path)
	if err != nil {
		problems = append(problems, fmt.Errorf("%w (every definition of plugins with on_change = \"refuse\" is held out)", err))
	}
	dirty := false
	for _, lp := range plugins {
		if lock != nil && lp.remote != nil && lp.remote.pin != nil && lock.Sources[lp.cfg.Name] != *lp.remote.pin {
			if lock.Sources == nil {
				lock.Sources = map[string]sourcePin{}
			}
			lock.Sources[lp.cfg.Name] = *lp.remote.pin
			dirty = true
		}
		now := fingerprints(lp)
		var accepted lockEntry
		if lock != nil {
			var known bool
			if accepted, known = lock.Plugins[lp.cfg.Name]; !known {
				lock.Plugins[lp.cfg.Name] = now
				dirty = true
				h.logger.Info("plugin recorded in the lock file", "plugin", lp.cfg.Name, "lock", path)
				continue
			}
			// An entry from before resources and templates, or skills,
			// were recorded.
			if accepted.Resources == nil || accepted.Templates == nil || accepted.Skills == nil {
				if accepted.Resources == nil {
					accepted.Resources = now.Resources
				}
				if accepted.Templates == nil {
					accepted.Templates = now.Templates
				}
				if accepted.Skills == nil {
					accepted.Skills = now.Skills
				}
				lock.Plugins[lp.cfg.Name] = accepted
				dirty = true
				h.logger.Info("plugin's resources, templates or skills recorded in the lock file", "plugin", lp.cfg.Name, "lock", path)
			}
		}
		var changed []string
		hold := func(kind, key, what string) {
			changed = append(changed, what)
			if lp.cfg.OnChange != "refuse" {
				return
			}
			if out[lp] == nil {
				out[lp] = map[string]bool{}
			}
			out[lp][kind+" "+key] = true
		}
		for _, kind := range []struct {
			name        string
			now, before map[string]string
		}{
			{"tool", now.Tools, accepted.Tools},
			{"prompt", now.Prompts, accepted.Prompts},
			{"resource", now.Resources, accepted.Resources},
			{"template", now.Templates, accepted.Templates},
			{"skill", now.Skills, accepted.Skills},
		} {
			for key, fp := range kind.now {
				if kind.before[key] != fp {
					hold(kind.name, key, kind.name+" "+key)
				}
			}
			// With an unreadable lock (lock == nil) nothing is known to be
			// removed: every current definition is held already.
			for key := range kind.before {
				if _, ok := kind.now[key]; !ok {
					hold(kind.name, key, kind.name+" "+key+" (removed)")
				}
			}
		}
		if len(changed) == 0 {
			continue
		}
		sort.Strings(changed)
		if lp.cfg.OnChange != "refuse" {
			h.logger.Warn("plugin definitions differ from the ones accepted in the lock file; serving them (on_change = \"warn\")",
				"plugin", lp.cfg.Name, "changed", changed, "lock", path, "accept_with", "mcphost plugin accept "+lp.cfg.Name)
			continue
		}
		problems = append(problems, fmt.Errorf("plugin %q offers definitions that differ from the ones accepted in %s: %v; held out (on_change = \"refuse\") until `mcphost plugin accept %s`",
			lp.cfg.Name, path, changed, lp.cfg.Name))
	}
	if dirty && !h.readOnly {
		if err := lock.write(path); err != nil {
			problems = append(problems, err)
		}
	}
	return out, problems
}

// Accept records the current definitions of the named plugins (all when
// none is named) in the lock file, so that they are served; a running host
// watching the lock file reloads and serves them.
func (h *Host) Accept(names ...string) error {
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	path := h.cfg.Server.LockFile
	if path == "" {
		return errors.New("accept: the lock file is off ([server] lock_file = \"off\")")
	}
	lock, err := readLock(path)
	if err != nil {
		// An unreadable lock is replaced by what is accepted now.
		lock = &lockFile{Version: lockVersion, Plugins: map[string]lockEntry{}}
	}
	byName := map[string]*loadedPlugin{}
	for _, lp := range h.plugins {
		byName[lp.cfg.Name] = lp
	}
	if len(names) == 0 {
		for name := range byName {
			names = append(names, name)
		}
	}
	for _, name := range names {
		lp, ok := byName[name]
		if !ok {
			return fmt.Errorf("accept: no loaded plugin %q", name)
		}
		lock.Plugins[name] = fingerprints(lp)
	}
	return lock.write(path)
}
