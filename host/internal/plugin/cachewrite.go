package plugin

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"
)

// compileCached compiles over the plugin's compilation cache, and when the
// only thing that failed was writing the compiled code into the cache
// directory (a read-only cache, such as a container image's warm one on a
// node whose CPU differs from the one that filled it, or a full disk), it
// compiles again in memory: wazero fails a compile whose code it cannot
// write, and the cache is an optimisation, not a reason to refuse a
// plugin. The plugin runs; the warning says what it costs.
func compileCached(ctx context.Context, timeout time.Duration, m extism.Manifest, cfg extism.PluginConfig, funcs []extism.HostFunction, cacheDir string, logger hclog.Logger) (*extism.CompiledPlugin, error) {
	compiled, err := compile(ctx, timeout, m, cfg, funcs)
	if err == nil || cacheDir == "" || !isCacheWriteError(err, cacheDir) {
		return compiled, err
	}
	logger.Warn("cannot write compiled code into cache_dir; compiling this plugin in memory, again at each activation (make cache_dir writable, or warm it on a machine of this CPU type)", "cache_dir", cacheDir, "error", err)
	cfg.RuntimeConfig = cfg.RuntimeConfig.WithCompilationCache(wazero.NewCompilationCache())
	return compile(ctx, timeout, m, cfg, funcs)
}

// isCacheWriteError reports whether err is a file system error on a path
// under cacheDir (creating, writing or renaming a cache file).
func isCacheWriteError(err error, cacheDir string) bool {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return under(cacheDir, pe.Path)
	case errors.As(err, &le):
		return under(cacheDir, le.New)
	}
	return false
}

// under reports whether path lies in dir.
func under(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
