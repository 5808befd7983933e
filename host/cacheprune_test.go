package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHostStartPrunesTheCompilationCache: a host's start prunes the
// configured cache_dir of compiled modules not used for 30 days.
func TestHostStartPrunesTheCompilationCache(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "interrupt-v1", "wazero-v0.0.1-amd64-linux", "stale")
	if err := os.MkdirAll(filepath.Dir(stale), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("compiled"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-31 * 24 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	_, logs := newHost(t, "[server]\nwatch = false\ncache_dir = \""+dir+"\"\n")
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a module unused for 31 days is still in the cache after a start (stat: %v)", err)
	}
	if !strings.Contains(logs.String(), "removed modules not used for 30 days") {
		t.Errorf("the removal is not logged:\n%s", logs)
	}
}
