package registry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// Media types of a plugin in a registry.
const (
	// MediaTypeWasmLayer is the Wasm OCI artifact's layer (what `mcphost
	// plugin push` writes, and wasm-pkg-tools and wassette read).
	MediaTypeWasmLayer = "application/vnd.wasm.content.layer.v1+wasm"
	// MediaTypeWasm is the plain Wasm media type, also seen as a layer.
	MediaTypeWasm = "application/wasm"
	// ArtifactType is the artifact type `mcphost plugin push` gives a
	// plugin's manifest.
	ArtifactType = "application/vnd.mcphost.plugin.v1+wasm"
	// AnnotationGrants is the manifest annotation holding the grants a
	// plugin asks for, as JSON (see Grants and abi/ABI.md).
	AnnotationGrants = "dev.mcphost.plugin.grants"
)

// Defaults of a Client's bounds.
const (
	DefaultMaxBytes = 256 << 20
	DefaultTimeout  = 2 * time.Minute
	maxManifest     = 4 << 20
)

// Grants are what a plugin asks to be granted; the host never grants them
// because they are asked for, it only shows and compares them.
type Grants struct {
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
	AllowedPaths []string `json:"allowed_paths,omitempty"`
	Env          []string `json:"env,omitempty"`
	MemoryMB     int      `json:"memory_mb,omitempty"`
}

// Module is a plugin read from the store.
type Module struct {
	// Digest is the manifest's digest (oci) or the file's (https).
	Digest string
	// Wasm is the plugin's module.
	Wasm []byte
	// Grants are the grants the artifact asks for (nil: it says nothing).
	Grants *Grants
	// Signatures are the Sigstore bundles attached to the manifest when it
	// was pulled (see Verify).
	Signatures [][]byte
}

// Client fetches plugins into a Store and pushes them to registries.
type Client struct {
	// Store receives what is fetched.
	Store Store
	// MaxBytes caps any one download (DefaultMaxBytes when 0).
	MaxBytes int64
	// Timeout bounds each fetch or push as a whole (DefaultTimeout when 0).
	Timeout time.Duration
	// HTTP is the client spoken through (nil: oras-go's retrying default).
	HTTP *http.Client
	// Credential resolves a registry's credentials (nil: the Docker config,
	// ~/.docker/config.json and its credential helpers). Credentials are
	// never logged or put in errors.
	Credential auth.CredentialFunc
}

func (c *Client) maxBytes() int64 {
	if c.MaxBytes > 0 {
		return c.MaxBytes
	}
	return DefaultMaxBytes
}

func (c *Client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	t := c.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return context.WithTimeout(ctx, t)
}

func (c *Client) repository(ref Ref, insecure bool) (*remote.Repository, error) {
	if ref.Scheme != SchemeOCI {
		return nil, fmt.Errorf("%s is not an oci:// reference", ref)
	}
	repo, err := remote.NewRepository(ref.Repo())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	repo.PlainHTTP = insecure && ref.Loopback()
	repo.MaxMetadataBytes = maxManifest
	cred := c.Credential
	if cred == nil {
		store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("registry credentials (Docker config): %w", err)
		}
		cred = credentials.Credential(store)
	}
	httpClient := c.HTTP
	if httpClient == nil {
		httpClient = retry.DefaultClient
	}
	repo.Client = &auth.Client{Client: httpClient, Credential: cred, Cache: auth.NewCache()}
	return repo, nil
}

