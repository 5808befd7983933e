package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/go-hclog"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// testKey is a signing key of the test issuer.
type testKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func newRSAKey(t *testing.T, kid string) testKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{kid: kid, alg: jose.RS256, priv: k}
}

func newECKey(t *testing.T, kid string) testKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{kid: kid, alg: jose.ES256, priv: k}
}

func (k testKey) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

// issuer is an authorization server on loopback: it serves a JWKS (which
// the test can change) and mints tokens.
type issuer struct {
	t      *testing.T
	url    string // issuer identifier
	server *httptest.Server

	mu       sync.Mutex
	keys     []testKey
	status   int // answer status for the JWKS; 0 means 200
	requests int
}

func newIssuer(t *testing.T, keys ...testKey) *issuer {
	t.Helper()
	is := &issuer{t: t, keys: keys}
	is.server = httptest.NewServer(http.HandlerFunc(is.serveJWKS))
	t.Cleanup(is.server.Close)
	is.url = is.server.URL
	return is
}

func (is *issuer) serveJWKS(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/jwks.json" {
		http.NotFound(w, r)
		return
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.requests++
	if is.status != 0 && is.status != http.StatusOK {
		http.Error(w, "down", is.status)
		return
	}
	var set jose.JSONWebKeySet
	for _, k := range is.keys {
		set.Keys = append(set.Keys, k.jwk())
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	if err := json.NewEncoder(w).Encode(set); err != nil {
		is.t.Errorf("encode JWKS: %v", err)
	}
}

func (is *issuer) jwksURL() string { return is.server.URL + "/jwks.json" }

func (is *issuer) setKeys(keys ...testKey) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = keys
}

func (is *issuer) setStatus(status int) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.status = status
}

func (is *issuer) fetches() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.requests
}

// claims are a token's claims; mint fills iss, aud, exp when absent.
type claims map[string]any

func mint(t *testing.T, k testKey, c claims) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(map[string]any(c)).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// validClaims are the claims of a good token for aud from is.
func (is *issuer) validClaims(aud string) claims {
	now := time.Now()
	return claims{
		"iss":       is.url,
		"aud":       aud,
		"sub":       "alice",
		"client_id": "test-client",
		"exp":       now.Add(time.Hour).Unix(),
		"iat":       now.Unix(),
		"nbf":       now.Add(-time.Minute).Unix(),
		"jti":       "tok-1",
		"scope":     "mcp:tools profile",
	}
}

