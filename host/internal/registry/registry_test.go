package registry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/file"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/mcphost/mcphost/internal/testutil"
)

func noCredentials(context.Context, string) (auth.Credential, error) {
	return auth.EmptyCredential, nil
}

func testClient(t *testing.T) *Client {
	return &Client{Store: Store{Dir: t.TempDir()}, Credential: noCredentials}
}

// newRegistry starts a registry and returns it with a client whose store
// is a temporary directory.
func newRegistry(t *testing.T) (*testutil.Registry, *Client) {
	t.Helper()
	return testutil.StartRegistry(t), testClient(t)
}

// mustPush pushes wasm to ref with c, with no grants, over plain HTTP, and
// returns the digest of its manifest.
func mustPush(t *testing.T, c *Client, ref Ref, wasm []byte) string {
	t.Helper()
	digest, err := c.Push(t.Context(), ref, wasm, nil, true)
	if err != nil {
		t.Fatalf("push %s: %v", ref.Raw, err)
	}
	return digest
}

func mustRef(t *testing.T, s string) Ref {
	t.Helper()
	r, err := ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A plugin pushed as a Wasm OCI artifact is pulled back byte for byte with
// its requested grants, opened again from the store alone, and read by
// oras-go's file store (what `oras pull` uses) as plugin.wasm.
func TestPushPullOpen(t *testing.T) {
	reg := testutil.StartRegistry(t)
	wasm, err := os.ReadFile(testutil.GoPlugin(t, "plugins/hello"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := testClient(t)
	ref := mustRef(t, "oci://"+reg.Addr+"/plugins/hello:1.0")
	grants := &Grants{AllowedHosts: []string{"api.example.com"}, Env: []string{"TOKEN"}, MemoryMB: 64}
	pushed, err := c.Push(ctx, ref, wasm, grants, true)
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := c.Resolve(ctx, ref, true)
	if err != nil || resolved != pushed {
		t.Fatalf("resolve = %q, %v; want the pushed %s", resolved, err, pushed)
	}
	if _, err := c.Open(pushed); !errors.Is(err, ErrNotStored) {
		t.Fatalf("open before pull: %v, want ErrNotStored", err)
	}
	m, err := c.Pull(ctx, ref, pushed, true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Wasm, wasm) || m.Digest != pushed {
		t.Fatalf("pulled %d bytes, digest %s", len(m.Wasm), m.Digest)
	}
	if m.Grants == nil || m.Grants.MemoryMB != 64 || m.Grants.AllowedHosts[0] != "api.example.com" || m.Grants.Env[0] != "TOKEN" {
		t.Fatalf("grants = %+v", m.Grants)
	}
	reg.Stop()
	again, err := c.Open(pushed)
	if err != nil || !bytes.Equal(again.Wasm, wasm) {
		t.Fatalf("open from the store with the registry stopped: %v", err)
	}
	if _, err := c.Resolve(ctx, ref, true); err == nil {
		t.Fatal("resolve with the registry stopped succeeded")
	}

	reg.Restart()
	repo, err := c.repository(ref, true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fs, err := file.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	if _, err := oras.Copy(ctx, repo, "1.0", fs, "1.0", oras.DefaultCopyOptions); err != nil {
		t.Fatalf("oras pull: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "plugin.wasm"))
	if err != nil || !bytes.Equal(got, wasm) {
		t.Fatalf("oras pull wrote plugin.wasm: %v", err)
	}
}

// A store entry whose bytes changed is detected on read and removed, so the
// next use fetches it again.
func TestCorruptStoreEntry(t *testing.T) {
	reg, c := newRegistry(t)
	ctx := context.Background()
	ref := mustRef(t, "oci://"+reg.Addr+"/plugins/x:1")
	wasm := testutil.WAT(t, "(module)")
	digest := mustPush(t, c, ref, wasm)
	if _, err := c.Pull(ctx, ref, digest, true); err != nil {
		t.Fatal(err)
	}
	layer := filepath.Join(c.Store.Dir, "sha256", strings.TrimPrefix(Digest(wasm), "sha256:"))
	if err := os.WriteFile(layer, []byte("not the plugin"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(digest); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open of a corrupt entry: %v, want ErrCorrupt", err)
	}
	if _, err := os.Stat(layer); !os.IsNotExist(err) {
		t.Fatalf("the corrupt entry is still there: %v", err)
	}
	m, err := c.Pull(ctx, ref, digest, true)
	if err != nil || !bytes.Equal(m.Wasm, wasm) {
		t.Fatalf("pull again: %v", err)
	}
}

// hyper-mcp publishes a plugin as an image whose one layer is a tar.gz
// holding plugin.wasm: it is read too.
func TestPullHyperMCPImage(t *testing.T) {
	reg, c := newRegistry(t)
	ctx := context.Background()
	ref := mustRef(t, "oci://"+reg.Addr+"/hyper/plugin:latest")
	wasm := testutil.WAT(t, "(module)")
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		body []byte
	}{{"README", []byte("hi")}, {"plugin.wasm", wasm}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(f.body)
	}
	tw.Close()
	gz.Close()
	repo, err := c.repository(ref, true)
	if err != nil {
		t.Fatal(err)
	}
	layer := content.NewDescriptorFromBytes(ocispec.MediaTypeImageLayerGzip, buf.Bytes())
	if err := repo.Push(ctx, layer, bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_0, ocispec.MediaTypeImageConfig, oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, "latest"); err != nil {
		t.Fatal(err)
	}
	m, err := c.Pull(ctx, ref, desc.Digest.String(), true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Wasm, wasm) {
		t.Fatal("the image's plugin.wasm was not the one read")
	}
}

// A layer larger than the cap is refused before it is downloaded.
func TestPullSizeCap(t *testing.T) {
	reg, c := newRegistry(t)
	ref := mustRef(t, "oci://"+reg.Addr+"/plugins/big:1")
	digest := mustPush(t, c, ref, bytes.Repeat([]byte{0}, 4096))
	c.MaxBytes = 1024
	_, err := c.Pull(context.Background(), ref, digest, true)
	if err == nil || !strings.Contains(err.Error(), "1024-byte cap") || !strings.Contains(err.Error(), ref.Raw) {
		t.Fatalf("pull over the cap: %v", err)
	}
}

// A registry that serves other bytes than the digest names is caught, and
// nothing is stored.
func TestPullDigestMismatch(t *testing.T) {
	reg, c := newRegistry(t)
	ctx := context.Background()
	ref := mustRef(t, "oci://"+reg.Addr+"/plugins/tampered:1")
	wasm := testutil.WAT(t, "(module (memory 1))")
	digest := mustPush(t, c, ref, wasm)
	blob := reg.BlobPath(Digest(wasm))
	tampered := bytes.Clone(wasm)
	tampered[len(tampered)-1] ^= 0xff
	if err := os.WriteFile(blob, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := c.Pull(ctx, ref, digest, true)
	if err == nil || !strings.Contains(err.Error(), ref.Raw) || !strings.Contains(strings.ToLower(err.Error()), "digest") {
		t.Fatalf("pull of a tampered layer: %v", err)
	}
	if _, err := c.Open(digest); !errors.Is(err, ErrNotStored) {
		t.Fatalf("after a failed pull the store has: %v", err)
	}
}

// An https:// plugin is checked against its sha256 before it is stored;
// once stored it needs no network.
func TestFetchURL(t *testing.T) {
	wasm := testutil.WAT(t, "(module)")
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/other.wasm" {
			w.Write([]byte("not the plugin"))
			return
		}
		w.Write(wasm)
	}))
	c := testClient(t)
	c.HTTP = srv.Client()
	sum := strings.TrimPrefix(Digest(wasm), "sha256:")
	_, err := c.FetchURL(context.Background(), mustRef(t, srv.URL+"/other.wasm"), sum)
	if err == nil || !strings.Contains(err.Error(), "digest mismatch") || !strings.Contains(err.Error(), "/other.wasm") {
		t.Fatalf("fetch of other bytes: %v", err)
	}
	ref := mustRef(t, srv.URL+"/plugin.wasm")
	if b, err := c.FetchURL(context.Background(), ref, sum); err != nil || !bytes.Equal(b, wasm) {
		t.Fatalf("fetch: %v", err)
	}
	srv.Close()
	if b, err := c.FetchURL(context.Background(), ref, sum); err != nil || !bytes.Equal(b, wasm) {
		t.Fatalf("fetch from the store with the server gone: %v", err)
	}
}

// Credentials come from the Docker config (DOCKER_CONFIG/config.json);
// without them the registry refuses, and no error shows the password.
func TestDockerConfigCredentials(t *testing.T) {
	const user, password = "plugin-author", "s3cret-Pa55word"
	reg := testutil.StartRegistryWithAuth(t, user, password)
	ctx := context.Background()
	ref := mustRef(t, "oci://"+reg.Addr+"/private/hello:1")
	wasm := testutil.WAT(t, "(module)")

	t.Setenv("DOCKER_CONFIG", t.TempDir()) // an empty Docker config
	_, err := (&Client{Store: Store{Dir: t.TempDir()}}).Push(ctx, ref, wasm, nil, true)
	if err == nil {
		t.Fatal("pushed without credentials")
	}
	if strings.Contains(err.Error(), password) {
		t.Fatalf("the error shows the password: %v", err)
	}

	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"auths":{"`+reg.Addr+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
	c := &Client{Store: Store{Dir: t.TempDir()}}
	digest, err := c.Push(ctx, ref, wasm, nil, true)
	if err != nil {
		t.Fatalf("push with the Docker config's credentials: %v", err)
	}
	m, err := c.Pull(ctx, ref, digest, true)
	if err != nil || !bytes.Equal(m.Wasm, wasm) {
		t.Fatalf("pull with the Docker config's credentials: %v", err)
	}
}
