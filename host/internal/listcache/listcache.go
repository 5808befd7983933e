// Package listcache keeps on disk what each plugin offers (its
// plugin.Description: flavor, exports, ABI version and the raw output of
// its list calls), so that a host whose plugins are unchanged can serve
// their lists at start without compiling any.
//
// An entry is found by a key over everything that can change what a
// plugin lists (the host's build, the plugin's whole config, the values of
// the environment variables it is given) and names the module it describes
// by digest, and, for a local file, by a FileKey (device, inode, size,
// modification and change times) that lets a start skip reading and
// hashing the file. Nothing in an entry is trusted beyond that: the host
// replays the recorded list outputs through the same checks as a live
// plugin's, and the plugin's first activation verifies the digest and the
// live lists (plugin.FromDescription).
package listcache

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/plugin"
	"github.com/mcphost/mcphost/internal/regularfile"
)

// format is the version of the entry format; a change makes every entry
// written before it unusable (its key changes).
const format = 1

// MaxEntryBytes bounds one entry on disk: a plugin whose description is
// larger is loaded every time, and a larger file is never read.
const MaxEntryBytes = 4 << 20

// FileKey identifies a local file's content as the system sees it,
// without reading it.
type FileKey struct {
	Dev      uint64 `json:"dev"`
	Inode    uint64 `json:"inode"`
	Size     int64  `json:"size"`
	ModNs    int64  `json:"mod_ns"`
	ChangeNs int64  `json:"change_ns"`
}

// StatFile returns the FileKey of the file at path.
func StatFile(path string) (FileKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileKey{}, err
	}
	k := FileKey{Size: fi.Size(), ModNs: fi.ModTime().UnixNano()}
	fileIdentity(fi, &k)
	return k, nil
}

// Entry is one plugin's cached description.
type Entry struct {
	// Key is the entry's key, hex: a file found under another name is
	// not used.
	Key string `json:"key"`
	// Build is the SHA-256 of the host build that wrote the entry, hex:
	// another build's entry is not used (and is replaced).
	Build string `json:"build"`
	// File is the FileKey of the local file when the entry was written
	// (zero for a plugin from a registry, or when the file changed while
	// it was read).
	File FileKey `json:"file"`
	// Digest is the SHA-256 of the module described, hex.
	Digest string `json:"digest"`
	// Description is what the plugin offers.
	Description plugin.Description `json:"description"`
	// Volatile marks a plugin whose lists were found to differ from its
	// description with the same module: it is not described from the
	// cache (its entry keeps only this mark) until its settings change.
	Volatile bool `json:"volatile,omitempty"`
}

// Cache is a directory of entries. Its methods are safe for concurrent use
// (each entry is one file, written by rename).
type Cache struct {
	dir    string
	build  string // SHA-256 of the host's build, hex
	logger hclog.Logger
}

// Open opens (creating it) the cache in dir.
func Open(dir string, logger hclog.Logger) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("description cache: %w", err)
	}
	c := &Cache{dir: dir, build: hostBuild(), logger: logger}
	c.prune()
	return c, nil
}

// hostBuild is the SHA-256 of what names the running host's build: an upgrade (a new version,
// revision, Go release, ABI, or simply another executable) changes it.
func hostBuild() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "format %d\nabi %d\ngo %s\n", format, abi.Version, runtime.Version())
	if info, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, "main %s %s\n", info.Main.Path, info.Main.Version)
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.time" || s.Key == "vcs.modified" {
				fmt.Fprintf(&b, "%s %s\n", s.Key, s.Value)
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if id := goBuildID(exe); id != "" {
			// Derived from the executable's content: the same build has the
			// same one in a container image made elsewhere, where the
			// file's inode and change time differ.
			fmt.Fprintf(&b, "exe build id %s\n", id)
		} else if k, err := StatFile(exe); err == nil {
			fmt.Fprintf(&b, "exe %+v\n", k)
		}
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// goBuildID returns the Go build ID the toolchain wrote into the ELF
// executable at path (its ".note.go.buildid" note: hashes of the build's
// inputs and of its content), or "" when there is none to read.
func goBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil || sec.Size > 4096 {
		return ""
	}
	note, err := sec.Data()
	if err != nil || len(note) < 16 {
		return ""
	}
	// namesz, descsz, type (4 bytes each), the name "Go\x00\x00", the ID.
	nameSize, descSize := f.ByteOrder.Uint32(note[0:4]), f.ByteOrder.Uint32(note[4:8])
	if nameSize != 4 || string(note[12:16]) != "Go\x00\x00" || int(descSize) > len(note)-16 {
		return ""
	}
	return string(note[16 : 16+descSize])
}

