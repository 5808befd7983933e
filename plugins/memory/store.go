package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"time"
)

// configKey is the plugin config key (and the reference's environment
// variable) naming the memory file.
const configKey = "MEMORY_FILE_PATH"

// defaultDir is the directory, as the plugin sees it, of the default
// memory file and of a relative MEMORY_FILE_PATH: the reference uses the
// directory of its own script, which a plugin does not have, so a grant
// mounted at /memory plays that part.
const defaultDir = "/memory"

// Locking (README.md, "One writer at a time"): a writer holds
// <file>.lock, created with O_CREATE|O_EXCL and holding a random token,
// around its read-modify-write. A lock older than staleAfter was left by a
// writer that died (a call lives at most the plugin's timeout, 30 s by
// default): it is broken. A writer that cannot take the lock within
// lockWait fails with an error naming the lock file.
const (
	defaultStaleAfter = 60 * time.Second
	lockWait          = 10 * time.Second
	staleKey          = "MEMORY_LOCK_STALE_AFTER" // optional config: a Go duration
)

// store is the memory file of one call's configuration.
type store struct {
	file       string // the memory file, as the plugin sees it
	setting    string // MEMORY_FILE_PATH as configured ("" when unset)
	staleAfter time.Duration
}

// openStore resolves MEMORY_FILE_PATH (config) as the reference resolves
// its environment variable: unset or empty means memory.jsonl in the
// default directory, with a legacy memory.json there renamed to it first;
// a relative path is taken from the default directory.
func openStore(config func(string) (string, bool)) (*store, error) {
	s := &store{staleAfter: defaultStaleAfter}
	if v, ok := config(staleKey); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("config %s %q: not a positive duration such as \"60s\"", staleKey, v)
		}
		s.staleAfter = d
	}
	s.setting, _ = config(configKey)
	switch {
	case s.setting == "":
		s.file = path.Join(defaultDir, "memory.jsonl")
	case path.IsAbs(s.setting):
		s.file = path.Clean(s.setting)
	default:
		s.file = path.Join(defaultDir, s.setting)
	}
	return s, nil
}

// describe names the file for errors: the setting and, when it differs,
// what it resolved to.
func (s *store) describe() string {
	switch {
	case s.setting == "":
		return fmt.Sprintf("%s (unset: %s)", configKey, s.file)
	case s.setting != s.file:
		return fmt.Sprintf("%s %q (%s)", configKey, s.setting, s.file)
	}
	return fmt.Sprintf("%s %q", configKey, s.file)
}

// grantError is the error for a directory the plugin cannot reach.
func (s *store) grantError(err error) error {
	return fmt.Errorf("%s: its directory %s is not inside a directory granted to this plugin (allowed_paths; \"rw:\" to write): %v",
		s.describe(), path.Dir(s.file), plainErr(err))
}

// writeError is the error for a directory the plugin cannot write in.
func (s *store) writeError(err error) error {
	return fmt.Errorf("%s: cannot write in %s (it must lie inside a \"rw:\" grant of allowed_paths): %v",
		s.describe(), path.Dir(s.file), plainErr(err))
}

// plainErr drops the path an *fs.PathError repeats.
func plainErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", pe.Op, pe.Path, pe.Err)
	}
	return err
}

