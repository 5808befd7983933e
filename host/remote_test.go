package host_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/registry"
	"github.com/mcphost/mcphost/internal/testutil"
)

// pushPlugin publishes the Go plugin at rel (built) to ref on a test
// registry, as `mcphost plugin push` does, and returns the manifest digest.
func pushPlugin(t *testing.T, ref, rel string, grants *registry.Grants) string {
	t.Helper()
	wasm, err := os.ReadFile(testutil.GoPlugin(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	r, err := registry.ParseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	c := &registry.Client{Store: registry.Store{Dir: t.TempDir()}}
	digest, err := c.Push(t.Context(), r, wasm, grants, true)
	if err != nil {
		t.Fatal(err)
	}
	return digest
}

// newHostAt starts a host from the config file at path, connects a go-sdk
// client in memory and returns it with the host's log.
func newHostAt(t *testing.T, path string) (*host.Host, *mcp.ClientSession, *syncBuffer, error) {
	t.Helper()
	return newHostWith(t, path, nil)
}

// newHostWith is newHostAt with the client's options.
func newHostWith(t *testing.T, path string, opts *mcp.ClientOptions) (*host.Host, *mcp.ClientSession, *syncBuffer, error) {
	t.Helper()
	cfg, err := host.LoadConfig(path)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		return nil, nil, logs, err
	}
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := h.Server().Connect(t.Context(), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts).Connect(t.Context(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		_ = h.Close(context.Background())
		if t.Failed() {
			t.Logf("host log:\n%s", logs.String())
		}
	})
	return h, cs, logs, nil
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// helloInRegistry starts a registry and pushes plugins/hello to it,
// unsigned, as plugins/hello:1 with grants; it returns the registry and
// the oci:// reference and the digest pushPlugin returned.
func helloInRegistry(t *testing.T, grants *registry.Grants) (reg *testutil.Registry, ref, digest string) {
	t.Helper()
	reg = testutil.StartRegistry(t)
	ref = "oci://" + reg.Addr + "/plugins/hello:1"
	return reg, ref, pushPlugin(t, ref, "plugins/hello", grants)
}

// unsignedRemoteConfig is a config that stores plugins in "store" and
// serves the plugin at ref, from a registry on loopback, unsigned, as
// "hello"; extra ends its [[plugin]] table.
func unsignedRemoteConfig(ref, extra string) string {
	return `[server]
plugin_store = "store"

[[plugin]]
name = "hello"
path = "` + ref + `"
insecure = true
skip_signature = true
` + extra
}

// echoHostAt starts a host from the config file at path (see newHostAt),
// failing the test if it does not start, and checks that its echo tool
// answers text. It returns the host, the client session and the host log.
func echoHostAt(t *testing.T, path, text string) (*host.Host, *mcp.ClientSession, *syncBuffer) {
	t.Helper()
	h, cs, logs, err := newHostAt(t, path)
	if err != nil {
		t.Fatalf("start the host: %v", err)
	}
	if _, got := callText(t, cs, "echo", map[string]any{"text": text}); got != text {
		t.Fatalf("echo = %q, want %q", got, text)
	}
	return h, cs, logs
}

// A plugin from a registry is served; its tag is pinned in the lock file,
// so a restart with the tag moved and the registry stopped serves the
// pinned one from the store; a fresh start with nothing stored and the
// registry stopped is a clear error.
func TestRegistryPluginPinnedAndOffline(t *testing.T) {
	reg, ref, digest := helloInRegistry(t, nil)

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "mcphost.toml")
	cfgText := unsignedRemoteConfig(ref, "")
	writeFile(t, cfgPath, cfgText)
	_, _, logs := echoHostAt(t, cfgPath, "from the registry")
	if !strings.Contains(logs.String(), "signature NOT verified") {
		t.Errorf("skip_signature was not warned about:\n%s", logs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "mcphost.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Sources map[string]struct{ Ref, Digest string }
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	if pin := lock.Sources["hello"]; pin.Ref != ref || pin.Digest != digest {
		t.Fatalf("lock pins %+v, want %s → %s", pin, ref, digest)
	}

	// The tag moves to another plugin, then the registry goes away.
	pushPlugin(t, ref, "testdata/plugins/faulty", nil)
	reg.Stop()
	echoHostAt(t, cfgPath, "pinned") // restarted with the registry stopped

	// Nothing stored, nothing pinned, no registry: refused, and why.
	other := filepath.Join(t.TempDir(), "mcphost.toml")
	writeFile(t, other, cfgText)
	_, _, _, err = newHostAt(t, other)
	if err == nil {
		t.Fatal("a host with nothing stored started with the registry stopped")
	}
	for _, want := range []string{`plugin "hello"`, ref, "nothing pinned"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A remote plugin without a verified signature is refused (naming the
// plugin and the reference) while the others keep serving; a config that
// adds one on reload leaves the running plugins as they were.
func TestRegistryPluginUnsignedRefused(t *testing.T) {
	_, ref, _ := helloInRegistry(t, nil)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "mcphost.toml")
	local := `[server]
plugin_store = "store"
watch = false

[[plugin]]
name = "local"
path = "` + testutil.GoPlugin(t, "plugins/hello") + `"
prefix = "local_"
`
	writeFile(t, cfgPath, local)
	h, cs, _, err := newHostAt(t, cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfgPath, local+`
[[plugin]]
name = "remote"
path = "`+ref+`"
insecure = true
trusted_keys = ["`+trustedKey(t, newSigningKey(t))+`"]
`)
	err = h.Reload(t.Context())
	if err == nil {
		t.Fatal("an unsigned remote plugin was loaded")
	}
	for _, want := range []string{`plugin "remote"`, ref, "signature not verified", "no signature"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, text := callText(t, cs, "local_echo", map[string]any{"text": "still"}); text != "still" {
		t.Fatalf("local_echo = %q", text)
	}
}

// The grants a plugin asks for in its artifact are never given because it
// asked: the host warns about those its config does not give.
func TestRegistryPluginAskedGrantsWarned(t *testing.T) {
	_, ref, _ := helloInRegistry(t, &registry.Grants{AllowedHosts: []string{"api.example.com", "given.example.com"}, Env: []string{"TOKEN"}})
	cfgPath := filepath.Join(t.TempDir(), "mcphost.toml")
	writeFile(t, cfgPath, unsignedRemoteConfig(ref, `allowed_hosts = ["given.example.com"]`+"\n"))
	_, _, logs := echoHostAt(t, cfgPath, "x")
	log := logs.String()
	if !strings.Contains(log, "asks for grants its config does not give") ||
		!strings.Contains(log, "network: api.example.com") || !strings.Contains(log, "environment: TOKEN") ||
		strings.Contains(log, "network: given.example.com") {
		t.Fatalf("asked-for grants not warned about as expected:\n%s", log)
	}
}

// A corrupted store entry is detected and fetched again.
func TestRegistryPluginCorruptStoreRefetched(t *testing.T) {
	_, ref, _ := helloInRegistry(t, nil)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "mcphost.toml")
	writeFile(t, cfgPath, unsignedRemoteConfig(ref, ""))
	echoHostAt(t, cfgPath, "stored")
	wasm, err := os.ReadFile(testutil.GoPlugin(t, "plugins/hello"))
	if err != nil {
		t.Fatal(err)
	}
	layer := filepath.Join(dir, "store", "sha256", strings.TrimPrefix(registry.Digest(wasm), "sha256:"))
	if err := os.WriteFile(layer, []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, logs := echoHostAt(t, cfgPath, "refetched")
	if !strings.Contains(logs.String(), "corrupt") {
		t.Errorf("the corrupt entry was not logged:\n%s", logs)
	}
}

// `mcphost plugin update` (UpdateSources) pins what a moved tag names now;
// a running host watching its lock file reloads and tells clients.
func TestRegistryPluginUpdateReloadsRunningHost(t *testing.T) {
	_, ref, _ := helloInRegistry(t, nil)
	cfgPath := filepath.Join(t.TempDir(), "mcphost.toml")
	writeFile(t, cfgPath, unsignedRemoteConfig(ref, ""))
	changed := make(chan struct{}, 1)
	_, cs, _, err := newHostWith(t, cfgPath, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	callText(t, cs, "echo", map[string]any{"text": "v1"})
	moved := pushPlugin(t, ref, "testdata/plugins/faulty", nil)

	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	updates, err := host.UpdateSources(t.Context(), cfg, nil, nil)
	if err != nil || len(updates) != 1 || updates[0].New != moved {
		t.Fatalf("update = %+v, %v; want hello pinned to %s", updates, err, moved)
	}
	select {
	case <-changed:
	case <-time.After(60 * time.Second): // a hang guard
		t.Fatal("no tools/list_changed after the update")
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "spin") || slices.Contains(names, "greet") {
		t.Fatalf("tools after the update = %v, want the moved tag's", names)
	}
}

func newSigningKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// trustedKey writes k's public key as PEM (as cosign.pub) and returns the
// file's path.
func trustedKey(t *testing.T, k *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cosign.pub")
	writeFile(t, path, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})))
	return path
}

// signPlugin signs what ref names now with k, as `mcphost plugin sign`.
func signPlugin(t *testing.T, ref string, k *ecdsa.PrivateKey) {
	t.Helper()
	r, err := registry.ParseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&registry.Client{Store: registry.Store{Dir: t.TempDir()}}).Sign(t.Context(), r, k, nil, true); err != nil {
		t.Fatal(err)
	}
}

// Signatures: by the trusted key, served (and again from the store with
// the registry stopped); by another key, refused; a tag moved to an
// unsigned plugin is not taken by update, and the old one keeps serving.
func TestRegistryPluginSignatures(t *testing.T) {
	reg := testutil.StartRegistry(t)
	trusted, other := newSigningKey(t), newSigningKey(t)
	good := "oci://" + reg.Addr + "/plugins/good:1"
	bad := "oci://" + reg.Addr + "/plugins/bad:1"
	pinned := pushPlugin(t, good, "plugins/hello", nil)
	signPlugin(t, good, trusted)
	pushPlugin(t, bad, "plugins/hello", &registry.Grants{MemoryMB: 1})
	signPlugin(t, bad, other)

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "mcphost.toml")
	base := `[server]
plugin_store = "store"
trusted_keys = ["` + trustedKey(t, trusted) + `"]

[[plugin]]
name = "good"
path = "` + good + `"
insecure = true
`
	writeFile(t, cfgPath, base+`
[[plugin]]
name = "bad"
path = "`+bad+`"
insecure = true
`)
	_, _, _, err := newHostAt(t, cfgPath)
	if err == nil {
		t.Fatal("a plugin signed by an untrusted key was loaded")
	}
	for _, want := range []string{`plugin "bad"`, bad, "no valid signature by a trusted key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), `plugin "good"`) {
		t.Errorf("the good plugin failed too: %v", err)
	}

	writeFile(t, cfgPath, base)
	h, cs, logs := echoHostAt(t, cfgPath, "signed")
	if strings.Contains(logs.String(), "NOT verified") {
		t.Errorf("a verified plugin was warned about:\n%s", logs)
	}

	// The tag moves to an unsigned plugin: update refuses it, says why.
	unsigned := pushPlugin(t, good, "testdata/plugins/faulty", nil)
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	updates, err := host.UpdateSources(t.Context(), cfg, []string{"good"}, nil)
	if err == nil || len(updates) != 0 {
		t.Fatalf("update took an unsigned plugin: %+v, %v", updates, err)
	}
	for _, want := range []string{`plugin "good"`, good, "no signature", "the pinned " + pinned + " stays"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("update error %q does not say %q", err, want)
		}
	}
	if _, text := callText(t, cs, "echo", map[string]any{"text": "still the signed one"}); text != "still the signed one" {
		t.Fatalf("echo = %q", text)
	}

	// A reload pointing the plugin at the unsigned one by digest fails
	// and the old generation keeps serving.
	writeFile(t, cfgPath, strings.Replace(base, good, strings.TrimSuffix(good, ":1")+"@"+unsigned, 1))
	err = h.Reload(t.Context())
	if err == nil || !strings.Contains(err.Error(), "no signature") || !strings.Contains(err.Error(), "previous version keeps serving") {
		t.Fatalf("reload to an unsigned digest: %v", err)
	}
	if _, text := callText(t, cs, "greet", map[string]any{"name": "old"}); !strings.Contains(text, "old") {
		t.Fatalf("greet after the refused reload = %q", text)
	}
	writeFile(t, cfgPath, base)

	// Registry stopped: a restart verifies the pinned plugin from the store.
	reg.Stop()
	_, cs2, _, err := newHostAt(t, cfgPath)
	if err != nil {
		t.Fatalf("restart with the registry stopped: %v", err)
	}
	if _, text := callText(t, cs2, "greet", map[string]any{"name": "store"}); !strings.Contains(text, "store") {
		t.Fatalf("greet = %q", text)
	}
}

// A keyless signer (trusted_root, signer_subject, signer_issuer) counts
// for its identity only.
func TestRegistryPluginKeyless(t *testing.T) {
	reg := testutil.StartRegistry(t)
	ca := testutil.NewSigningCA(t)
	const subject, issuer = "https://github.com/acme/hello/.github/workflows/release.yml@refs/tags/v1", "https://token.actions.example"
	ref := "oci://" + reg.Addr + "/plugins/keyless:1"
	pushPlugin(t, ref, "plugins/hello", nil)
	signer := newSigningKey(t)
	r, err := registry.ParseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&registry.Client{}).Sign(t.Context(), r, signer, ca.Issue(t, &signer.PublicKey, subject, issuer), true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		subject string
		ok      bool
	}{{subject, true}, {"https://github.com/evil/x", false}} {
		cfgPath := filepath.Join(t.TempDir(), "mcphost.toml")
		writeFile(t, cfgPath, `[server]
plugin_store = "store"
trusted_root = "`+ca.Root+`"
signer_subject = "`+tc.subject+`"
signer_issuer = "`+issuer+`"

[[plugin]]
name = "hello"
path = "`+ref+`"
insecure = true
`)
		if tc.ok {
			echoHostAt(t, cfgPath, "keyless")
			continue
		}
		if _, _, _, err := newHostAt(t, cfgPath); err == nil || !strings.Contains(err.Error(), `plugin "hello"`) || !strings.Contains(err.Error(), "no valid signature by "+tc.subject) {
			t.Fatalf("another identity: %v", err)
		}
	}
}

