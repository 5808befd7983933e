package registry

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

	"github.com/mcphost/mcphost/internal/testutil"
)

// cosignClassicSign attaches a signature of digest (claimed: the digest the
// payload names) the way `cosign sign --key` does without the new bundle
// format: a simple-signing payload layer, its signature in an annotation,
// under the tag sha256-<hex>.sig.
func cosignClassicSign(t *testing.T, c *Client, ref Ref, digest, claimed string, key *ecdsa.PrivateKey) {
	t.Helper()
	ctx := context.Background()
	repo, err := c.repository(ref, true)
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte(fmt.Sprintf(`{"critical":{"identity":{"docker-reference":%q},"image":{"docker-manifest-digest":%q},"type":"cosign container image signature"},"optional":null}`, ref.Repo(), claimed))
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	layer := content.NewDescriptorFromBytes(mediaTypeSimpleSigning, payload)
	if err := repo.Push(ctx, layer, bytes.NewReader(payload)); err != nil {
		t.Fatal(err)
	}
	layer.Annotations = map[string]string{annotationCosignSig: base64.StdEncoding.EncodeToString(sig)}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_0, ocispec.MediaTypeImageConfig, oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, classicSignatureTag(digest)); err != nil {
		t.Fatal(err)
	}
}

// cosign's classic sha256-<digest>.sig signatures are read as a fallback:
// by the trusted key, verified; by another key, or naming another
// manifest, not.
func TestCosignClassicSignature(t *testing.T) {
	reg := testutil.StartRegistry(t)
	ctx := context.Background()
	c := testClient(t)
	trusted, other := newKey(t), newKey(t)
	for _, tc := range []struct {
		name    string
		key     *ecdsa.PrivateKey
		another bool
		want    string
	}{
		{"trusted", trusted, false, ""},
		{"other key", other, false, "by no trusted key"},
		{"another manifest", trusted, true, "of another manifest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := mustRef(t, "oci://"+reg.Addr+"/classic/"+strings.ReplaceAll(tc.name, " ", "-")+":1")
			digest, err := c.Push(ctx, ref, testutil.WAT(t, "(module)"), &Grants{Env: []string{tc.name}}, true)
			if err != nil {
				t.Fatal(err)
			}
			claimed := digest
			if tc.another {
				claimed = "sha256:" + strings.Repeat("ab", 32)
			}
			cosignClassicSign(t, c, ref, digest, claimed, tc.key)
			m, err := c.Pull(ctx, ref, digest, true)
			if err != nil {
				t.Fatal(err)
			}
			err = Verify(digest, m.Signatures, []crypto.PublicKey{&trusted.PublicKey})
			if tc.want == "" && err != nil {
				t.Fatalf("verify: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("verify: %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// referrerIndex returns the artifact types listed in the referrers tag
// schema's index of digest (the tag sha256-<hex>, where a client writes
// the referrers of a manifest on a registry without the referrers API).
func referrerIndex(t *testing.T, c *Client, ref Ref, digest string) []string {
	t.Helper()
	repo, err := c.repository(ref, true)
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := oras.FetchBytes(context.Background(), repo, strings.Replace(digest, ":", "-", 1), oras.DefaultFetchBytesOptions)
	if err != nil {
		t.Fatalf("the referrers tag schema's index: %v", err)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, m := range idx.Manifests {
		types = append(types, m.ArtifactType)
	}
	return types
}

// What the real cosign writes is read and verified: `cosign sign
// --new-bundle-format` (a DSSE bundle as an OCI referrer; on this registry,
// which has no referrers API, in the referrers tag schema, whose index
// cosign 2.6 lists with the empty descriptor's artifact type) and the
// classic `cosign sign` (the sha256-<hex>.sig tag). Each verifies with the
// cosign.pub of its key and with no other key. `cosign attest` by the same
// key, an attestation about the manifest and not a signature, does not
// count. And the real cosign verifies what `mcphost plugin sign` writes.
func TestRealCosign(t *testing.T) {
	cosign := testutil.FindCosign(t)
	reg := testutil.StartRegistry(t)
	ctx := context.Background()
	key, pub := cosign.GenerateKeyPair(t)
	trusted, err := LoadPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	other := newKey(t)
	push := func(t *testing.T, name string) (Ref, string) {
		ref := mustRef(t, "oci://"+reg.Addr+"/cosign/"+name+":1")
		digest, err := testClient(t).Push(ctx, ref, testutil.WAT(t, "(module)"), &Grants{Env: []string{name}}, true)
		if err != nil {
			t.Fatal(err)
		}
		return ref, digest
	}
	pull := func(t *testing.T, ref Ref, digest string) [][]byte {
		m, err := testClient(t).Pull(ctx, ref, digest, true)
		if err != nil {
			t.Fatal(err)
		}
		return m.Signatures
	}
	for _, tc := range []struct {
		name      string
		newBundle bool
	}{{"new-bundle-format", true}, {"classic", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ref, digest := push(t, tc.name)
			image := ref.Repo() + "@" + digest
			cosign.Run(t, testutil.SignArgs(key, image, tc.newBundle)...)
			if tc.newBundle {
				t.Logf("cosign %s lists its bundle in the referrers index as %q", testutil.CosignVersion, referrerIndex(t, testClient(t), ref, digest))
			}
			sigs := pull(t, ref, digest)
			if len(sigs) != 1 {
				t.Fatalf("pulled %d signatures, want cosign's one", len(sigs))
			}
			if err := Verify(digest, sigs, []crypto.PublicKey{trusted}); err != nil {
				t.Fatalf("verify with cosign.pub: %v", err)
			}
			if err := Verify(digest, sigs, []crypto.PublicKey{&other.PublicKey}); err == nil || !strings.Contains(err.Error(), "by no trusted key") {
				t.Fatalf("verify with another key: %v, want it refused", err)
			}
		})
	}
	t.Run("attestation", func(t *testing.T) {
		ref, digest := push(t, "attested")
		predicate := filepath.Join(t.TempDir(), "predicate.json")
		if err := os.WriteFile(predicate, []byte(`{"scanned":"clean"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		cosign.Run(t, "attest", "--key", key, "--predicate", predicate, "--type", "https://example.com/scan/v1",
			"--tlog-upload=false", "--new-bundle-format", "--use-signing-config=false", "--allow-http-registry", "--yes", ref.Repo()+"@"+digest)
		sigs := pull(t, ref, digest)
		if len(sigs) != 1 {
			t.Fatalf("pulled %d bundles, want cosign's attestation", len(sigs))
		}
		err := Verify(digest, sigs, []crypto.PublicKey{trusted})
		if err == nil || !strings.Contains(err.Error(), "an attestation of predicate type") {
			t.Fatalf("verify an attestation: %v, want it refused as not a signature", err)
		}
	})
	t.Run("cosign verifies mcphost's", func(t *testing.T) {
		ref, digest := push(t, "mcphost-signed")
		signer := newKey(t)
		if _, err := testClient(t).Sign(ctx, ref, signer, nil, true); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		writePub := func(name string, k *ecdsa.PrivateKey) string {
			der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
				t.Fatal(err)
			}
			return path
		}
		// An empty trusted root: no transparency log, no CA, nothing
		// fetched from the public Sigstore TUF repository.
		root := filepath.Join(dir, "trusted_root.json")
		if err := os.WriteFile(root, []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		verify := func(pub string) (string, error) {
			return cosign.Try("verify", "--key", pub, "--trusted-root", root, "--insecure-ignore-tlog", "--allow-http-registry", ref.Repo()+"@"+digest)
		}
		if out, err := verify(writePub("signer.pub", signer)); err != nil || !strings.Contains(out, digest) {
			t.Fatalf("cosign verify with the signer's key: %v\n%s", err, out)
		}
		if out, err := verify(writePub("other.pub", other)); err == nil {
			t.Fatalf("cosign verify with another key succeeded:\n%s", out)
		}
	})
}
