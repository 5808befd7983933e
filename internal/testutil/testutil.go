// Package testutil builds the repository's Wasm plugins from source for
// tests. A build is keyed by a hash of everything it depends on (the plugin's
// sources, sdk/, abi/, go.mod and go.sum), kept in the user cache directory,
// and written by rename, so concurrent test processes share one result and
// a test never runs a stale plugin.
package testutil

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	built = map[string]string{}
)

// RepoRoot returns the directory holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testutil: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// GoPlugin builds the Go plugin in the package directory rel (relative to the
// repository root, e.g. "plugins/hello") for wasip1, with the given build
// tags, and returns the path of the .wasm file. The plugin is a package of
// the root module, which requires the sdk and abi modules with replace
// directives to ./sdk and ./abi, so it builds from the root against this
// checkout's SDK; the cache key covers sdk/ and abi/, their go.mod and go.sum
// included, and plugins/internal/ (packages the plugins share). Flags in the file rel/goflags are added to the build, as the
// Makefile does.
func GoPlugin(t testing.TB, rel string, tags ...string) string {
	t.Helper()
	root := RepoRoot(t)
	mu.Lock()
	defer mu.Unlock()
	id := rel + " " + strings.Join(tags, ",")
	if p, ok := built[id]; ok {
		return p
	}
	key, err := sourceHash(root, strings.Join(tags, ","), rel, "sdk", "abi", "plugins/internal")
	if err != nil {
		t.Fatalf("hash sources of %s: %v", rel, err)
	}
	cacheBase, err := os.UserCacheDir()
	if err != nil {
		cacheBase = os.TempDir()
	}
	dir := filepath.Join(cacheBase, "mcphost-test-plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, fmt.Sprintf("%s-%s.wasm", filepath.Base(rel), key[:16]))
	if _, err := os.Stat(out); err != nil {
		tmp, err := os.CreateTemp(dir, "build-*.wasm")
		if err != nil {
			t.Fatal(err)
		}
		tmp.Close()
		args := []string{"build", "-buildmode=c-shared", "-tags", strings.Join(tags, ",")}
		// The plugin's own build flags, as the Makefile adds them.
		if flags, err := os.ReadFile(filepath.Join(root, rel, "goflags")); err == nil {
			args = append(args, strings.Fields(string(flags))...)
		}
		cmd := exec.Command("go", append(args, "-o", tmp.Name(), "./"+rel)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			os.Remove(tmp.Name())
			t.Fatalf("build plugin %s: %v\n%s", rel, err, b)
		}
		if err := os.Rename(tmp.Name(), out); err != nil {
			t.Fatal(err)
		}
	}
	built[id] = out
	return out
}

// sourceHash hashes the build tags, go.mod, go.sum and every file under the
// given directories of root.
func sourceHash(root, tags string, dirs ...string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "tags %s\n", tags)
	var files []string
	files = append(files, filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum"))
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() && !strings.HasSuffix(path, ".wasm") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(f, root), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WriteConfig writes a config file into a fresh temporary directory and
// returns its path.
func WriteConfig(t testing.TB, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcphost.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// CompilationCacheDir returns the directory of wazero's compilation cache
// that tests share with each other and with a host run by the same user
// (the host's default, under the user cache directory), so that a test
// loading a multi-megabyte Go plugin does not compile it again: under
// -race that takes tens of seconds. A test of the cache itself should use
// its own t.TempDir() instead.
func CompilationCacheDir(t testing.TB) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	return filepath.Join(base, "mcphost", "wazero")
}
