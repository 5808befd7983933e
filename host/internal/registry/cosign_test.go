package registry

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
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
