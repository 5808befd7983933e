package registry

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
)

// MediaTypeBundle is a Sigstore bundle: the artifact type of a signature
// attached to a plugin's manifest (OCI 1.1 referrers), and its layer's.
const MediaTypeBundle = "application/vnd.dev.sigstore.bundle.v0.3+json"

const maxBundle = 1 << 20

// cosignSignPredicate is the predicate type of the in-toto statement that
// `cosign sign --new-bundle-format` signs: a DSSE envelope whose subject is
// the manifest's digest.
const cosignSignPredicate = "https://sigstore.dev/cosign/sign/v1"

// payloadTypeInToto is the DSSE payload type of an in-toto statement.
const payloadTypeInToto = "application/vnd.in-toto+json"

// cosignStatement is the in-toto statement cosign signs for the manifest
// digest: the manifest as its one subject, cosign's signing predicate
// type, no predicate.
func cosignStatement(digest string) ([]byte, error) {
	type subject struct {
		Digest map[string]string `json:"digest"`
	}
	return json.Marshal(struct {
		Type          string    `json:"_type"`
		Subject       []subject `json:"subject"`
		PredicateType string    `json:"predicateType"`
	}{
		Type:          "https://in-toto.io/Statement/v1",
		Subject:       []subject{{Digest: map[string]string{"sha256": strings.TrimPrefix(digest, "sha256:")}}},
		PredicateType: cosignSignPredicate,
	})
}

// signatureContent refuses a bundle that is not a signature of approval.
// A message signature is one (what `mcphost plugin sign` makes). A DSSE
// envelope is one only as cosign's signing statement: an in-toto statement
// of predicate type cosignSignPredicate. An attestation about the manifest
// by the same key (provenance, an SBOM, a scan: `cosign attest`) says
// something else than "run this", and does not count. The statement's
// subject is checked against the manifest digest by sigstore-go's verifier
// (WithArtifactDigest), which also verifies the envelope's signature over
// the payload read here.
func signatureContent(b *bundle.Bundle) error {
	env := b.GetDsseEnvelope()
	if env == nil {
		return nil
	}
	if env.GetPayloadType() != payloadTypeInToto {
		return fmt.Errorf("a DSSE signature of payload type %q, not an in-toto statement", env.GetPayloadType())
	}
	var st struct {
		PredicateType string `json:"predicateType"`
	}
	if err := json.Unmarshal(env.GetPayload(), &st); err != nil {
		return fmt.Errorf("a DSSE signature whose statement is not JSON: %w", err)
	}
	if st.PredicateType != cosignSignPredicate {
		return fmt.Errorf("an attestation of predicate type %q, not a signature (cosign's statement is of %q)", st.PredicateType, cosignSignPredicate)
	}
	return nil
}

// ErrUnsigned is returned by Verify when no signature is attached.
var ErrUnsigned = errors.New("no signature (no Sigstore bundle refers to the manifest, and no cosign sha256-<digest>.sig tag)")

// LoadPublicKey reads a PEM public key (cosign.pub: ECDSA P-256).
func LoadPublicKey(path string) (crypto.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trusted key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("trusted key %s: not a PEM public key", path)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("trusted key %s: %w", path, err)
	}
	if _, ok := k.(*ecdsa.PublicKey); !ok {
		return nil, fmt.Errorf("trusted key %s: %T is not supported (ECDSA P-256 only, as cosign makes)", path, k)
	}
	return k, nil
}

// LoadPrivateKey reads an unencrypted PEM ECDSA P-256 private key (PKCS#8
// or SEC 1), as `openssl genpkey -algorithm EC -pkeyopt
// ec_paramgen_curve:P-256` writes.
func LoadPrivateKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("signing key %s: not PEM", path)
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("signing key %s: %w", path, err)
		}
		if ek, ok := k.(*ecdsa.PrivateKey); ok && ek.Curve == elliptic.P256() {
			return ek, nil
		}
		return nil, fmt.Errorf("signing key %s: not an ECDSA P-256 key", path)
	case "EC PRIVATE KEY":
		k, err := x509.ParseECPrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("signing key %s: %w", path, err)
		}
		return k, nil
	}
	return nil, fmt.Errorf("signing key %s: PEM %q is not supported (an unencrypted EC private key; cosign's encrypted keys are not read)", path, block.Type)
}

