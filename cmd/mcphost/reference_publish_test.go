package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testutil"
)

// referencePlugins are the plugins that replace the MCP reference servers;
// each folder holds a grants.json of what it asks for.
var referencePlugins = []string{"filesystem", "memory", "sequential-thinking", "fetch", "time"}

// Each plugin replacing a reference server is published as a user would
// publish it: pushed with the grants of its grants.json in its manifest
// (read back from the registry), and signed.
func TestReferencePluginsPublishWithTheirGrants(t *testing.T) {
	reg := testutil.StartRegistry(t)
	t.Setenv("HOME", t.TempDir())
	key := filepath.Join(t.TempDir(), "cosign.key")
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	root := testutil.RepoRoot(t)
	for _, name := range referencePlugins {
		wasm := testutil.GoPlugin(t, "plugins/"+name)
		asks := filepath.Join(root, "plugins", name, "grants.json")
		want, err := os.ReadFile(asks)
		if err != nil {
			t.Fatalf("plugin %s: %v", name, err)
		}
		ref := "oci://" + reg.Addr + "/mcphost/" + name + ":1"
		if out, errOut, err := runCLI(t, "plugin", "push", "--insecure", "--asks", asks, wasm, ref); err != nil {
			t.Fatalf("push %s: %v\n%s%s", name, err, out, errOut)
		}
		if out, errOut, err := runCLI(t, "plugin", "sign", "--insecure", "--key", key, ref); err != nil {
			t.Fatalf("sign %s: %v\n%s%s", name, err, out, errOut)
		}
		got := manifestGrants(t, "http://"+reg.Addr+"/v2/mcphost/"+name+"/manifests/1")
		var wantGrants any
		if err := json.Unmarshal(want, &wantGrants); err != nil {
			t.Fatalf("%s: %v", asks, err)
		}
		if !reflect.DeepEqual(got, wantGrants) {
			t.Errorf("plugin %s: the manifest asks for %v, grants.json for %v", name, got, wantGrants)
		}
	}
}

// `--asks` refuses a file that is not what a manifest annotation holds,
// naming the file, instead of publishing a plugin without its asks.
func TestPushAsksFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, want string }{
		{`{"allowed_host": ["x"]}`, `unknown field "allowed_host"`},
		{`{"allowed_hosts": "x"}`, "want a JSON object"},
		{`{"memory_mb": -1}`, "memory_mb is negative"},
		{`{} {}`, "more than one JSON value"},
	} {
		file := filepath.Join(dir, "grants.json")
		if err := os.WriteFile(file, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := runCLI(t, "plugin", "push", "--asks", file, "x.wasm", "oci://127.0.0.1:1/x:1")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), file) {
			t.Errorf("--asks %s: %v, want an error saying %q", tc.body, err, tc.want)
		}
	}
	if _, _, err := runCLI(t, "plugin", "push", "--asks", filepath.Join(dir, "missing.json"), "x.wasm", "oci://127.0.0.1:1/x:1"); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("--asks of a missing file: %v", err)
	}
}

// manifestGrants reads the requested-grants annotation of the manifest at
// url (nil when it has none).
func manifestGrants(t *testing.T, url string) any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("manifest %s: %v", url, err)
	}
	a, ok := m.Annotations["dev.mcphost.plugin.grants"]
	if !ok {
		return map[string]any{}
	}
	var g any
	if err := json.Unmarshal([]byte(a), &g); err != nil {
		t.Fatalf("annotation %q: %v", a, err)
	}
	return g
}
