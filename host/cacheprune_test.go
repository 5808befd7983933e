package host_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestHostStartKeepsAnUnpackedCache: a compiled module whose access and
// modification times are 40 days old, as in a container image made by
// `mcphost plugin warm` that long ago and unpacked today, is not pruned at
// start: its change time is the day it was put there. (Pruning itself is
// TestCompilationCacheIsPruned's: no test can make a file's change time
// old.)
func TestHostStartKeepsAnUnpackedCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the change time is read on Linux only")
	}
	dir := t.TempDir()
	compiled := filepath.Join(dir, "interrupt-v1", "wazero-v0.0.1-amd64-linux", "compiled")
	if err := os.MkdirAll(filepath.Dir(compiled), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(compiled, []byte("compiled"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-40 * 24 * time.Hour)
	if err := os.Chtimes(compiled, old, old); err != nil {
		t.Fatal(err)
	}
	_, logs := newHost(t, "[server]\nwatch = false\ncache_dir = \""+dir+"\"\n")
	if _, err := os.Stat(compiled); err != nil {
		t.Errorf("a module unpacked today with old times was pruned at start (stat: %v)", err)
	}
	if strings.Contains(logs.String(), "removed modules not used for 30 days") {
		t.Errorf("the start logs a removal:\n%s", logs)
	}
}
