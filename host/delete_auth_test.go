package host_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokenOf mints a token of the fixture's issuer for user sub, with scope.
func (f *authFixture) tokenOf(t *testing.T, sub, scope string) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: f.key, KeyID: "k1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok, err := jwt.Signed(signer).Claims(map[string]any{
		"iss": f.issuer, "aud": f.endpoint, "sub": sub, "scope": scope,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestAuthDeleteEndsOnlyItsOwnUsersWaits: with tokens, a DELETE of a
// session by another user (which go-sdk refuses) cancels none of its
// requests; its own user's DELETE ends them.
func TestAuthDeleteEndsOnlyItsOwnUsersWaits(t *testing.T) {
	f := newAuthFixture(t)
	alice := f.tokenOf(t, "alice", "mcp admin")
	opts, asked, release := deafClient()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "deaf", Version: "1"}, opts).Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   f.endpoint,
		HTTPClient: &http.Client{Transport: bearer{alice, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release(); cs.Close() })
	result := callPending(t, cs, "ev_test_sampling", asked)

	deleteAs := func(token string) int {
		req, _ := http.NewRequest(http.MethodDelete, f.endpoint, nil)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Authorization", "Bearer "+token)
		done := make(chan int, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("DELETE: %v", err)
				done <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		select {
		case code := <-done:
			return code
		case <-time.After(hangGuard):
			t.Fatal("DELETE hung")
			return 0
		}
	}
	if code := deleteAs(f.tokenOf(t, "mallory", "mcp admin")); code != http.StatusForbidden {
		t.Errorf("another user's DELETE = %d, want 403", code)
	}
	if err := cs.Ping(t.Context(), nil); err != nil {
		t.Fatalf("ping after another user's DELETE: %v", err)
	}
	select {
	case err := <-result:
		t.Fatalf("another user's DELETE ended the call (%v)", err)
	default:
	}
	if code := deleteAs(alice); code != http.StatusNoContent {
		t.Errorf("its own user's DELETE = %d, want 204", code)
	}
	select {
	case <-result:
	case <-time.After(hangGuard):
		t.Error("the call did not end on its own user's DELETE")
	}
}
