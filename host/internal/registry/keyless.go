package registry

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// Identity is a keyless signer: the subject of its certificate (an email
// or URI) and the OIDC issuer that vouched for it.
type Identity struct {
	Subject string
	Issuer  string
}

// VerifyKeyless checks that one of bundles is a signature of the manifest
// digest with a certificate issued by a certificate authority of the
// trusted root file (a Sigstore trusted_root.json) to identity. The
// certificate must be valid now: no transparency log or timestamp
// authority is consulted (nothing here reaches the public Sigstore
// services), so this suits a private CA's long-lived code-signing
// certificates, not public Fulcio's ten-minute ones.
func VerifyKeyless(digest string, bundles [][]byte, trustedRoot string, identity Identity) error {
	if len(bundles) == 0 {
		return ErrUnsigned
	}
	tr, err := root.NewTrustedRootFromPath(trustedRoot)
	if err != nil {
		return fmt.Errorf("trusted root %s: %w", trustedRoot, err)
	}
	verifier, err := verify.NewVerifier(tr, verify.WithCurrentTime())
	if err != nil {
		return err
	}
	id, err := verify.NewShortCertificateIdentity(identity.Issuer, "", identity.Subject, "")
	if err != nil {
		return fmt.Errorf("signer identity: %w", err)
	}
	raw, err := digestBytes(digest)
	if err != nil {
		return err
	}
	var last error
	for _, bj := range bundles {
		var cs classicSignature
		if json.Unmarshal(bj, &cs) == nil && cs.CosignPayload != nil {
			continue // a key-based cosign signature
		}
		var b bundle.Bundle
		if err := b.UnmarshalJSON(bj); err != nil {
			last = err
			continue
		}
		if err := signatureContent(&b); err != nil {
			last = err
			continue
		}
		if _, err := verifier.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", raw), verify.WithCertificateIdentity(id))); err != nil {
			last = err
			continue
		}
		return nil
	}
	if last == nil {
		return ErrUnsigned
	}
	return fmt.Errorf("no valid signature by %s (issuer %s) under the trusted root: %w", identity.Subject, identity.Issuer, last)
}

// certificateProvider hands out a fixed certificate (sign.CertificateProvider).
type certificateProvider struct{ der []byte }

func (p certificateProvider) GetCertificate(context.Context, sign.Keypair, *sign.CertificateProviderOptions) ([]byte, error) {
	return p.der, nil
}

// LoadCertificate reads a PEM certificate for keyless signing.
func LoadCertificate(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing certificate: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("signing certificate %s: not a PEM certificate", path)
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return nil, fmt.Errorf("signing certificate %s: %w", path, err)
	}
	return block.Bytes, nil
}

func digestBytes(digest string) ([]byte, error) {
	if _, err := (Store{}).path(digest); err != nil {
		return nil, err
	}
	return hex.DecodeString(digest[len("sha256:"):])
}
