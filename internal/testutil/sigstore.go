package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
)

// oidIssuerV2 is Fulcio's certificate extension naming the OIDC issuer.
var oidIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}

// SigningCA is a certificate authority a test makes for keyless signing,
// written as a Sigstore trusted root file (nothing here reaches the public
// Sigstore services).
type SigningCA struct {
	// Root is the trusted_root.json naming the CA.
	Root string
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
}

// NewSigningCA makes a CA valid for a day and its trusted root file.
func NewSigningCA(t testing.TB) *SigningCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcphost test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01,
		[]root.CertificateAuthority{&root.FulcioCertificateAuthority{Root: cert, ValidityPeriodStart: now.Add(-time.Hour), URI: "https://ca.test"}},
		nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(path, j, 0o644); err != nil {
		t.Fatal(err)
	}
	return &SigningCA{Root: path, key: key, cert: cert}
}

// Issue returns a code-signing certificate (DER) for pub, to the URI
// subject, vouched for by the OIDC issuer.
func (ca *SigningCA) Issue(t testing.TB, pub *ecdsa.PublicKey, subject, issuer string) []byte {
	t.Helper()
	u, err := url.Parse(subject)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := asn1.Marshal(issuer)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()), NotBefore: now.Add(-time.Hour), NotAfter: now.Add(12 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		URIs:            []*url.URL{u},
		ExtraExtensions: []pkix.Extension{{Id: oidIssuerV2, Value: ext}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}
