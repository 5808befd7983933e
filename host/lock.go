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
)

// lockFile records what the user accepted of each plugin: a fingerprint of
// every tool and prompt definition clients see (name, title, description,
// schemas, annotations, arguments). A plugin whose definitions later
// change — a "rug pull", or tool poisoning slipped into an update — is
// caught on the next load: warned about, or held out with on_change =
// "refuse" until `mcphost plugin accept NAME`.
type lockFile struct {
	Version int                  `json:"version"`
	Plugins map[string]lockEntry `json:"plugins"`
}

type lockEntry struct {
	Tools   map[string]string `json:"tools"`
	Prompts map[string]string `json:"prompts"`
}

const lockVersion = 1

func fingerprint(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// fingerprints returns what clients would see of lp, fingerprinted.
func fingerprints(lp *loadedPlugin) lockEntry {
	e := lockEntry{Tools: map[string]string{}, Prompts: map[string]string{}}
	for _, t := range lp.tools {
		e.Tools[t.MCP.Name] = fingerprint(t.MCP)
	}
	for _, p := range lp.prompts {
		e.Prompts[p.Name] = fingerprint(p)
	}
	return e
}

// readLock reads the lock file; a missing file is an empty lock.
func readLock(path string) (*lockFile, error) {
	lock := &lockFile{Version: lockVersion, Plugins: map[string]lockEntry{}}
	b, err := os.ReadFile(path)
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

// held names what a plugin offers but clients must not see yet.
type held map[*loadedPlugin]map[string]bool

func (h held) has(lp *loadedPlugin, kind, name string) bool { return h[lp][kind+" "+name] }

// vet compares each plugin's definitions with the lock file: a plugin met
// for the first time is recorded; a changed or new tool or prompt of a
// known plugin is reported, and held out when its plugin says
// on_change = "refuse". An unreadable lock file holds out every
// definition of refusing plugins (it fails closed). It returns what to
// hold and the errors to report; changes served anyway are only logged.
func (h *Host) vet(plugins []*loadedPlugin, path string) (held, []error) {
	out := held{}
	if path == "" {
		return out, nil
	}
	var problems []error
	lock, err := readLock(path)
	if err != nil {
		problems = append(problems, fmt.Errorf("%w (every tool and prompt of plugins with on_change = \"refuse\" is held out)", err))
	}
	dirty := false
	for _, lp := range plugins {
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
		}
		var changed []string
		for _, kind := range []struct {
			name        string
			now, before map[string]string
		}{{"tool", now.Tools, accepted.Tools}, {"prompt", now.Prompts, accepted.Prompts}} {
			for name, fp := range kind.now {
				if kind.before[name] == fp {
					continue
				}
				changed = append(changed, kind.name+" "+name)
				if lp.cfg.OnChange == "refuse" {
					if out[lp] == nil {
						out[lp] = map[string]bool{}
					}
					out[lp][kind.name+" "+name] = true
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
	if dirty {
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
