package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestIsCacheWriteError: the errors wazero returns when it cannot create,
// or rename into place, a file of the cache directory are told apart from
// errors elsewhere (which fail the compile as before).
func TestIsCacheWriteError(t *testing.T) {
	cache := t.TempDir()
	_, createErr := os.CreateTemp(filepath.Join(cache, "wazero-x", "missing"), "key.*.tmp")
	renameErr := os.Rename(filepath.Join(cache, "none.tmp"), filepath.Join(cache, "wazero-x", "key"))
	_, elsewhere := os.CreateTemp(filepath.Join(t.TempDir(), "missing"), "x")
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"create in the cache", fmt.Errorf("compile: %w", createErr), true},
		{"rename into the cache", renameErr, true},
		{"elsewhere", elsewhere, false},
		{"not a file error", fmt.Errorf("invalid module"), false},
		{"a sibling named like the cache", &os.PathError{Op: "open", Path: cache + "-other/x", Err: os.ErrPermission}, false},
	} {
		if got := isCacheWriteError(c.err, cache); got != c.want {
			t.Errorf("%s (%v): %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