// With the lock file off a tag cannot be pinned, so it is refused (a
// digest is not): otherwise every reload could take a moved tag.
func TestRegistryPluginTagNeedsTheLockFile(t *testing.T) {
	reg, ref, digest := helloInRegistry(t, nil)
	cfg := `[server]
plugin_store = "store"
lock_file = "off"

[[plugin]]
name = "hello"
path = "%s"
insecure = true
skip_signature = true
`
	cfgPath := filepath.Join(t.TempDir(), "mcphost.toml")
	writeFile(t, cfgPath, fmt.Sprintf(cfg, ref))
	if _, _, _, err := newHostAt(t, cfgPath); err == nil || !strings.Contains(err.Error(), `plugin "hello"`) || !strings.Contains(err.Error(), "lock file, which is off") {
		t.Fatalf("a tag with the lock file off: %v", err)
	}
	writeFile(t, cfgPath, fmt.Sprintf(cfg, "oci://"+reg.Addr+"/plugins/hello@"+digest))
	echoHostAt(t, cfgPath, "by digest")
}

// A remote plugin whose module does not load is an error that names the
// plugin and its reference (it once said `from :`, the empty path of a
// plugin that has none), at start and on reload alike.
func TestRegistryPluginBrokenModuleNamesReference(t *testing.T) {
	reg := testutil.StartRegistry(t)
	ref := "oci://" + reg.Addr + "/plugins/broken:1"
	r, err := registry.ParseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	// A valid Wasm module that is no plugin: it exports nothing.
	c := &registry.Client{Store: registry.Store{Dir: t.TempDir()}}
	if _, err := c.Push(t.Context(), r, testutil.WAT(t, "(module)"), nil, true); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "mcphost.toml")
	writeFile(t, cfgPath, unsignedRemoteConfig(ref, ""))
	_, _, _, err = newHostAt(t, cfgPath)
	if err == nil {
		t.Fatal("a module that is no plugin was loaded")
	}
	if want := `load plugin "hello" from ` + ref + ": "; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

