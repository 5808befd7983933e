package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CosignVersion is the cosign release the tests sign with; keep it in step
// with scripts/ensure-cosign.sh, which builds it.
const CosignVersion = "v2.6.5"

// cosignInstalled is where scripts/ensure-cosign.sh installs cosign,
// resolved when the package is initialised: tests change HOME and
// XDG_CACHE_HOME (t.Setenv) to isolate the host's caches.
var cosignInstalled = func() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "mcphost", "tools", "cosign-"+CosignVersion, "cosign")
}()

// Cosign is the real cosign CLI, run with a home of its own (no
// ~/.sigstore or Docker config of the user's) and nothing beyond loopback:
// key-based signing with the transparency log upload turned off.
type Cosign struct {
	// Bin is the cosign executable.
	Bin string

	home string
}

// cosignPassword encrypts the keys Cosign.GenerateKeyPair makes.
const cosignPassword = "mcphost-test"

// FindCosign returns the real cosign: $MCPHOST_COSIGN, else the one
// scripts/ensure-cosign.sh installs (`make test` runs it). It skips the test,
// saying how to install it, where there is none.
func FindCosign(t testing.TB) *Cosign {
	t.Helper()
	bin := os.Getenv("MCPHOST_COSIGN")
	if bin == "" {
		bin = cosignInstalled
	}
	if bin == "" {
		t.Skip("cosign is not installed (no user cache directory to find it in), so the real-cosign test cannot run: set MCPHOST_COSIGN to a cosign " + CosignVersion)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("cosign %s is not installed at %s, so the real-cosign test cannot run: scripts/ensure-cosign.sh builds it there (go install github.com/sigstore/cosign/v2/cmd/cosign@%s; `make test` runs it), or set MCPHOST_COSIGN",
			CosignVersion, bin, CosignVersion)
	}
	return &Cosign{Bin: bin, home: t.TempDir()}
}

// Run runs cosign with args and returns what it printed; a failure fails
// t, with that output.
func (c *Cosign) Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := c.Try(args...)
	if err != nil {
		t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Try is Run that returns the error instead of failing the test.
func (c *Cosign) Try(args ...string) (string, error) {
	// A hang guard, not a deadline: cosign signs in about a second.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Bin, args...)
	cmd.Dir = c.home
	cmd.Env = append(os.Environ(),
		"HOME="+c.home,
		"DOCKER_CONFIG="+filepath.Join(c.home, ".docker"),
		"TUF_ROOT="+filepath.Join(c.home, ".sigstore", "root"),
		"COSIGN_PASSWORD="+cosignPassword,
	)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// GenerateKeyPair makes a cosign key pair (an encrypted cosign.key and a
// PEM cosign.pub) in a directory of its own and returns both paths.
func (c *Cosign) GenerateKeyPair(t testing.TB) (key, pub string) {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "cosign")
	c.Run(t, "generate-key-pair", "--output-key-prefix", prefix)
	return prefix + ".key", prefix + ".pub"
}

// SignArgs are the arguments of `cosign sign` that sign image (REGISTRY/
// REPO@sha256:…, on a plain-HTTP registry on loopback) with key and
// nothing else: no transparency log upload, no signing config fetched
// from the public Sigstore TUF repository. With newBundle, cosign writes a
// Sigstore bundle as an OCI referrer (--new-bundle-format); without, its
// classic sha256-<hex>.sig signature.
func SignArgs(key, image string, newBundle bool) []string {
	args := []string{"sign", "--key", key, "--tlog-upload=false", "--allow-http-registry", "--yes"}
	if newBundle {
		args = append(args, "--new-bundle-format", "--use-signing-config=false")
	}
	return append(args, image)
}