// checkDir fails unless the file's directory is reachable.
func (s *store) checkDir() error {
	fi, err := os.Stat(path.Dir(s.file))
	if err != nil {
		return s.grantError(err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", s.describe(), path.Dir(s.file))
	}
	return nil
}

// load reads the graph; a missing file is an empty graph. The file is
// replaced whole by rename, never rewritten in place, so a reader needs no
// lock: it sees one complete version.
func (s *store) load() (Graph, error) {
	if err := s.checkDir(); err != nil {
		return Graph{}, err
	}
	if s.setting == "" {
		if err := s.migrateLegacy(); err != nil {
			return Graph{}, err
		}
	}
	fi, err := os.Stat(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return Graph{Entities: []Entity{}, Relations: []Relation{}}, nil
	}
	if err != nil {
		return Graph{}, fmt.Errorf("%s: %v", s.describe(), plainErr(err))
	}
	if !fi.Mode().IsRegular() {
		return Graph{}, fmt.Errorf("%s: not a regular file", s.describe())
	}
	data, err := os.ReadFile(s.file)
	if errors.Is(err, fs.ErrNotExist) { // removed since the Stat
		return Graph{Entities: []Entity{}, Relations: []Relation{}}, nil
	}
	if err != nil {
		return Graph{}, fmt.Errorf("%s: %v", s.describe(), plainErr(err))
	}
	g, err := parseGraph(data)
	if err != nil {
		return Graph{}, fmt.Errorf("%s: %v", s.describe(), err)
	}
	return g, nil
}

// update runs op on the graph under the lock and saves the result, unless
// op fails. If the lock was broken under it (it was judged stale), the
// whole read-modify-write is done again.
func (s *store) update(op func(*Graph) error) error {
	if err := s.checkDir(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		l, err := s.lock()
		if err != nil {
			return err
		}
		err = s.updateLocked(l, op)
		l.unlock()
		if errors.Is(err, errLockLost) && attempt < 3 {
			continue
		}
		return err
	}
}

func (s *store) updateLocked(l *lock, op func(*Graph) error) error {
	s.removeStaleTemps()
	g, err := s.load()
	if err != nil {
		return err
	}
	if err := op(&g); err != nil {
		return err
	}
	return s.save(l, formatGraph(&g))
}

// migrateLegacy renames memory.json to memory.jsonl in the default
// directory when only the former exists, as the reference does at start
// (here before every use: a plugin has no start of its own, and the rename
// is atomic).
func (s *store) migrateLegacy() error {
	old := path.Join(path.Dir(s.file), "memory.json")
	if _, err := os.Stat(old); err != nil {
		return nil
	}
	if _, err := os.Stat(s.file); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.Rename(old, s.file); err != nil {
		if _, serr := os.Stat(s.file); serr == nil {
			return nil // another call migrated it meanwhile
		}
		return fmt.Errorf("%s: migrating the legacy %s: %v", s.describe(), old, plainErr(err))
	}
	return nil
}

// tempPattern matches the temporary files the reference and this plugin
// write beside the memory file: <name>.<32 hex digits>.tmp.
var tempPattern = regexp.MustCompile(`^(.*)\.[0-9a-f]{32}\.tmp$`)

// swept holds the memory files whose directory this instance has swept of
// stale temporary files: once is enough, a crash is rare.
var swept = map[string]bool{}

// removeStaleTemps removes temporary files of this memory file older than
// staleAfter: left by a writer killed between writing and renaming them.
// A younger one may belong to a writer still at work (the reference takes
// no lock). Done at an instance's first write to the file.
func (s *store) removeStaleTemps() {
	if swept[s.file] {
		return
	}
	swept[s.file] = true
	dir, base := path.Split(s.file)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := tempPattern.FindStringSubmatch(e.Name())
		if m == nil || m[1] != base || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > s.staleAfter {
			_ = os.Remove(path.Join(dir, e.Name()))
		}
	}
}

// save replaces the memory file with data: written to a temporary file in
// the same directory, then renamed over the file (one atomic step: a
// writer killed at any point leaves the old file or the new one, never a
// torn one). The lock is checked to be still held just before. Like the
// reference, it does not fsync (README.md, "Writes").
func (s *store) save(l *lock, data []byte) error {
	tmp := fmt.Sprintf("%s.%s.tmp", s.file, randomHex())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return s.writeError(err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = l.check()
	}
	if err == nil {
		l.checked = true
		err = os.Rename(tmp, s.file)
	}
	if err != nil {
		_ = os.Remove(tmp)
		if errors.Is(err, errLockLost) {
			return err
		}
		return fmt.Errorf("%s: writing: %v", s.describe(), plainErr(err))
	}
	return nil
}

// errLockLost says another writer broke this writer's lock as stale.
var errLockLost = errors.New("the lock was taken over by another writer")

// lock is a held <file>.lock.
type lock struct {
	file    string
	token   []byte
	checked bool // check found it held just before the rename
}

// lock takes the memory file's lock, waiting up to lockWait, and breaking
// a lock older than staleAfter.
func (s *store) lock() (*lock, error) {
	l := &lock{file: s.file + ".lock", token: []byte(randomHex() + "\n")}
	deadline := time.Now().Add(lockWait)
	pause := time.Millisecond
	for {
		f, err := os.OpenFile(l.file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, err = f.Write(l.token)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				_ = os.Remove(l.file)
				return nil, s.writeError(err)
			}
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, s.writeError(err)
		}
		fi, err := os.Stat(l.file)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("%s: lock file %s: %v", s.describe(), l.file, plainErr(err))
		}
		if age := time.Since(fi.ModTime()); age > s.staleAfter || age < -s.staleAfter {
			breakStale(l.file, fi)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: another writer holds the lock file %s (made %s); it is taken as abandoned %s after it was made (config %s)",
				s.describe(), l.file, fi.ModTime().UTC().Format(time.RFC3339), s.staleAfter, staleKey)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// breakStale removes the stale lock file judged is: renamed aside first,
// so that of several writers breaking it at once only one removes it, and
// removed only if it is still the file judged stale (a fresh lock taken in
// between is put back).
func breakStale(file string, judged fs.FileInfo) {
	aside := fmt.Sprintf("%s.%s.stale", file, randomHex())
	if os.Rename(file, aside) != nil {
		return
	}
	if fi, err := os.Stat(aside); err == nil && !os.SameFile(fi, judged) {
		_ = os.Rename(aside, file)
		return
	}
	_ = os.Remove(aside)
}

// check fails with errLockLost unless the lock file still holds l's token.
func (l *lock) check() error {
	b, err := os.ReadFile(l.file)
	if err != nil || !bytes.Equal(b, l.token) {
		return errLockLost
	}
	return nil
}

// unlock removes the lock file if it is still l's: as check found it just
// before the rename, or as it finds it now.
func (l *lock) unlock() {
	if l.checked || l.check() == nil {
		_ = os.Remove(l.file)
	}
}

// randomHex is 32 random hexadecimal digits.
func randomHex() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("memory: no randomness: %v", err))
	}
	return hex.EncodeToString(b[:])
}