func with(c claims, kv ...any) claims {
	out := claims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// rig is a resource server under test, behind an HTTP server on loopback
// whose /mcp handler records the TokenInfo go-sdk's context carries.
type rig struct {
	rs       *ResourceServer
	url      string // base URL of the resource server
	audience string
	logs     *bytes.Buffer

	mu       sync.Mutex
	lastInfo *mcpauth.TokenInfo
	lastBody []byte
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	if cfg.Audience == "" {
		cfg.Audience = base + "/mcp"
	}
	rg := &rig{url: base, audience: cfg.Audience, logs: &bytes.Buffer{}}
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &lockedWriter{w: rg.logs}})
	rs, err := New(t.Context(), cfg, Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	rg.rs = rs
	mux := http.NewServeMux()
	rs.Mount(mux)
	final := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rg.mu.Lock()
		rg.lastInfo = mcpauth.TokenInfoFromContext(r.Context())
		rg.lastBody = body
		rg.mu.Unlock()
		io.WriteString(w, "ok")
	})
	mux.Handle("/mcp", rs.Middleware(final))
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("auth log:\n%s", rg.logs.String())
		}
	})
	return rg
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// post sends body to /mcp with token (none if "").
func (rg *rig) post(t *testing.T, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, rg.url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`

// challenge parses the response's Bearer challenge.
func challengeOf(t *testing.T, resp *http.Response) map[string]string {
	t.Helper()
	hs := resp.Header.Values("WWW-Authenticate")
	if len(hs) == 0 {
		t.Fatalf("status %d without WWW-Authenticate", resp.StatusCode)
	}
	cs, err := oauthex.ParseWWWAuthenticate(hs)
	if err != nil {
		t.Fatalf("parse WWW-Authenticate %q: %v", hs, err)
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return c.Params
		}
	}
	t.Fatalf("no Bearer challenge in %q", hs)
	return nil
}

func baseConfig(is *issuer) Config {
	return Config{
		Issuer:       is.url,
		JWKSURL:      is.jwksURL(),
		Scopes:       []string{"mcp:tools"},
		ResourceName: "mcphost test",
	}
}

func TestValidTokenReachesHandler(t *testing.T) {
	for _, k := range []testKey{newRSAKey(t, "rsa-1"), newECKey(t, "ec-1")} {
		t.Run(string(k.alg), func(t *testing.T) {
			is := newIssuer(t, k)
			rg := newRig(t, baseConfig(is))
			c := is.validClaims(rg.audience)
			c["scp"] = []string{"extra", "profile"}
			resp := rg.post(t, mint(t, k, c), initBody)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
			rg.mu.Lock()
			info := rg.lastInfo
			body := string(rg.lastBody)
			rg.mu.Unlock()
			if body != initBody {
				t.Errorf("handler read body %q, want %q", body, initBody)
			}
			if info == nil {
				t.Fatal("no TokenInfo in the handler's context")
			}
			if Subject(info) != "alice" || info.UserID != "alice" {
				t.Errorf("Subject = %q, UserID = %q, want alice", Subject(info), info.UserID)
			}
			if ClientID(info) != "test-client" {
				t.Errorf("ClientID = %q", ClientID(info))
			}
			if want := []string{"mcp:tools", "profile", "extra"}; !slices.Equal(info.Scopes, want) {
				t.Errorf("Scopes = %q, want %q", info.Scopes, want)
			}
			if d := time.Until(info.Expiration); d < 50*time.Minute || d > time.Hour {
				t.Errorf("Expiration in %s, want about 1h", d)
			}
			if info.Extra[ExtraIssuer] != is.url || info.Extra[ExtraTokenID] != "tok-1" {
				t.Errorf("Extra = %v", info.Extra)
			}
		})
	}
}

func TestNoTokenIs401WithResourceMetadata(t *testing.T) {
	is := newIssuer(t, newRSAKey(t, "k1"))
	rg := newRig(t, baseConfig(is))
	for _, auth := range []string{"", "Basic dXNlcjpwYXNz"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, rg.url+"/mcp", strings.NewReader(initBody))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
		p := challengeOf(t, resp)
		if want := rg.url + "/.well-known/oauth-protected-resource/mcp"; p["resource_metadata"] != want {
			t.Errorf("resource_metadata = %q, want %q", p["resource_metadata"], want)
		}
		if _, ok := p["error"]; ok {
			t.Errorf("error %q in a challenge to a request without a token", p["error"])
		}
		if p["scope"] != "mcp:tools" {
			t.Errorf("scope = %q, want mcp:tools", p["scope"])
		}
	}
	// A malformed Bearer header is a bad request.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, rg.url+"/mcp", strings.NewReader(initBody))
	req.Header.Set("Authorization", "Bearer a b")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || challengeOf(t, resp)["error"] != "invalid_request" {
		t.Errorf("malformed Bearer: status %d, challenge %v", resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
	}
}

// noneToken is an unsigned token (alg "none").
func noneToken(c claims) string {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	p, _ := json.Marshal(c)
	return enc.EncodeToString(h) + "." + enc.EncodeToString(p) + "."
}

// hsToken is signed with HS256 using the RSA public key's DER as the
// secret: the algorithm-confusion forgery.
func hsToken(t *testing.T, k testKey, c claims) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT", "kid": k.kid})
	p, _ := json.Marshal(c)
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	mac := hmac.New(sha256.New, der)
	mac.Write([]byte(input))
	return input + "." + enc.EncodeToString(mac.Sum(nil))
}

func TestRefusedTokens(t *testing.T) {
	key := newRSAKey(t, "k1")
	other := newRSAKey(t, "k1") // same kid, another key: a forged signature
	is := newIssuer(t, key)
	rg := newRig(t, baseConfig(is))
	good := is.validClaims(rg.audience)
	now := time.Now()
	for _, tc := range []struct {
		name  string
		token string
		desc  string // expected in error_description
	}{
		{"wrong audience", mint(t, key, with(good, "aud", "https://other.example.com/mcp")), "audience"},
		{"audience list without ours", mint(t, key, with(good, "aud", []string{"https://a.example", "https://b.example"})), "audience"},
		{"no audience", mint(t, key, with(good, "aud", nil)), "audience"},
		{"wrong issuer", mint(t, key, with(good, "iss", "https://evil.example.com")), "issuer"},
		{"issuer with trailing slash", mint(t, key, with(good, "iss", is.url+"/")), "issuer"},
		{"expired", mint(t, key, with(good, "exp", now.Add(-5*time.Minute).Unix())), "expired"},
		{"not yet valid", mint(t, key, with(good, "nbf", now.Add(10*time.Minute).Unix())), "not valid yet"},
		{"issued in the future", mint(t, key, with(good, "iat", now.Add(10*time.Minute).Unix(), "nbf", nil)), "future"},
		{"no expiry", mint(t, key, with(good, "exp", nil)), "no expiry"},
		{"bad signature", mint(t, other, good), "signature"},
		{"tampered payload", tamper(t, mint(t, key, good)), "signature"},
		{"alg none", noneToken(good), "algorithm"},
		{"HS256 with the public key as secret", hsToken(t, key, good), "algorithm"},
		{"not a JWT", "not-a-jwt", "malformed"},
		{"bad scope claim", mint(t, key, with(good, "scope", 42)), "scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := rg.post(t, tc.token, initBody)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", resp.StatusCode)
			}
			p := challengeOf(t, resp)
			if p["error"] != "invalid_token" {
				t.Errorf("error = %q, want invalid_token", p["error"])
			}
			if !strings.Contains(p["error_description"], tc.desc) {
				t.Errorf("error_description = %q, want it to mention %q", p["error_description"], tc.desc)
			}
			if p["resource_metadata"] != rg.rs.ResourceMetadataURL() {
				t.Errorf("resource_metadata = %q", p["resource_metadata"])
			}
		})
	}
	// Within the leeway: a token expired 10s ago still passes (default 30s).
	if resp := rg.post(t, mint(t, key, with(good, "exp", now.Add(-10*time.Second).Unix())), initBody); resp.StatusCode != http.StatusOK {
		t.Errorf("token expired within the leeway: status %d, want 200", resp.StatusCode)
	}
	// The audience with a trailing slash is the same resource.
	if resp := rg.post(t, mint(t, key, with(good, "aud", []string{"https://x.example", rg.audience + "/"})), initBody); resp.StatusCode != http.StatusOK {
		t.Errorf("audience list containing ours: status %d, want 200", resp.StatusCode)
	}
}

// tamper changes the token's payload, keeping header and signature.
func tamper(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	p, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	p = bytes.Replace(p, []byte(`"alice"`), []byte(`"admin"`), 1)
	parts[1] = base64.RawURLEncoding.EncodeToString(p)
	return strings.Join(parts, ".")
}

func TestAlgorithmsNarrowed(t *testing.T) {
	rsaKey, ecKey := newRSAKey(t, "r"), newECKey(t, "e")
	is := newIssuer(t, rsaKey, ecKey)
	cfg := baseConfig(is)
	cfg.Algorithms = []string{"ES256"}
	rg := newRig(t, cfg)
	good := is.validClaims(rg.audience)
	if resp := rg.post(t, mint(t, ecKey, good), initBody); resp.StatusCode != http.StatusOK {
		t.Errorf("ES256: status %d, want 200", resp.StatusCode)
	}
	if resp := rg.post(t, mint(t, rsaKey, good), initBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("RS256 with only ES256 allowed: status %d, want 401", resp.StatusCode)
	}

	// A key published for one alg is not used for another, even one the
	// config accepts.
	rg = newRig(t, baseConfig(is))
	good = is.validClaims(rg.audience)
	ps := rsaKey
	ps.alg = jose.PS256
	if resp := rg.post(t, mint(t, ps, good), initBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("PS256 by a key published for RS256: status %d, want 401", resp.StatusCode)
	}
	if resp := rg.post(t, mint(t, rsaKey, good), initBody); resp.StatusCode != http.StatusOK {
		t.Errorf("RS256 by default: status %d, want 200", resp.StatusCode)
	}
}

func TestKeyRotation(t *testing.T) {
	oldKey, newKey := newRSAKey(t, "2024"), newECKey(t, "2025")
	is := newIssuer(t, oldKey)
	cfg := baseConfig(is)
	cfg.JWKSMinRefresh = Duration(time.Millisecond)
	rg := newRig(t, cfg)
	if n := is.fetches(); n != 1 {
		t.Fatalf("%d JWKS fetches at start, want 1", n)
	}
	good := is.validClaims(rg.audience)
	if resp := rg.post(t, mint(t, oldKey, good), initBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("old key: status %d", resp.StatusCode)
	}
	if n := is.fetches(); n != 1 {
		t.Errorf("%d JWKS fetches after a known kid, want 1 (cached)", n)
	}
	// A token by a key not yet published: refetch finds nothing, refused.
	time.Sleep(2 * time.Millisecond)
	if resp := rg.post(t, mint(t, newKey, good), initBody); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unpublished key: status %d, want 401", resp.StatusCode)
	}
	if n := is.fetches(); n != 2 {
		t.Errorf("%d JWKS fetches after an unknown kid, want 2", n)
	}
	// The issuer rotates: the new key is published, the old one dropped.
	is.setKeys(newKey)
	time.Sleep(2 * time.Millisecond)
	if resp := rg.post(t, mint(t, newKey, good), initBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("rotated key: status %d, want 200 after refetch", resp.StatusCode)
	}
	if n := is.fetches(); n != 3 {
		t.Errorf("%d JWKS fetches after rotation, want 3", n)
	}
	// The old key, no longer published, is refused once the cache knows.
	time.Sleep(2 * time.Millisecond)
	if resp := rg.post(t, mint(t, oldKey, good), initBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("retired key: status %d, want 401", resp.StatusCode)
	}
}

func TestUnknownKidRefetchIsRateLimited(t *testing.T) {
	key := newRSAKey(t, "known")
	is := newIssuer(t, key)
	cfg := baseConfig(is)
	cfg.JWKSMinRefresh = Duration(time.Hour)
	cfg.JWKSCacheTTL = Duration(2 * time.Hour)
	rg := newRig(t, cfg)
	good := is.validClaims(rg.audience)
	for i := range 5 {
		junk := newECKey(t, "junk-"+string(rune('a'+i)))
		if resp := rg.post(t, mint(t, junk, good), initBody); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("unknown kid: status %d, want 401", resp.StatusCode)
		}
	}
	if n := is.fetches(); n != 1 {
		t.Errorf("%d JWKS fetches for 5 unknown kids within jwks_min_refresh, want 1", n)
	}
	if resp := rg.post(t, mint(t, key, good), initBody); resp.StatusCode != http.StatusOK {
		t.Errorf("known key still accepted: status %d", resp.StatusCode)
	}
}

func TestCacheTTLRefetches(t *testing.T) {
	key := newRSAKey(t, "k")
	is := newIssuer(t, key)
	cfg := baseConfig(is)
	cfg.JWKSCacheTTL = Duration(20 * time.Millisecond)
	cfg.JWKSMinRefresh = Duration(time.Millisecond)
	rg := newRig(t, cfg)
	good := is.validClaims(rg.audience)
	time.Sleep(30 * time.Millisecond)
	// The issuer is down: the stale keys stay in use.
	is.setStatus(http.StatusInternalServerError)
	if resp := rg.post(t, mint(t, key, good), initBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("issuer down, cached keys: status %d, want 200", resp.StatusCode)
	}
	if n := is.fetches(); n != 2 {
		t.Errorf("%d JWKS fetches after the TTL, want 2", n)
	}
	if !strings.Contains(rg.logs.String(), "JWKS refresh failed") {
		t.Errorf("no warning logged for the failed refresh")
	}
}

func TestIssuerDownAtStartIs503ThenRecovers(t *testing.T) {
	key := newRSAKey(t, "k")
	is := newIssuer(t, key)
	is.setStatus(http.StatusBadGateway)
	cfg := baseConfig(is)
	cfg.JWKSMinRefresh = Duration(time.Millisecond)
	rg := newRig(t, cfg)
	good := is.validClaims(rg.audience)
	time.Sleep(2 * time.Millisecond)
	resp := rg.post(t, mint(t, key, good), initBody)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("issuer down: status %d, want 503", resp.StatusCode)
	}
	if resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("503 carries a challenge: a client would drop a good token")
	}
	is.setStatus(http.StatusOK)
	time.Sleep(2 * time.Millisecond)
	if resp := rg.post(t, mint(t, key, good), initBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("issuer back: status %d, want 200", resp.StatusCode)
	}
}

// TestScopes: a token without the server-wide scopes gets 403
// insufficient_scope from the middleware. Per-tool scopes are the host's
// check (checkToolScopes), tested through the host's HTTP handler in
// host/auth_test.go (TestAuthToolScopesRefusedBeforeGoSDK).
func TestScopes(t *testing.T) {
	key := newECKey(t, "k")
	is := newIssuer(t, key)
	rg := newRig(t, baseConfig(is))
	good := is.validClaims(rg.audience)
	resp := rg.post(t, mint(t, key, with(good, "scope", "profile")), initBody)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403", resp.StatusCode)
	}
	p := challengeOf(t, resp)
	if p["error"] != "insufficient_scope" || p["scope"] != "mcp:tools" || p["resource_metadata"] != rg.rs.ResourceMetadataURL() {
		t.Errorf("challenge %v", p)
	}
}

func TestProtectedResourceMetadata(t *testing.T) {
	is := newIssuer(t, newRSAKey(t, "k"))
	cfg := baseConfig(is)
	cfg.ScopesSupported = []string{"mcp:tools", "admin"}
	rg := newRig(t, cfg)
	if got, want := rg.rs.MetadataPaths(), []string{WellKnownPath, WellKnownPath + "/mcp"}; !slices.Equal(got, want) {
		t.Errorf("MetadataPaths = %q, want %q", got, want)
	}
	for _, path := range rg.rs.MetadataPaths() {
		resp, err := http.Get(rg.url + path)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", path, resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s: no CORS header", path)
		}
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, data)
		}
		want := map[string]any{
			"resource":                 rg.audience,
			"authorization_servers":    []any{is.url},
			"scopes_supported":         []any{"mcp:tools", "admin"},
			"bearer_methods_supported": []any{"header"},
			"resource_name":            "mcphost test",
		}
		if !jsonEqual(got, want) {
			t.Errorf("GET %s:\n got %s\nwant %v", path, data, want)
		}
	}
	// What go-sdk's client fetches and checks (RFC 9728 §3.3).
	prm, err := oauthex.GetProtectedResourceMetadata(t.Context(), rg.rs.ResourceMetadataURL(), rg.audience, http.DefaultClient)
	if err != nil {
		t.Fatalf("go-sdk client rejects the metadata: %v", err)
	}
	if prm.Resource != rg.audience {
		t.Errorf("resource %q", prm.Resource)
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestResourceMetadataURL(t *testing.T) {
	for _, tc := range []struct{ audience, override, want string }{
		{"https://mcp.example.com/mcp", "", "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"},
		{"https://mcp.example.com/", "", "https://mcp.example.com/.well-known/oauth-protected-resource"},
		{"https://mcp.example.com", "", "https://mcp.example.com/.well-known/oauth-protected-resource"},
		{"https://example.com/tools/mcp/", "", "https://example.com/.well-known/oauth-protected-resource/tools/mcp"},
		{"https://mcp.example.com/mcp", "https://proxy.example.com/prm", "https://proxy.example.com/prm"},
	} {
		got, err := resourceMetadataURL(Config{Audience: tc.audience, ResourceMetadataURL: tc.override})
		if err != nil || got != tc.want {
			t.Errorf("audience %q: got %q, %v; want %q", tc.audience, got, err, tc.want)
		}
	}
}

// TestGoSDKEndToEnd runs a real go-sdk server behind the middleware and a
// go-sdk client: a client without a token cannot connect, and the tool
// handler sees the caller in req.Extra.TokenInfo. (A tool needing a scope
// the token lacks is refused by the host's check: TestAuthScopesHideAndRefuseTools
// and TestAuthToolScopesRefusedBeforeGoSDK in host/auth_test.go.)
func TestGoSDKEndToEnd(t *testing.T) {
	key := newRSAKey(t, "k")
	is := newIssuer(t, key)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String() + "/mcp"
	cfg := baseConfig(is)
	cfg.Audience = endpoint
	rs, err := New(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil)
	whoami := func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		info := req.Extra.TokenInfo
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: Subject(info) + " " + strings.Join(info.Scopes, ",")}}}, nil, nil
	}
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, whoami)
	mux := http.NewServeMux()
	rs.Mount(mux)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux.Handle("/mcp", rs.Middleware(mcpHandler))
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)

	connect := func(token string) (*mcp.ClientSession, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "auth-test-client", Version: "1"}, nil)
		transport := &mcp.StreamableClientTransport{
			Endpoint:             endpoint,
			HTTPClient:           &http.Client{Transport: bearer{token: token}},
			DisableStandaloneSSE: true,
			MaxRetries:           -1,
		}
		return client.Connect(t.Context(), transport, nil)
	}
	if cs, err := connect(""); err == nil {
		cs.Close()
		t.Fatal("connected without a token")
	}
	cs, err := connect(mint(t, key, is.validClaims(endpoint)))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "alice mcp:tools,profile" {
		t.Errorf("whoami = %q, want the token's subject and scopes", got)
	}
}

// bearer adds a bearer token to each request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestKeyFile(t *testing.T) {
	rsaKey, ecKey := newRSAKey(t, ""), newECKey(t, "ec")
	dir := t.TempDir()
	pemFile := filepath.Join(dir, "issuer.pem")
	var pemData []byte
	for _, k := range []testKey{rsaKey, ecKey} {
		der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
		if err != nil {
			t.Fatal(err)
		}
		pemData = append(pemData, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	}
	writeFile(t, pemFile, pemData)
	jwksFile := filepath.Join(dir, "jwks.json")
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{ecKey.jwk()}})
	writeFile(t, jwksFile, set)

	const iss = "https://auth.example.com"
	for _, tc := range []struct {
		file string
		ok   []testKey
		bad  []testKey
	}{
		{pemFile, []testKey{rsaKey, ecKey}, []testKey{newECKey(t, "ec")}},
		{jwksFile, []testKey{ecKey}, []testKey{rsaKey}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			rg := newRig(t, Config{Issuer: iss, KeyFile: tc.file})
			c := claims{"iss": iss, "aud": rg.audience, "sub": "bob", "exp": time.Now().Add(time.Minute).Unix()}
			for _, k := range tc.ok {
				if resp := rg.post(t, mint(t, k, c), initBody); resp.StatusCode != http.StatusOK {
					t.Errorf("key %s/%q: status %d, want 200", k.alg, k.kid, resp.StatusCode)
				}
			}
			for _, k := range tc.bad {
				if resp := rg.post(t, mint(t, k, c), initBody); resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("foreign key %s/%q: status %d, want 401", k.alg, k.kid, resp.StatusCode)
				}
			}
		})
	}

	privFile := filepath.Join(dir, "private.pem")
	der, err := x509.MarshalPKCS8PrivateKey(ecKey.priv)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, privFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	err = Config{Issuer: iss, Audience: "https://mcp.example.com/mcp", KeyFile: privFile}.Validate()
	if err == nil || !strings.Contains(err.Error(), "server.auth.key_file") || !strings.Contains(err.Error(), "public key only") {
		t.Errorf("private key file: Validate() = %v", err)
	}
	privJWK, _ := json.Marshal(jose.JSONWebKey{Key: ecKey.priv, KeyID: "p"})
	writeFile(t, privFile, privJWK)
	if _, err := loadKeyFile(privFile); err == nil || !strings.Contains(err.Error(), "private key") {
		t.Errorf("private JWK: loadKeyFile() = %v", err)
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestHelpers(t *testing.T) {
	info := &mcpauth.TokenInfo{Scopes: []string{"a", "b"}}
	for _, tc := range []struct {
		info     *mcpauth.TokenInfo
		required []string
		want     bool
	}{
		{info, nil, true},
		{info, []string{"a"}, true},
		{info, []string{"a", "b"}, true},
		{info, []string{"a", "c"}, false},
		{nil, nil, true},
		{nil, []string{"a"}, false},
	} {
		if got := HasScopes(tc.info, tc.required); got != tc.want {
			t.Errorf("HasScopes(%v, %q) = %v", tc.info, tc.required, got)
		}
	}
	if s := Subject(nil); s != "" {
		t.Errorf("Subject(nil) = %q", s)
	}
	if s := Subject(&mcpauth.TokenInfo{Extra: map[string]any{ExtraClientID: "svc"}}); s != "client:svc" {
		t.Errorf("Subject(client only) = %q", s)
	}
	// A client-credentials token (no sub) is bound to its client.
	key := newECKey(t, "k")
	is := newIssuer(t, key)
	rg := newRig(t, baseConfig(is))
	c := with(is.validClaims(rg.audience), "sub", nil, "client_id", nil, "azp", "svc")
	if resp := rg.post(t, mint(t, key, c), initBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	rg.mu.Lock()
	defer rg.mu.Unlock()
	if got := Subject(rg.lastInfo); got != "client:svc" || rg.lastInfo.UserID != "client:svc" {
		t.Errorf("Subject = %q, UserID = %q, want client:svc", got, rg.lastInfo.UserID)
	}
	rec := httptest.NewRecorder()
	InsufficientScope(rec, "https://m.example/prm", []string{"x", "y"}, `needs "x" \ y`+"\n")
	if got, want := rec.Header().Get("WWW-Authenticate"), `Bearer error="insufficient_scope", error_description="needs 'x' / y?", scope="x y", resource_metadata="https://m.example/prm"`; got != want {
		t.Errorf("header\n got %s\nwant %s", got, want)
	}
	if rec.Code != http.StatusForbidden {
		t.Errorf("status %d", rec.Code)
	}
}

func TestScopeClaims(t *testing.T) {
	got, err := scopeClaims("a  b a", []any{"c", "b"})
	if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("scopeClaims = %q, %v", got, err)
	}
	if got, err := scopeClaims(nil, "x y"); err != nil || !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("scp as string: %q, %v", got, err)
	}
	if _, err := scopeClaims([]any{"a", 1}); err == nil {
		t.Error("non-string scope accepted")
	}
}

func TestVerifyErrorsUnwrap(t *testing.T) {
	is := newIssuer(t, newRSAKey(t, "k"))
	cfg := baseConfig(is)
	cfg.Audience = "https://mcp.example.com/mcp"
	rs, err := New(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rs.Verify(t.Context(), "x.y.z", nil)
	if !errors.Is(err, mcpauth.ErrInvalidToken) {
		t.Errorf("Verify error %v does not wrap ErrInvalidToken", err)
	}
}

// TestConcurrentRotation verifies tokens from many goroutines while the
// issuer adds a key: no race, the published key always passes, and the new
// key passes once published.
func TestConcurrentRotation(t *testing.T) {
	a, b := newRSAKey(t, "a"), newECKey(t, "b")
	is := newIssuer(t, a)
	cfg := baseConfig(is)
	cfg.JWKSMinRefresh = Duration(time.Millisecond)
	rg := newRig(t, cfg)
	good := is.validClaims(rg.audience)
	tokA, tokB := mint(t, a, good), mint(t, b, good)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				if i == 0 && j == 3 {
					is.setKeys(a, b)
				}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, rg.url+"/mcp", strings.NewReader(initBody))
				tok := tokA
				if j%2 == 1 {
					tok = tokB
				}
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if tok == tokA && resp.StatusCode != http.StatusOK {
					t.Errorf("published key: status %d", resp.StatusCode)
				}
			}
		}()
	}
	wg.Wait()
	time.Sleep(2 * time.Millisecond)
	if resp := rg.post(t, tokB, initBody); resp.StatusCode != http.StatusOK {
		t.Errorf("new key after rotation: status %d, want 200", resp.StatusCode)
	}
}

// TestToolCalls: the tool names of a body's tools/call requests, read as
// go-sdk reads them; what cannot be read so is an error. (The host's
// check that uses it is tested through its HTTP handler:
// TestAuthToolScopesRefusedBeforeGoSDK in host/auth_test.go.)
func TestToolCalls(t *testing.T) {
	call := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
	}
	for _, tc := range []struct {
		name, body string
		want       []string
		err        string // in the error; "" for none
	}{
		{"one call", call(`{"name":"echo","arguments":{}}`), []string{"echo"}, ""},
		{"batch", "[" + call(`{"name":"a"}`) + `, {"jsonrpc":"2.0","id":2,"method":"ping"}, ` + call(`{"arguments":{},"name":"b"}`) + "]", []string{"a", "b"}, ""},
		{"other method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"x"}}`, nil, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, ""},
		{"params null", call(`null`), []string{""}, ""},
		{"Name is another key", call(`{"Name":"admin","name":"echo"}`), []string{"echo"}, ""},
		{"escaped name", call(`{"name":"\u0061dmin"}`), []string{"admin"}, ""},
		{"name twice", call(`{"name":"echo","name":"admin"}`), nil, `"name" given twice`},
		{"params not an object", call(`["echo"]`), nil, "not an object"},
		{"name not a string", call(`{"name":1}`), nil, "name"},
		{"malformed message", `{"jsonrpc":`, nil, "malformed JSON-RPC message"},
		{"malformed batch", "[" + call(`{"name":"a"}`) + ",", nil, "malformed JSON-RPC batch"},
	} {
		got, err := ToolCalls([]byte(tc.body))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.err)
		case !slices.Equal(got, tc.want):
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestToolCallsThrough: through a search profile's call_tool, the tool
// name a scope check gets is the one the call calls; what CallThrough
// cannot read names call_tool itself (which then calls nothing).
func TestToolCallsThrough(t *testing.T) {
	call := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
	}
	for _, tc := range []struct {
		name, body string
		want       []string
		err        string
	}{
		{"inner name", call(`{"name":"call_tool","arguments":{"name":"secret","arguments":{"a":1}}}`), []string{"secret"}, ""},
		{"direct call", call(`{"name":"echo"}`), []string{"echo"}, ""},
		{"batch", "[" + call(`{"name":"call_tool","arguments":{"name":"a"}}`) + "," + call(`{"name":"b"}`) + "]", []string{"a", "b"}, ""},
		{"no arguments", call(`{"name":"call_tool"}`), []string{"call_tool"}, ""},
		{"inner name twice", call(`{"name":"call_tool","arguments":{"name":"echo","name":"secret"}}`), []string{"call_tool"}, ""},
		{"Name is another key", call(`{"name":"call_tool","arguments":{"Name":"secret","name":"echo"}}`), []string{"call_tool"}, ""},
		{"arguments twice", call(`{"name":"call_tool","arguments":{"name":"echo"},"arguments":{"name":"secret"}}`), nil, `"arguments" given twice`},
	} {
		got, err := ToolCallsThrough([]byte(tc.body), "call_tool")
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.err)
		case !slices.Equal(got, tc.want):
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	for args, want := range map[string]string{
		`{"name":"x","arguments":{"a":1}}`: "",
		`{"name":"x"}`:                     "",
		`{}`:                               `missing required arguments: ["name"]`,
		`null`:                             `missing required arguments: ["name"]`,
		`{"name":""}`:                      `argument "name" must be a tool's name`,
		`{"name":3}`:                       `argument "name" must be a tool's name`,
		`{"name":"x","args":{}}`:           `unexpected argument "args"`,
		`[1]`:                              "not an object",
	} {
		name, _, err := CallThrough(json.RawMessage(args))
		switch {
		case want == "" && (err != nil || name != "x"):
			t.Errorf("CallThrough(%s) = %q, %v", args, name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("CallThrough(%s): error %v, want one mentioning %q", args, err, want)
		}
	}
}
