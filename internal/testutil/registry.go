package testutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Registry is a real OCI registry (Debian's docker-registry, the CNCF
// distribution registry) serving on a loopback port for one test.
type Registry struct {
	// Addr is the registry's host:port on 127.0.0.1.
	Addr string

	t       testing.TB
	bin     string
	dataDir string
	auth    string // the auth: section of the config, "" for none
	cmd     *exec.Cmd
	done    chan struct{}
	mu      sync.Mutex
	log     strings.Builder
}

// findRegistry returns the docker-registry executable, or "".
func findRegistry() string {
	if p, err := exec.LookPath("docker-registry"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/docker-registry", "/usr/sbin/docker-registry"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

var listening = regexp.MustCompile(`listening on (127\.0\.0\.1:[0-9]+)`)

// StartRegistry starts a registry on 127.0.0.1 with its storage in a
// temporary directory, stopped when the test ends; it skips the test when
// docker-registry is not installed (scripts/ensure-registry.sh installs it).
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	return startRegistry(t, "", "")
}

// StartRegistryWithAuth is StartRegistry with HTTP basic authentication:
// only user with password may push or pull.
func StartRegistryWithAuth(t testing.TB, user, password string) *Registry {
	t.Helper()
	return startRegistry(t, user, password)
}

func startRegistry(t testing.TB, user, password string) *Registry {
	t.Helper()
	bin := findRegistry()
	if bin == "" {
		t.Skip("docker-registry is not installed, so the registry test cannot run: " +
			"install it with `sudo apt-get install docker-registry` or scripts/ensure-registry.sh (as root)")
	}
	r := &Registry{t: t, bin: bin, dataDir: t.TempDir()}
	if user != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "htpasswd")
		if err := os.WriteFile(file, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r.auth = fmt.Sprintf("auth:\n  htpasswd:\n    realm: mcphost-test\n    path: %s\n", file)
	}
	r.start("127.0.0.1:0")
	t.Cleanup(r.Stop)
	return r
}

func (r *Registry) start(addr string) {
	r.t.Helper()
	cfg := filepath.Join(r.t.TempDir(), "config.yml")
	text := fmt.Sprintf("version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n  secret: mcphost-test\n%s", r.dataDir, addr, r.auth)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		r.t.Fatal(err)
	}
	cmd := exec.Command(r.bin, "serve", cfg)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start docker-registry: %v", err)
	}
	r.cmd = cmd
	r.done = make(chan struct{})
	found := make(chan string, 1)
	go func() {
		defer close(r.done)
		_ = cmd.Wait()
		pw.Close()
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			r.log.WriteString(line + "\n")
			r.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		close(found)
	}()
	select {
	case a, ok := <-found:
		if !ok {
			r.t.Fatalf("docker-registry ended before listening:\n%s", r.Log())
		}
		r.Addr = a
	case <-time.After(60 * time.Second): // a hang guard, not a deadline
		r.t.Fatalf("docker-registry did not say it was listening within 60 s:\n%s", r.Log())
	}
}

// Log returns what the registry has printed.
func (r *Registry) Log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

// Stop stops the registry (and waits for it); its storage is kept, so
// Restart serves the same content on the same port.
func (r *Registry) Stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// Restart starts the stopped registry again on its address.
func (r *Registry) Restart() {
	r.t.Helper()
	r.start(r.Addr)
}

// BlobPath returns the file in which the registry keeps the blob of digest
// ("sha256:HEX"), for tests that tamper with what it serves.
func (r *Registry) BlobPath(digest string) string {
	hexDigest := strings.TrimPrefix(digest, "sha256:")
	return filepath.Join(r.dataDir, "docker", "registry", "v2", "blobs", "sha256", hexDigest[:2], hexDigest, "data")
}