// Resolve asks the registry which manifest digest ref's tag names now
// (ref's own digest when it names one).
func (c *Client) Resolve(ctx context.Context, ref Ref, insecure bool) (string, error) {
	if ref.Digest != "" {
		return ref.Digest, nil
	}
	repo, err := c.repository(ref, insecure)
	if err != nil {
		return "", err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	desc, err := repo.Resolve(ctx, ref.Tag)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	return desc.Digest.String(), nil
}

// Open reads the plugin of manifest digest from the store, without the
// network: ErrNotStored or ErrCorrupt when it cannot.
func (c *Client) Open(digest string) (*Module, error) {
	mb, err := c.Store.Read(digest)
	if err != nil {
		return nil, err
	}
	m, layer, err := pluginLayer(mb)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", digest, err)
	}
	lb, err := c.Store.Read(layer.Digest.String())
	if err != nil {
		return nil, err
	}
	wasm, err := wasmOf(layer, lb, c.maxBytes())
	if err != nil {
		return nil, fmt.Errorf("manifest %s: layer %s: %w", digest, layer.Digest, err)
	}
	sigs, err := c.Store.ReadSignatures(digest)
	if err != nil {
		return nil, err
	}
	mod := &Module{Digest: digest, Wasm: wasm, Signatures: sigs}
	if g, ok := m.Annotations[AnnotationGrants]; ok {
		mod.Grants = &Grants{}
		if err := json.Unmarshal([]byte(g), mod.Grants); err != nil {
			return nil, fmt.Errorf("manifest %s: annotation %s is not valid: %w", digest, AnnotationGrants, err)
		}
	}
	return mod, nil
}

// Pull fetches the manifest digest of ref's repository and its plugin layer
// into the store (each verified against its digest and the size cap) and
// returns the plugin.
func (c *Client) Pull(ctx context.Context, ref Ref, digest string, insecure bool) (*Module, error) {
	repo, err := c.repository(ref, insecure)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	desc, err := repo.Resolve(ctx, digest)
	if err != nil {
		return nil, fmt.Errorf("pull %s (%s): %w", ref, digest, err)
	}
	if desc.Digest.String() != digest {
		return nil, fmt.Errorf("pull %s: the registry answered %s for %s", ref, desc.Digest, digest)
	}
	if desc.Size > maxManifest {
		return nil, fmt.Errorf("pull %s: the manifest is %d bytes, more than the %d-byte cap", ref, desc.Size, maxManifest)
	}
	mb, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		return nil, fmt.Errorf("pull %s: manifest: %w", ref, err)
	}
	_, layer, err := pluginLayer(mb)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref, err)
	}
	if layer.Size > c.maxBytes() {
		return nil, fmt.Errorf("pull %s: the plugin layer is %d bytes, more than the %d-byte cap", ref, layer.Size, c.maxBytes())
	}
	rc, err := repo.Fetch(ctx, layer)
	if err != nil {
		return nil, fmt.Errorf("pull %s: layer %s: %w", ref, layer.Digest, err)
	}
	lb, err := readAtMost(rc, c.maxBytes(), "the plugin layer")
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("pull %s: layer %s: %w", ref, layer.Digest, err)
	}
	if err := c.Store.Write(layer.Digest.String(), lb); err != nil {
		return nil, fmt.Errorf("pull %s: layer: %w", ref, err)
	}
	bundles, err := fetchBundles(ctx, repo, desc)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref, err)
	}
	classic, err := fetchClassic(ctx, repo, digest)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref, err)
	}
	bundles = append(bundles, classic...)
	if err := c.Store.WriteSignatures(digest, bundles); err != nil {
		return nil, fmt.Errorf("pull %s: signatures: %w", ref, err)
	}
	// The manifest last: a stored manifest means its plugin is complete.
	if err := c.Store.Write(digest, mb); err != nil {
		return nil, fmt.Errorf("pull %s: manifest: %w", ref, err)
	}
	return c.Open(digest)
}

// FetchURL downloads an https:// plugin, verifies it against sha256 (hex)
// and stores it; a stored copy is used without the network.
func (c *Client) FetchURL(ctx context.Context, ref Ref, sha256Hex string) ([]byte, error) {
	digest := "sha256:" + sha256Hex
	if b, err := c.Store.Read(digest); err == nil {
		return b, nil
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ref.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", ref, err)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", ref, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: %s", ref, resp.Status)
	}
	b, err := readAtMost(resp.Body, c.maxBytes(), "the plugin")
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", ref, err)
	}
	if got := Digest(b); got != digest {
		return nil, fmt.Errorf("fetch %s: digest mismatch: sha256 pins %s, the download is %s", ref, digest, got)
	}
	if err := c.Store.Write(digest, b); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", ref, err)
	}
	return b, nil
}

