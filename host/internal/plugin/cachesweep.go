package plugin

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// sweepCompiled removes, from wazero's directories in the compilation
// cache dir (wazero-<version>-<arch>-<os>), every entry that is not a
// regular file: wazero opens an entry with a plain os.Open, which waits
// for a writer when the entry is a FIFO (the host would hang compiling)
// and follows a symbolic link anywhere. The host writes only regular files
// there (by rename), so such an entry was planted; it is logged, naming
// its path, and removed, and the module it stood for is compiled again
// (a cache miss: nothing is lost). A wazero directory that is not a
// directory (a symbolic link would take the code elsewhere) is made one.
// It runs before every compile over the cache, so that an entry planted
// while the host runs is found too.
func sweepCompiled(dir string, logger hclog.Logger) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // none yet, or unusable: openCache reports that
	}
	for _, de := range entries {
		if !strings.HasPrefix(de.Name(), "wazero-") {
			continue
		}
		wd := filepath.Join(dir, de.Name())
		if !de.IsDir() {
			// A symbolic link would take wazero's code elsewhere.
			// It is made again a directory, for a cache opened over it.
			logger.Warn("compilation cache: not a directory where wazero keeps its code; replacing it with one", "path", wd, "type", de.Type().String())
			if err := os.Remove(wd); err != nil && !errors.Is(err, fs.ErrNotExist) {
				logger.Warn("compilation cache: cannot remove it", "path", wd, "error", err)
				continue
			}
			if err := os.Mkdir(wd, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				logger.Warn("compilation cache: cannot make it a directory", "path", wd, "error", err)
			}
			continue
		}
		files, err := os.ReadDir(wd)
		if err != nil {
			continue
		}
		for _, f := range files {
			if f.Type().IsRegular() {
				continue
			}
			path := filepath.Join(wd, f.Name())
			logger.Warn("compilation cache: entry is not a regular file; removing it (the module is compiled again)", "path", path, "type", f.Type().String())
			if err := os.RemoveAll(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				logger.Warn("compilation cache: cannot remove an entry that is not a regular file", "path", path, "error", err)
			}
		}
	}
}
