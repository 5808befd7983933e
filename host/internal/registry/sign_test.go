package registry

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"oras.land/oras-go/v2"

	"github.com/mcphost/mcphost/internal/testutil"
)

func newKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A plugin signed with a key verifies against that key only; an unsigned
// one is ErrUnsigned; the signature is kept in the store with the plugin.
func TestSignVerify(t *testing.T) {
	reg, c := newRegistry(t)
	ctx := context.Background()
	signedRef := mustRef(t, "oci://"+reg.Addr+"/plugins/signed:1")
	unsignedRef := mustRef(t, "oci://"+reg.Addr+"/plugins/unsigned:1")
	wasm := testutil.WAT(t, "(module)")
	signed := mustPush(t, c, signedRef, wasm)
	unsigned := mustPush(t, c, unsignedRef, testutil.WAT(t, "(module (memory 1))"))
	trusted, other := newKey(t), newKey(t)
	if d, err := c.Sign(ctx, signedRef, trusted, nil, true); err != nil || d != signed {
		t.Fatalf("sign = %s, %v", d, err)
	}
	m, err := c.Pull(ctx, signedRef, signed, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Signatures) != 1 {
		t.Fatalf("%d signatures pulled, want 1", len(m.Signatures))
	}
	if err := Verify(signed, m.Signatures, []crypto.PublicKey{&other.PublicKey, &trusted.PublicKey}); err != nil {
		t.Fatalf("signed by a trusted key: %v", err)
	}
	err = Verify(signed, m.Signatures, []crypto.PublicKey{&other.PublicKey})
	if err == nil || !strings.Contains(err.Error(), "no trusted key") {
		t.Fatalf("signed by another key: %v", err)
	}
	// The same signature does not vouch for another manifest.
	if err := Verify(unsigned, m.Signatures, []crypto.PublicKey{&trusted.PublicKey}); err == nil {
		t.Fatal("a signature of one manifest verified another")
	}
	u, err := c.Pull(ctx, unsignedRef, unsigned, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(unsigned, u.Signatures, []crypto.PublicKey{&trusted.PublicKey}); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("unsigned: %v, want ErrUnsigned", err)
	}
	reg.Stop()
	again, err := c.Open(signed)
	if err != nil || Verify(signed, again.Signatures, []crypto.PublicKey{&trusted.PublicKey}) != nil {
		t.Fatalf("the signature was not kept in the store: %v", err)
	}
}

// A signature in the form `mcphost plugin sign` wrote before it wrote
// cosign's (a Sigstore message signature over the manifest's bytes)
// still verifies, against its key only and for its manifest only.
func TestMessageSignatureVerifies(t *testing.T) {
	reg, c := newRegistry(t)
	ctx := context.Background()
	ref := mustRef(t, "oci://"+reg.Addr+"/plugins/message:1")
	digest := mustPush(t, c, ref, testutil.WAT(t, "(module)"))
	repo, err := c.repository(ref, true)
	if err != nil {
		t.Fatal(err)
	}
	_, mb, err := oras.FetchBytes(ctx, repo, digest, oras.DefaultFetchBytesOptions)
	if err != nil {
		t.Fatal(err)
	}
	trusted, other := newKey(t), newKey(t)
	pb, err := sign.Bundle(&sign.PlainData{Data: mb}, keypair{trusted}, sign.BundleOptions{Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		t.Fatal(err)
	}
	bj, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(digest, [][]byte{bj}, []crypto.PublicKey{&trusted.PublicKey}); err != nil {
		t.Fatalf("a message signature by the trusted key: %v", err)
	}
	if err := Verify(digest, [][]byte{bj}, []crypto.PublicKey{&other.PublicKey}); err == nil {
		t.Fatal("a message signature verified with another key")
	}
	if err := Verify("sha256:"+strings.Repeat("ab", 32), [][]byte{bj}, []crypto.PublicKey{&trusted.PublicKey}); err == nil {
		t.Fatal("a message signature of one manifest verified another")
	}
}