// Key is the key of a plugin's entry: settings is everything about the
// plugin that can change what it lists (its config, the environment it is
// given), encoded the same way every time. The host's build is not in the
// key but in the entry, so that an upgrade replaces entries rather than
// adding to them.
func (c *Cache) Key(settings []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "mcphost description cache %d\n", format)
	h.Write(settings)
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key+".json") }

// Get returns the entry of key, or nil when there is none or it cannot be
// used (logged: a corrupt or unreadable entry is loaded around, never
// trusted).
func (c *Cache) Get(key, plugin string) *Entry {
	f, err := regularfile.Open(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		c.logger.Debug("no cached description", "plugin", plugin)
		return nil
	}
	if errors.Is(err, regularfile.ErrNotRegular) {
		// Not written by the host (it renames regular files into place):
		// a miss, and the next Put replaces it.
		c.logger.Warn("cached description is not a regular file; ignoring it and loading the plugin", "plugin", plugin, "file", c.path(key), "error", err)
		return nil
	}
	if err != nil {
		c.logger.Warn("cached description unreadable; loading the plugin", "plugin", plugin, "error", err)
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxEntryBytes+1))
	if err == nil && len(data) > MaxEntryBytes {
		err = fmt.Errorf("larger than %d bytes", MaxEntryBytes)
	}
	var e *Entry
	if err == nil {
		e, err = decode(data)
	}
	if err == nil && e.Key != key {
		err = errors.New("written for another key")
	}
	if err == nil && e.Build != c.build {
		c.logger.Debug("cached description written by another mcphost build; loading the plugin", "plugin", plugin)
		return nil
	}
	if err != nil {
		c.logger.Warn("cached description unusable; loading the plugin", "plugin", plugin, "file", c.path(key), "error", err)
		return nil
	}
	return e
}

// decode reads an entry: a line with the SHA-256 of the rest, in hex,
// then the entry as JSON.
func decode(data []byte) (*Entry, error) {
	sum, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return nil, errors.New("no checksum line")
	}
	want := sha256.Sum256(body)
	if string(sum) != hex.EncodeToString(want[:]) {
		return nil, errors.New("checksum mismatch (corrupt)")
	}
	var e Entry
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return &e, nil
}

// Put writes e (for e.Key), replacing any entry before it: the file
// appears whole or not at all.
func (c *Cache) Put(e *Entry) error {
	e.Build = c.build
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	sum := sha256.Sum256(body)
	data := append([]byte(hex.EncodeToString(sum[:])+"\n"), body...)
	if len(data) > MaxEntryBytes {
		return fmt.Errorf("description of %d bytes is larger than the cache keeps (%d)", len(data), MaxEntryBytes)
	}
	tmp, err := os.CreateTemp(c.dir, e.Key+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // nothing once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), c.path(e.Key))
}

// maxAge is how long an entry not written again stays: entries of plugins
// no longer configured do not pile up (a plugin unchanged for longer is
// loaded once and its entry written again).
const maxAge = 30 * 24 * time.Hour

// prune removes the entries, and temporary files left by a crash, not
// written for maxAge.
func (c *Cache) prune() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		c.logger.Warn("description cache: cannot list", "dir", c.dir, "error", err)
		return
	}
	for _, de := range entries {
		info, err := de.Info()
		if err != nil || !info.Mode().IsRegular() || time.Since(lastWritten(info)) < maxAge {
			continue
		}
		if err := os.Remove(filepath.Join(c.dir, de.Name())); err != nil {
			c.logger.Debug("description cache: cannot remove an old entry", "file", de.Name(), "error", err)
		}
	}
}

// Remove drops the entry of key, if any.
func (c *Cache) Remove(key string) error {
	if err := os.Remove(c.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
