package registry

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/mcphost/mcphost/internal/testutil"
)

var oidIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}

// testCA is a certificate authority the test makes, written as a Sigstore
// trusted root file.
type testCA struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	root string // trusted_root.json
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key := newKey(t)
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
	return &testCA{key: key, cert: cert, root: path}
}

// issue returns a code-signing certificate (DER) for signer's key, to the
// URI subject, vouched for by issuer.
func (ca *testCA) issue(t *testing.T, signer *ecdsa.PrivateKey, subject, issuer string) []byte {
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
		SerialNumber: big.NewInt(2), NotBefore: now.Add(-time.Hour), NotAfter: now.Add(12 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		URIs:            []*url.URL{u},
		ExtraExtensions: []pkix.Extension{{Id: oidIssuerV2, Value: ext}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &signer.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// A keyless signature verifies for the identity its certificate names,
// under the trusted root that issued it, and not otherwise.
func TestKeylessSignature(t *testing.T) {
	reg := testutil.StartRegistry(t)
	ctx := context.Background()
	c := testClient(t)
	ca, otherCA := newTestCA(t), newTestCA(t)
	const subject, issuer = "https://github.com/acme/hello/.github/workflows/release.yml@refs/tags/v1", "https://token.actions.example"
	ref := mustRef(t, "oci://"+reg.Addr+"/keyless/hello:1")
	digest, err := c.Push(ctx, ref, testutil.WAT(t, "(module)"), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	signer := newKey(t)
	if _, err := c.Sign(ctx, ref, signer, ca.issue(t, signer, subject, issuer), true); err != nil {
		t.Fatal(err)
	}
	m, err := c.Pull(ctx, ref, digest, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyKeyless(digest, m.Signatures, ca.root, Identity{Subject: subject, Issuer: issuer}); err != nil {
		t.Fatalf("keyless, right identity and root: %v", err)
	}
	for _, tc := range []struct {
		name string
		root string
		id   Identity
	}{
		{"another subject", ca.root, Identity{Subject: "https://github.com/evil/x", Issuer: issuer}},
		{"another issuer", ca.root, Identity{Subject: subject, Issuer: "https://evil.example"}},
		{"another root", otherCA.root, Identity{Subject: subject, Issuer: issuer}},
	} {
		err := VerifyKeyless(digest, m.Signatures, tc.root, tc.id)
		if err == nil || !strings.Contains(err.Error(), "no valid signature by") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
