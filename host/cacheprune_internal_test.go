package host

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestCompilationCacheIsPruned: compiled modules not used for 30 days go,
// in wazero's directories one or two levels down; recent ones, one read
// lately, and every file outside wazero's directories stay. A file's
// change time counts as a use (it is when an image was unpacked), and no
// one can set it back: the prune is judged 60 days from now, so that the
// files just written are old by it.
func TestCompilationCacheIsPruned(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Add(60 * 24 * time.Hour)
	old, recent := now.Add(-40*24*time.Hour), now.Add(-24*time.Hour)
	files := []struct {
		path          string
		atime, mtime  time.Time
		kept, onLinux bool // onLinux: what is expected only where atime is read
	}{
		{"interrupt-v1/wazero-v1.12.0-amd64-linux/old", old, old, false, false},
		{"interrupt-v1/wazero-v1.12.0-amd64-linux/recent", recent, recent, true, false},
		{"interrupt-v1/wazero-v1.12.0-amd64-linux/read-lately", recent, old, true, true},
		{"wazero-v1.11.0-amd64-linux/old", old, old, false, false},
		{"lists/old-description", old, old, true, false},
		{"interrupt-v1/not-wazero/old", old, old, true, false},
		{"old-at-the-top", old, old, true, false},
	}
	for _, f := range files {
		path := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("compiled"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, f.atime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
	removed, bytes := pruneCompilationCache(dir, now, hclog.NewNullLogger())
	for _, f := range files {
		if f.onLinux && runtime.GOOS != "linux" {
			continue
		}
		_, err := os.Stat(filepath.Join(dir, f.path))
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s: kept = %v, want %v", f.path, kept, f.kept)
		}
	}
	if removed != 2 || bytes != 2*int64(len("compiled")) {
		t.Errorf("removed %d files, %d bytes; want 2, 16", removed, bytes)
	}
}
