package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/internal/regularfile"
)

// DefaultStoreDir returns the plugin store inside the cache directory
// ([server] cache_dir, else the user cache directory's mcphost).
func DefaultStoreDir(cacheDir string) (string, error) {
	if cacheDir != "" && cacheDir != "off" {
		return filepath.Join(cacheDir, "store"), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("plugin store: no user cache directory (set [server] plugin_store): %w", err)
	}
	return filepath.Join(base, "mcphost", "store"), nil
}

// ErrNotStored is returned by Store.Read for a digest that is not in the
// store.
var ErrNotStored = errors.New("not in the plugin store")

// ErrCorrupt is returned by Store.Read for an entry whose content no longer
// has its digest; the entry is removed.
var ErrCorrupt = errors.New("plugin store entry is corrupt (its content does not match its digest)")

// Store is a content-addressed directory of blobs: each file is named by
// the SHA-256 of its content (DIR/sha256/HEX). Entries are written
// atomically and verified on every read.
type Store struct {
	// Dir is the store's directory.
	Dir string
}

func (s Store) path(digest string) (string, error) {
	hexDigest, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexDigest) != 64 || strings.Trim(hexDigest, "0123456789abcdef") != "" {
		return "", fmt.Errorf("digest %q is not sha256:HEX", digest)
	}
	return filepath.Join(s.Dir, "sha256", hexDigest), nil
}

// Read returns the content stored under digest, verified; ErrNotStored when
// there is none, ErrCorrupt (after removing it) when it does not match.
func (s Store) Read(digest string) ([]byte, error) {
	p, err := s.path(digest)
	if err != nil {
		return nil, err
	}
	b, err := regularfile.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", digest, ErrNotStored)
	}
	if err != nil {
		return nil, fmt.Errorf("plugin store: %w", err)
	}
	if Digest(b) != digest {
		_ = os.Remove(p)
		return nil, fmt.Errorf("%s in %s: %w", digest, s.Dir, ErrCorrupt)
	}
	return b, nil
}

// Write stores b under digest, after checking that digest is b's; the file
// appears whole or not at all.
func (s Store) Write(digest string, b []byte) error {
	p, err := s.path(digest)
	if err != nil {
		return err
	}
	if got := Digest(b); got != digest {
		return fmt.Errorf("digest mismatch: expected %s, got %s", digest, got)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("plugin store: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("plugin store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("plugin store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("plugin store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("plugin store: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("plugin store: %w", err)
	}
	return nil
}

// Digest returns "sha256:HEX" of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// readAtMost reads r to its end, failing once more than max bytes come.
func readAtMost(r io.Reader, max int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than the %d-byte cap", what, max)
	}
	return b, nil
}

// signaturesPath is the file listing the digests of the signature bundles
// stored for a manifest (one a line).
func (s Store) signaturesPath(manifest string) (string, error) {
	p, err := s.path(manifest)
	if err != nil {
		return "", err
	}
	return filepath.Join(s.Dir, "signatures", filepath.Base(p)), nil
}

// WriteSignatures stores the signature bundles of manifest (replacing what
// was stored for it).
func (s Store) WriteSignatures(manifest string, bundles [][]byte) error {
	p, err := s.signaturesPath(manifest)
	if err != nil {
		return err
	}
	var list strings.Builder
	for _, b := range bundles {
		d := Digest(b)
		if err := s.Write(d, b); err != nil {
			return err
		}
		list.WriteString(d + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("plugin store: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("plugin store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(list.String()); err != nil {
		tmp.Close()
		return fmt.Errorf("plugin store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("plugin store: %w", err)
	}
	return os.Rename(tmp.Name(), p)
}

// ReadSignatures returns the signature bundles stored for manifest, each
// verified against its digest (none when none were stored).
func (s Store) ReadSignatures(manifest string) ([][]byte, error) {
	p, err := s.signaturesPath(manifest)
	if err != nil {
		return nil, err
	}
	list, err := regularfile.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("plugin store: %w", err)
	}
	var out [][]byte
	for _, d := range strings.Fields(string(list)) {
		b, err := s.Read(d)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
