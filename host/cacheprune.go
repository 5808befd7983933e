package host

import (
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
)

// compiledMaxAge is how long a compiled module stays in the on-disk
// compilation cache without being used. wazero never removes an entry, and
// every new build of a plugin (or of the host's rewrite, or of wazero)
// compiles to a new one, ~30 MB for a Go plugin: a developer's cache had
// grown to 4 GiB. A module still configured is compiled again the first
// time it is loaded after its entry went (about a second for a Go plugin).
const compiledMaxAge = 30 * 24 * time.Hour

// pruneCompilationCache removes, from the compilation cache in dir, the
// compiled modules not used for compiledMaxAge: the files of wazero's own
// directories (named wazero-<version>-<arch>-<os>, one level or two below
// dir), by their last access time, or their modification time where the
// file system does not keep one. Anything else under dir (the description
// cache's entries, files another program put there) is left alone, and a
// failure is logged and skipped: pruning never stops a host from starting.
// It returns how many files it removed and their bytes.
func pruneCompilationCache(dir string, now time.Time, logger hclog.Logger) (removed int, bytes int64) {
	if dir == "" {
		return 0, 0
	}
	var wazeroDirs []string
	for _, pattern := range []string{"wazero-*", filepath.Join("*", "wazero-*")} {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			continue // only ErrBadPattern, and these patterns are fixed
		}
		wazeroDirs = append(wazeroDirs, matches...)
	}
	for _, wd := range wazeroDirs {
		// Listing opens it: a FIFO in its place would wait for a writer.
		if fi, err := os.Lstat(wd); err != nil || !fi.IsDir() {
			continue // the compile's sweep (package plugin) replaces it
		}
		entries, err := os.ReadDir(wd)
		if err != nil {
			continue // not a directory, or unreadable: not ours to judge
		}
		for _, de := range entries {
			info, err := de.Info()
			if err != nil || !info.Mode().IsRegular() || now.Sub(lastUse(info)) < compiledMaxAge {
				continue
			}
			path := filepath.Join(wd, de.Name())
			if err := os.Remove(path); err != nil {
				logger.Debug("compilation cache: cannot remove an old entry", "file", path, "error", err)
				continue
			}
			removed++
			bytes += info.Size()
		}
	}
	if removed > 0 {
		logger.Info("compilation cache: removed modules not used for 30 days", "dir", dir, "files", removed, "bytes", bytes)
	}
	return removed, bytes
}
