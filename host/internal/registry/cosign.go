package registry

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
)

// cosign's classic signatures (what `cosign sign --key` writes without the
// new bundle format): a manifest tagged sha256-<hex>.sig in the plugin's
// repository, each layer a "simple signing" payload naming the signed
// manifest's digest, with the signature in a layer annotation.
const (
	mediaTypeSimpleSigning = "application/vnd.dev.cosign.simplesigning.v1+json"
	annotationCosignSig    = "dev.cosignproject.cosign/signature"
)

// classicSignature is how a cosign classic signature is kept in the store
// (beside Sigstore bundles, told apart by its keys).
type classicSignature struct {
	CosignPayload   []byte `json:"cosignPayload"`
	CosignSignature string `json:"cosignSignature"`
}

// simpleSigning is the part of cosign's payload that is checked.
type simpleSigning struct {
	Critical struct {
		Image struct {
			Digest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
}

// classicSignatureTag is where cosign puts the signatures of digest.
func classicSignatureTag(digest string) string {
	return strings.Replace(digest, ":", "-", 1) + ".sig"
}

// fetchClassic fetches the cosign classic signatures of manifest digest,
// none when there is no such tag.
func fetchClassic(ctx context.Context, repo *remote.Repository, digest string) ([][]byte, error) {
	desc, err := repo.Resolve(ctx, classicSignatureTag(digest))
	if err != nil {
		return nil, nil // no classic signature (or none readable): none
	}
	if desc.Size > maxManifest {
		return nil, nil
	}
	mb, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		return nil, fmt.Errorf("signature tag %s: %w", classicSignatureTag(digest), err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, nil
	}
	var out [][]byte
	for _, l := range m.Layers {
		if l.MediaType != mediaTypeSimpleSigning || l.Size > maxBundle || len(out) >= 16 {
			continue
		}
		payload, err := content.FetchAll(ctx, repo, l)
		if err != nil {
			return nil, fmt.Errorf("signature tag %s: %w", classicSignatureTag(digest), err)
		}
		b, err := json.Marshal(classicSignature{CosignPayload: payload, CosignSignature: l.Annotations[annotationCosignSig]})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// verifyClassic checks a stored classic signature of digest against keys.
func verifyClassic(cs classicSignature, digest string, keys []crypto.PublicKey) error {
	var p simpleSigning
	if err := json.Unmarshal(cs.CosignPayload, &p); err != nil {
		return fmt.Errorf("a cosign signature whose payload is not JSON: %w", err)
	}
	if p.Critical.Image.Digest != digest {
		return fmt.Errorf("a cosign signature of another manifest (%s)", p.Critical.Image.Digest)
	}
	sig, err := base64.StdEncoding.DecodeString(cs.CosignSignature)
	if err != nil {
		return errors.New("a cosign signature that is not base64")
	}
	sum := sha256.Sum256(cs.CosignPayload)
	for _, k := range keys {
		if ek, ok := k.(*ecdsa.PublicKey); ok && ecdsa.VerifyASN1(ek, sum[:], sig) {
			return nil
		}
	}
	return errors.New("a cosign signature by no trusted key")
}