// A plugin signed by the real cosign (`cosign sign --new-bundle-format`,
// on a registry without the referrers API) is served with the cosign.pub
// of its key, and again from the store with the registry stopped; with
// another key it is refused, saying why.
func TestRegistryPluginSignedWithCosign(t *testing.T) {
	cosign := testutil.FindCosign(t)
	reg, ref, digest := helloInRegistry(t, nil)
	key, pub := cosign.GenerateKeyPair(t)
	r, err := registry.ParseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	cosign.Run(t, testutil.SignArgs(key, r.Repo()+"@"+digest, true)...)
	config := func(key string) string {
		return `[server]
plugin_store = "store"
trusted_keys = ["` + key + `"]

[[plugin]]
name = "hello"
path = "` + ref + `"
insecure = true
`
	}
	other := filepath.Join(t.TempDir(), "mcphost.toml")
	writeFile(t, other, config(trustedKey(t, newSigningKey(t))))
	_, _, _, err = newHostAt(t, other)
	if err == nil {
		t.Fatal("a plugin signed by an untrusted key was loaded")
	}
	for _, want := range []string{`plugin "hello"`, ref, "no valid signature by a trusted key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	cfgPath := filepath.Join(t.TempDir(), "mcphost.toml")
	writeFile(t, cfgPath, config(pub))
	_, _, logs := echoHostAt(t, cfgPath, "signed by cosign")
	if strings.Contains(logs.String(), "NOT verified") {
		t.Errorf("a verified plugin was warned about:\n%s", logs)
	}
	reg.Stop()
	echoHostAt(t, cfgPath, "verified from the store")
}