// keypair signs with a fixed ECDSA P-256 key (sign.Keypair).
type keypair struct{ key *ecdsa.PrivateKey }

func (k keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (k keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}
func (k keypair) GetHint() []byte         { return keyHint(&k.key.PublicKey) }
func (k keypair) GetKeyAlgorithm() string { return "ECDSA" }
func (k keypair) GetPublicKey() crypto.PublicKey {
	return &k.key.PublicKey
}
func (k keypair) GetPublicKeyPem() (string, error) {
	der, err := x509.MarshalPKIXPublicKey(&k.key.PublicKey)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}
func (k keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	sum := sha256.Sum256(data)
	sig, err := k.key.Sign(rand.Reader, sum[:], crypto.SHA256)
	return sig, sum[:], err
}

// keyHint is the bundle's hint for a key: base64 of the SHA-256 of its
// PKIX form, as sigstore-go makes it.
func keyHint(pub crypto.PublicKey) []byte {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	sum := sha256.Sum256(der)
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

// Sign signs the manifest that ref resolves to with key, as `cosign sign
// --new-bundle-format --key` does: a Sigstore bundle holding a DSSE
// envelope of the in-toto statement that names the manifest's digest with
// cosign's signing predicate (cosignSignPredicate), attached to the
// manifest as an OCI 1.1 referrer (oras-go falls back to the referrers tag
// schema on a registry without the referrers API), so that `cosign verify`
// accepts it too. It returns the manifest's digest. With cert (DER), the
// bundle carries that certificate for key instead of the bare key (keyless
// verification, VerifyKeyless).
func (c *Client) Sign(ctx context.Context, ref Ref, key *ecdsa.PrivateKey, cert []byte, insecure bool) (string, error) {
	repo, err := c.repository(ref, insecure)
	if err != nil {
		return "", err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	reference := ref.Tag
	if ref.Digest != "" {
		reference = ref.Digest
	}
	desc, err := repo.Resolve(ctx, reference)
	if err != nil {
		return "", fmt.Errorf("sign %s: %w", ref, err)
	}
	opts := sign.BundleOptions{Context: ctx}
	if cert != nil {
		opts.CertificateProvider = certificateProvider{der: cert}
	}
	statement, err := cosignStatement(desc.Digest.String())
	if err != nil {
		return "", fmt.Errorf("sign %s: %w", ref, err)
	}
	pb, err := sign.Bundle(&sign.DSSEData{Data: statement, PayloadType: payloadTypeInToto}, keypair{key}, opts)
	if err != nil {
		return "", fmt.Errorf("sign %s: %w", ref, err)
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		return "", fmt.Errorf("sign %s: %w", ref, err)
	}
	bj, err := b.MarshalJSON()
	if err != nil {
		return "", fmt.Errorf("sign %s: %w", ref, err)
	}
	layer := content.NewDescriptorFromBytes(MediaTypeBundle, bj)
	if err := repo.Push(ctx, layer, bytes.NewReader(bj)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return "", fmt.Errorf("sign %s: bundle: %w", ref, err)
	}
	subject := ocispec.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}
	if _, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, MediaTypeBundle, oras.PackManifestOptions{
		Subject: &subject,
		Layers:  []ocispec.Descriptor{layer},
		// What cosign writes, for tools that read them.
		ManifestAnnotations: map[string]string{
			"dev.sigstore.bundle.content":       "dsse-envelope",
			"dev.sigstore.bundle.predicateType": cosignSignPredicate,
		},
	}); err != nil {
		return "", fmt.Errorf("sign %s: referrer: %w", ref, err)
	}
	return desc.Digest.String(), nil
}

// Bounds of what is read of a manifest's referrers: the signature
// bundles kept, and the referrer manifests examined to find them.
const (
	maxBundles   = 16
	maxReferrers = 64
)

// mayHoldBundle tells whether a referrer listed with artifactType may be a
// Sigstore bundle: one listed as such (the referrers API, and the
// referrers tag schema as oras-go writes it), or one listed with the OCI
// empty descriptor's type, which is what cosign 2.6 (go-containerregistry)
// writes into the referrers tag schema's index on a registry without the
// referrers API: it takes the config's media type, not the manifest's
// artifactType. Either way the manifest itself must then say it is a
// bundle (isBundleManifest), and every bundle is verified in full.
func mayHoldBundle(artifactType string) bool {
	return artifactType == MediaTypeBundle || artifactType == ocispec.MediaTypeEmptyJSON
}

// isBundleManifest tells whether m, a referrer of subject, is a Sigstore
// bundle's manifest: it refers to subject and its artifact type (or, in
// the older form, its config's media type) is the bundle's.
func isBundleManifest(m ocispec.Manifest, subject ocispec.Descriptor) bool {
	if m.Subject == nil || m.Subject.Digest != subject.Digest {
		return false
	}
	return m.ArtifactType == MediaTypeBundle || m.Config.MediaType == MediaTypeBundle
}

// fetchBundles fetches the Sigstore bundles attached to manifest desc: at
// most maxBundles, from the first maxReferrers referrers that may hold
// one, those listed as bundles first.
func fetchBundles(ctx context.Context, repo interface {
	Referrers(context.Context, ocispec.Descriptor, string, func([]ocispec.Descriptor) error) error
	content.Fetcher
}, desc ocispec.Descriptor) ([][]byte, error) {
	var listed, untyped []ocispec.Descriptor
	// All artifact types: filtering on the bundle's would miss cosign's
	// (see mayHoldBundle).
	if err := repo.Referrers(ctx, desc, "", func(r []ocispec.Descriptor) error {
		for _, d := range r {
			switch {
			case d.ArtifactType == MediaTypeBundle:
				listed = append(listed, d)
			case mayHoldBundle(d.ArtifactType):
				untyped = append(untyped, d)
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("signatures: %w", err)
	}
	refs := append(listed, untyped...)
	if len(refs) > maxReferrers {
		refs = refs[:maxReferrers]
	}
	var out [][]byte
	for _, r := range refs {
		if len(out) >= maxBundles {
			break
		}
		if r.Size > maxManifest {
			continue
		}
		mb, err := content.FetchAll(ctx, repo, r)
		if err != nil {
			return nil, fmt.Errorf("signature %s: %w", r.Digest, err)
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(mb, &m); err != nil || !isBundleManifest(m, desc) {
			continue
		}
		for _, l := range m.Layers {
			if l.MediaType != MediaTypeBundle || l.Size > maxBundle || len(out) >= maxBundles {
				continue
			}
			bb, err := content.FetchAll(ctx, repo, l)
			if err != nil {
				return nil, fmt.Errorf("signature %s: %w", l.Digest, err)
			}
			out = append(out, bb)
		}
	}
	return out, nil
}

// Verify checks that one of bundles is a valid signature of the manifest
// digest by one of keys. It returns ErrUnsigned when there are none, and
// otherwise says why none counts.
func Verify(digest string, bundles [][]byte, keys []crypto.PublicKey) error {
	if len(bundles) == 0 {
		return ErrUnsigned
	}
	if len(keys) == 0 {
		return errors.New("no trusted keys to verify its signature with (trusted_keys)")
	}
	raw, err := hex.DecodeString(strings.TrimPrefix(digest, "sha256:"))
	if err != nil {
		return fmt.Errorf("digest %q: %w", digest, err)
	}
	var problems []string
	for _, bj := range bundles {
		var cs classicSignature
		if json.Unmarshal(bj, &cs) == nil && cs.CosignPayload != nil {
			err := verifyClassic(cs, digest, keys)
			if err == nil {
				return nil
			}
			problems = append(problems, err.Error())
			continue
		}
		var b bundle.Bundle
		if err := b.UnmarshalJSON(bj); err != nil {
			problems = append(problems, "a signature that is not a valid Sigstore bundle: "+err.Error())
			continue
		}
		if err := signatureContent(&b); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, k := range keys {
			v, err := signature.LoadVerifier(k, crypto.SHA256)
			if err != nil {
				return err
			}
			material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
				return root.NewExpiringKey(v, time.Time{}, time.Time{}), nil
			})
			verifier, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
			if err != nil {
				return err
			}
			if _, err := verifier.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", raw), verify.WithKey())); err == nil {
				return nil
			}
		}
		problems = append(problems, "a signature by no trusted key (or not of this manifest)")
	}
	return fmt.Errorf("no valid signature by a trusted key: %s", strings.Join(problems, "; "))
}