// Push publishes wasm to ref (which must name a tag) as a Wasm OCI
// artifact, with grants (if any) in the manifest's AnnotationGrants, and
// returns the manifest's digest. `oras pull` writes the layer out as
// plugin.wasm.
func (c *Client) Push(ctx context.Context, ref Ref, wasm []byte, grants *Grants, insecure bool) (string, error) {
	if ref.Tag == "" {
		return "", fmt.Errorf("push %s: the reference needs a tag", ref)
	}
	repo, err := c.repository(ref, insecure)
	if err != nil {
		return "", err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	layer := content.NewDescriptorFromBytes(MediaTypeWasmLayer, wasm)
	layer.Annotations = map[string]string{ocispec.AnnotationTitle: "plugin.wasm"}
	if err := repo.Push(ctx, layer, bytes.NewReader(wasm)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return "", fmt.Errorf("push %s: layer: %w", ref, err)
	}
	annotations := map[string]string{}
	if grants != nil {
		g, err := json.Marshal(grants)
		if err != nil {
			return "", err
		}
		annotations[AnnotationGrants] = string(g)
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{
		Layers:              []ocispec.Descriptor{layer},
		ManifestAnnotations: annotations,
	})
	if err != nil {
		return "", fmt.Errorf("push %s: manifest: %w", ref, err)
	}
	if err := repo.Tag(ctx, desc, ref.Tag); err != nil {
		return "", fmt.Errorf("push %s: tag: %w", ref, err)
	}
	return desc.Digest.String(), nil
}

// pluginLayer finds the layer holding the plugin in a manifest: a Wasm
// layer, else (hyper-mcp's image form) the one tar layer.
func pluginLayer(mb []byte) (ocispec.Manifest, ocispec.Descriptor, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return m, ocispec.Descriptor{}, fmt.Errorf("not a manifest: %w", err)
	}
	if m.MediaType == ocispec.MediaTypeImageIndex || bytes.Contains(mb, []byte(`"manifests"`)) {
		return m, ocispec.Descriptor{}, errors.New("an image index, not a plugin's manifest (name the platform's manifest by digest)")
	}
	var tars []ocispec.Descriptor
	for _, l := range m.Layers {
		switch {
		case l.MediaType == MediaTypeWasmLayer || l.MediaType == MediaTypeWasm:
			return m, l, nil
		case isTar(l.MediaType):
			tars = append(tars, l)
		}
	}
	if len(tars) == 1 {
		return m, tars[0], nil
	}
	return m, ocispec.Descriptor{}, fmt.Errorf("no plugin layer (expected one %s or %s layer, or an image with one layer holding a .wasm file)", MediaTypeWasmLayer, MediaTypeWasm)
}

func isTar(mt string) bool {
	return strings.HasPrefix(mt, ocispec.MediaTypeImageLayer) || strings.HasPrefix(mt, "application/vnd.docker.image.rootfs.diff.tar")
}

// wasmOf returns the module in a layer: the layer itself, or the one .wasm
// file in a tar (gzip-compressed or not) layer.
func wasmOf(layer ocispec.Descriptor, b []byte, max int64) ([]byte, error) {
	if !isTar(layer.MediaType) {
		return b, nil
	}
	var r io.Reader = bytes.NewReader(b)
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	var wasm []byte
	var name string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the tar layer: %w", err)
		}
		if h.Typeflag != tar.TypeReg || path.Ext(h.Name) != ".wasm" {
			continue
		}
		if wasm != nil {
			return nil, fmt.Errorf("the layer holds more than one .wasm file (%s, %s)", name, h.Name)
		}
		if wasm, err = readAtMost(tr, max, h.Name); err != nil {
			return nil, err
		}
		name = h.Name
	}
	if wasm == nil {
		return nil, errors.New("the layer holds no .wasm file")
	}
	return wasm, nil
}
