package registry

import (
	"context"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testutil"
)

// A keyless signature verifies for the identity its certificate names,
// under the trusted root that issued it, and not otherwise.
func TestKeylessSignature(t *testing.T) {
	reg, c := newRegistry(t)
	ctx := context.Background()
	ca, otherCA := testutil.NewSigningCA(t), testutil.NewSigningCA(t)
	const subject, issuer = "https://github.com/acme/hello/.github/workflows/release.yml@refs/tags/v1", "https://token.actions.example"
	ref := mustRef(t, "oci://"+reg.Addr+"/keyless/hello:1")
	digest := mustPush(t, c, ref, testutil.WAT(t, "(module)"))
	signer := newKey(t)
	if _, err := c.Sign(ctx, ref, signer, ca.Issue(t, &signer.PublicKey, subject, issuer), true); err != nil {
		t.Fatal(err)
	}
	m, err := c.Pull(ctx, ref, digest, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyKeyless(digest, m.Signatures, ca.Root, Identity{Subject: subject, Issuer: issuer}); err != nil {
		t.Fatalf("keyless, right identity and root: %v", err)
	}
	for _, tc := range []struct {
		name string
		root string
		id   Identity
	}{
		{"another subject", ca.Root, Identity{Subject: "https://github.com/evil/x", Issuer: issuer}},
		{"another issuer", ca.Root, Identity{Subject: subject, Issuer: "https://evil.example"}},
		{"another root", otherCA.Root, Identity{Subject: subject, Issuer: issuer}},
	} {
		err := VerifyKeyless(digest, m.Signatures, tc.root, tc.id)
		if err == nil || !strings.Contains(err.Error(), "no valid signature by") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
