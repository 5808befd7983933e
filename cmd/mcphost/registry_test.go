package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// `plugin push` publishes a plugin with the grants it asks for; `plugin
// inspect oci://…` shows them; `plugin pull` fills the store; `validate`
// shows asked against granted; `plugin update` pins what the tag names now.
func TestPluginPushInspectPullValidateUpdate(t *testing.T) {
	reg := testutil.StartRegistry(t)
	hello := testutil.GoPlugin(t, "plugins/hello")
	faulty := testutil.GoPlugin(t, "testdata/plugins/faulty")
	// The plugins are built (in the user cache); then a cache of its own
	// for the default plugin store, and no Docker config.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	ref := "oci://" + reg.Addr + "/plugins/hello:1"

	out, errOut, err := runCLI(t, "plugin", "push", "--insecure", "--asks-host", "api.example.com", "--asks-env", "TOKEN", hello, ref)
	if err != nil || !strings.Contains(out, "digest sha256:") {
		t.Fatalf("push: %v\n%s%s", err, out, errOut)
	}
	first := strings.TrimSpace(out[strings.Index(out, "sha256:"):])

	out, errOut, err = runCLI(t, "plugin", "inspect", "--insecure", ref)
	if err != nil {
		t.Fatalf("inspect: %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"digest   " + first, "tools    add, echo, fail, greet", "asks     network: api.example.com", "asks     environment: TOKEN"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect does not say %q:\n%s", want, out)
		}
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(cfg, []byte(`[server]
plugin_store = "store"
[[plugin]]
name = "hello"
path = "`+ref+`"
insecure = true
skip_signature = true
env = ["TOKEN"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = runCLI(t, "plugin", "pull", "--config", cfg, "--insecure", ref)
	if err != nil || !strings.Contains(out, first) || !strings.Contains(out, filepath.Join(dir, "store")) {
		t.Fatalf("pull: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = runCLI(t, "validate", "--config", cfg)
	if err != nil {
		t.Fatalf("validate: %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"source " + ref + " (" + first + ")", "asks   network: api.example.com (NOT granted)", "asks   environment: TOKEN (granted)"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate does not say %q:\n%s", want, out)
		}
	}
	// validate writes nothing: serve pins the tag. Pin it with update.
	out, errOut, err = runCLI(t, "plugin", "update", "--config", cfg)
	if err != nil || !strings.Contains(out, "now pinned to "+first+" (was nothing)") {
		t.Fatalf("update: %v\n%s%s", err, out, errOut)
	}
	out, _, err = runCLI(t, "plugin", "push", "--insecure", faulty, ref)
	if err != nil {
		t.Fatal(err)
	}
	second := strings.TrimSpace(out[strings.Index(out, "sha256:"):])
	out, errOut, err = runCLI(t, "plugin", "update", "--config", cfg, "hello")
	if err != nil || !strings.Contains(out, "now pinned to "+second+" (was "+first+")") {
		t.Fatalf("update after the tag moved: %v\n%s%s", err, out, errOut)
	}
}

// Each mistake is a clear error naming the reference.
func TestPluginPushPullErrors(t *testing.T) {
	hello := testutil.GoPlugin(t, "plugins/hello")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad reference", []string{"plugin", "push", hello, "oci://127.0.0.1:1/Bad:1"}, "not an OCI reference"},
		{"no tag", []string{"plugin", "push", "--insecure", hello, "oci://127.0.0.1:1/x@sha256:" + strings.Repeat("0", 64)}, "needs a tag"},
		{"insecure remote", []string{"plugin", "push", "--insecure", hello, "oci://registry.example.com/x:1"}, `"registry.example.com" is not`},
		{"not wasm", []string{"plugin", "push", "--insecure", "registry_test.go", "oci://127.0.0.1:1/x:1"}, "not a WebAssembly module"},
		{"unreachable", []string{"plugin", "pull", "--config", "none.toml", "--insecure", "oci://127.0.0.1:1/x:1"}, "oci://127.0.0.1:1/x:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// `plugin sign` signs with a PEM key; a config trusting its public key
// validates, one trusting another key does not.
func TestPluginSignThenValidate(t *testing.T) {
	reg := testutil.StartRegistry(t)
	hello := testutil.GoPlugin(t, "plugins/hello")
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	writeKey := func(name string) (priv, pub string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, _ := x509.MarshalPKCS8PrivateKey(k)
		pubDER, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
		priv, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
		os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
		os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
		return priv, pub
	}
	key, pub := writeKey("cosign")
	_, otherPub := writeKey("other")
	ref := "oci://" + reg.Addr + "/plugins/hello:1"
	if out, errOut, err := runCLI(t, "plugin", "push", "--insecure", hello, ref); err != nil {
		t.Fatalf("push: %v\n%s%s", err, out, errOut)
	}
	if out, errOut, err := runCLI(t, "plugin", "sign", "--insecure", "--key", key, ref); err != nil || !strings.Contains(out, "signed "+ref) {
		t.Fatalf("sign: %v\n%s%s", err, out, errOut)
	}
	if _, _, err := runCLI(t, "plugin", "sign", "--insecure", "--key", pub, ref); err == nil || !strings.Contains(err.Error(), "signing key") {
		t.Fatalf("sign with a public key: %v", err)
	}
	for _, tc := range []struct {
		key string
		ok  bool
	}{{pub, true}, {otherPub, false}} {
		cfg := filepath.Join(t.TempDir(), "mcphost.toml")
		os.WriteFile(cfg, []byte(`[server]
plugin_store = "store"
trusted_keys = ["`+tc.key+`"]
[[plugin]]
name = "hello"
path = "`+ref+`"
insecure = true
`), 0o644)
		out, errOut, err := runCLI(t, "validate", "--config", cfg)
		if tc.ok && err != nil {
			t.Fatalf("validate with the signer's key: %v\n%s%s", err, out, errOut)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "no valid signature by a trusted key")) {
			t.Fatalf("validate with another key: %v\n%s%s", err, out, errOut)
		}
	}
}

// A plugin signed by the real cosign (`cosign sign --new-bundle-format`,
// key-based, nothing uploaded) on a registry without the referrers API:
// validate and update accept it with the cosign.pub of its key, and refuse
// it (exit code 1, saying why) with another key; update then keeps no pin.
func TestPluginSignedWithCosign(t *testing.T) {
	cosign := testutil.FindCosign(t)
	reg := testutil.StartRegistry(t)
	hello := testutil.GoPlugin(t, "plugins/hello")
	t.Setenv("HOME", t.TempDir())
	key, pub := cosign.GenerateKeyPair(t)
	_, otherPub := cosign.GenerateKeyPair(t)
	ref := "oci://" + reg.Addr + "/plugins/hello:1"
	out, errOut, err := runCLI(t, "plugin", "push", "--insecure", hello, ref)
	if err != nil {
		t.Fatalf("push: %v\n%s%s", err, out, errOut)
	}
	digest := strings.TrimSpace(out[strings.Index(out, "sha256:"):])
	cosign.Run(t, testutil.SignArgs(key, strings.TrimPrefix(strings.TrimSuffix(ref, ":1"), "oci://")+"@"+digest, true)...)

	for _, tc := range []struct {
		name, key string
		ok        bool
	}{{"cosign.pub", pub, true}, {"another key", otherPub, false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "mcphost.toml")
			os.WriteFile(cfg, []byte(`[server]
plugin_store = "store"
trusted_keys = ["`+tc.key+`"]
[[plugin]]
name = "hello"
path = "`+ref+`"
insecure = true
`), 0o644)
			for _, args := range [][]string{{"validate", "--config", cfg}, {"plugin", "update", "--config", cfg}} {
				out, errOut, err := runCLI(t, args...)
				if tc.ok && err != nil {
					t.Fatalf("%s with the signer's cosign.pub: %v\n%s%s", args[0:len(args)-2], err, out, errOut)
				}
				if !tc.ok && (err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "no valid signature by a trusted key") || !strings.Contains(err.Error(), ref)) {
					t.Fatalf("%s with another key: %v (exit code %d)\n%s%s", args[0:len(args)-2], err, exitCode(err), out, errOut)
				}
			}
			lock, _ := os.ReadFile(filepath.Join(filepath.Dir(cfg), "mcphost.lock"))
			if pinned := strings.Contains(string(lock), digest); pinned != tc.ok {
				t.Fatalf("lock file pins %s: %v, want %v:\n%s", digest, pinned, tc.ok, lock)
			}
		})
	}
}

// validate names the reference of a remote plugin whose module does not
// load (it once said `from :`).
func TestValidateBrokenRemoteModule(t *testing.T) {
	reg := testutil.StartRegistry(t)
	t.Setenv("HOME", t.TempDir())
	ref := "oci://" + reg.Addr + "/plugins/broken:1"
	// A valid module that is no plugin; push checks for that, so it is
	// published as the registry client does.
	if _, err := host.PushPlugin(t.Context(), testutil.WAT(t, "(module)"), ref, nil, true); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "mcphost.toml")
	os.WriteFile(cfg, []byte(`[server]
plugin_store = "store"
[[plugin]]
name = "hello"
path = "`+ref+`"
insecure = true
skip_signature = true
`), 0o644)
	out, errOut, err := runCLI(t, "validate", "--config", cfg)
	if want := `load plugin "hello" from ` + ref + ": "; err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), want) {
		t.Fatalf("validate: %v, want exit code 1 and %q\n%s%s", err, want, out, errOut)
	}
}
