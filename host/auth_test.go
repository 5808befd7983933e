package host_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// authFixture is a host serving hello over HTTP as an OAuth resource
// server, with an issuer whose key the test holds. newAuthFixture adds
// serverLines (e.g. "max_sessions_per_user = 2") to its [server] table.
type authFixture struct {
	endpoint, base, issuer string
	key                    *ecdsa.PrivateKey
	auditFile              string
}

func newAuthFixture(t *testing.T, serverLines ...string) *authFixture {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jwks.json"), jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &authFixture{
		base:      "http://" + ln.Addr().String(),
		issuer:    "https://issuer.example.com",
		key:       key,
		auditFile: filepath.Join(dir, "audit.jsonl"),
	}
	f.endpoint = f.base + host.MCPPath
	cfgPath := filepath.Join(dir, "mcphost.toml")
	cfgText := fmt.Sprintf(`
[server]
watch = false
%s
[server.auth]
issuer = %q
audience = %q
key_file = "jwks.json"
scopes = ["mcp"]
[server.audit]
file = "audit.jsonl"
[[plugin]]
name = "hello"
path = %q
tool_scopes = { add = ["math"] }
[[plugin]]
name = "everything"
path = %q
prefix = "ev_"
scopes = ["admin"]
tool_scopes = { test_simple_text = ["files:read", "files:write"] }
`, strings.Join(serverLines, "\n"), f.issuer, f.endpoint, testutil.GoPlugin(t, "plugins/hello"), testutil.GoPlugin(t, "plugins/everything"))
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.ServeStreamableHTTP(ctx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		<-done
		h.Close(context.Background())
		if t.Failed() {
			t.Logf("host log:\n%s", logs.String())
		}
	})
	return f
}

// token mints a token for alice, for the audience aud with scope and
// lifetime.
func (f *authFixture) token(t *testing.T, aud, scope string, ttl time.Duration) string {
	t.Helper()
	return f.tokenFor(t, "alice", aud, scope, ttl)
}

// tokenFor is token for the subject sub.
func (f *authFixture) tokenFor(t *testing.T, sub, aud, scope string, ttl time.Duration) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: f.key, KeyID: "k1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok, err := jwt.Signed(signer).Claims(map[string]any{
		"iss": f.issuer, "aud": aud, "sub": sub, "scope": scope,
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(),
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func (f *authFixture) connect(t *testing.T, token string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   f.endpoint,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}
	cs, err := client.Connect(t.Context(), transport, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestAuthUnauthenticatedGets401PointingAtMetadata(t *testing.T) {
	f := newAuthFixture(t)
	resp, err := http.Post(f.endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenge := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+f.base+"/.well-known/oauth-protected-resource/mcp") {
		t.Fatalf("no token: %d, WWW-Authenticate %q", resp.StatusCode, challenge)
	}
	status, body := get(t, f.base+"/.well-known/oauth-protected-resource/mcp")
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.Unmarshal([]byte(body), &prm); err != nil || status != http.StatusOK {
		t.Fatalf("metadata: %d %v %s", status, err, body)
	}
	if prm.Resource != f.endpoint || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != f.issuer {
		t.Errorf("metadata = %+v", prm)
	}
}

func TestAuthTokensForAnotherAudienceOrExpiredAreRefused(t *testing.T) {
	f := newAuthFixture(t)
	for name, tok := range map[string]string{
		"other audience": f.token(t, "https://other.example.com/mcp", "mcp", time.Hour),
		"expired":        f.token(t, f.endpoint, "mcp", -time.Hour),
		"missing scope":  f.token(t, f.endpoint, "profile", time.Hour),
	} {
		if _, err := f.connect(t, tok); err == nil {
			t.Errorf("%s: connected", name)
		}
	}
}

func TestAuthScopesHideAndRefuseTools(t *testing.T) {
	f := newAuthFixture(t)

	// Without the math scope, add is neither listed nor callable.
	cs, err := f.connect(t, f.token(t, f.endpoint, "mcp", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Join(toolNames(t, cs), ",")
	if !strings.Contains(names, "echo") || strings.Contains(names, "add") || strings.Contains(names, "ev_") {
		t.Errorf("tools without the math and admin scopes: %s", names)
	}
	// A plugin's scopes cover its prompts and resources too.
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil || len(prompts.Prompts) != 0 {
		t.Errorf("prompts without the admin scope = %v, %v; want none", prompts, err)
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_simple_prompt"}); err == nil || !strings.Contains(err.Error(), "insufficient scope") {
		t.Errorf("prompts/get without the admin scope = %v", err)
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://static-text"}); err == nil || !strings.Contains(err.Error(), "insufficient scope") {
		t.Errorf("resources/read without the admin scope = %v", err)
	}
	if _, text := callText(t, cs, "echo", map[string]any{"text": "hi"}); text != "hi" {
		t.Errorf("echo = %q", text)
	}
	// The HTTP answer is 403 insufficient_scope, naming the scope to ask
	// for (go-sdk's client then ends the session: it would need a new
	// token).
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`
	req, _ := http.NewRequest(http.MethodPost, f.endpoint, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.token(t, f.endpoint, "mcp", time.Hour))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if challenge := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(challenge, `error="insufficient_scope"`) || !strings.Contains(challenge, "math") {
		t.Errorf("add without the math scope: %d, WWW-Authenticate %q", resp.StatusCode, challenge)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("add through the client without the math scope = %v, want Forbidden", err)
	}

	// With it, add is there and works.
	cs2, err := f.connect(t, f.token(t, f.endpoint, "mcp math admin", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs2.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_simple_prompt"}); err != nil {
		t.Errorf("prompts/get with the admin scope: %v", err)
	}
	if names := strings.Join(toolNames(t, cs2), ","); !strings.Contains(names, "add") {
		t.Errorf("tools with the math scope: %s", names)
	}
	if res, _ := callText(t, cs2, "add", map[string]any{"a": 1, "b": 2}); res.IsError {
		t.Errorf("add with the math scope failed: %+v", res)
	}

	// The audit log names the token's subject.
	entries := readAudit(t, f.auditFile)
	var outcomes []string
	for _, e := range entries {
		outcomes = append(outcomes, e.Name+":"+e.Outcome)
		if e.Subject != "alice" {
			t.Errorf("audit entry = %+v, want subject alice", e)
		}
	}
	want := "test_simple_prompt:denied,test://static-text:denied,echo:ok,add:denied,add:denied,test_simple_prompt:ok,add:ok"
	if got := strings.Join(outcomes, ","); got != want {
		t.Errorf("audit outcomes = %s, want %s", got, want)
	}
}

// post POSTs an MCP message body with token, in the session sid (none if
// ""), with the Mcp-Protocol-Version header version (none if ""), and
// returns the status, the WWW-Authenticate header and the body.
func (f *authFixture) post(t *testing.T, token, sid, version, body string) (status int, challenge, answer string) {
	t.Helper()
	status, header, answer := postMCPAs(t, f.endpoint, token, sid, version, body)
	return status, header.Get("WWW-Authenticate"), answer
}

// TestAuthToolScopesRefusedBeforeGoSDK drives the host's HTTP tool-scope
// check (checkToolScopes) with raw POSTs in a session a go-sdk client
// opened (revision 2025-03-26, where batches are allowed): a tools/call
// whose tool needs scopes the token lacks gets 403 with a challenge naming
// the server's scopes and the tool's; one refused call refuses a whole
// batch; a body the check cannot read, or whose tools/call names its tool
// twice, gets 400; a body past go-sdk's limit gets 413. Calls the token
// reaches, and a "Name" key go-sdk does not read, pass. Each refusal here
// is one go-sdk would not make over HTTP: without the check, the call
// would reach go-sdk and get a JSON-RPC answer with status 200.
func TestAuthToolScopesRefusedBeforeGoSDK(t *testing.T) {
	f := newAuthFixture(t)
	metadata := f.base + "/.well-known/oauth-protected-resource/mcp"
	all := f.tokenOf(t, "alice", "mcp math admin files:read files:write")
	client := mcp.NewClient(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   f.endpoint,
		HTTPClient: &http.Client{Transport: bearer{all, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-03-26"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	post := func(scope, body string) (int, string, string) {
		t.Helper()
		return f.post(t, f.tokenOf(t, "alice", scope), cs.ID(), "2025-03-26", body)
	}
	call := func(id int, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params)
	}
	simpleText := call(1, `{"name":"ev_test_simple_text","arguments":{}}`)
	echo := call(2, `{"name":"echo","arguments":{"text":"hi"}}`)
	add := call(3, `{"name":"add","arguments":{"a":1,"b":2}}`)
	// wantResults checks a 200 answer holding n JSON-RPC results.
	wantResults := func(what string, status int, body string, n int) {
		t.Helper()
		if status != http.StatusOK {
			t.Errorf("%s: status %d, want 200 (%s)", what, status, body)
			return
		}
		rs := decodeResponses(t, body)
		if len(rs) != n {
			t.Errorf("%s: %d responses, want %d (%s)", what, len(rs), n, body)
		}
		for _, r := range rs {
			if r.Error != nil || r.Result == nil {
				t.Errorf("%s: response %+v, want a result", what, r)
			}
		}
	}

	t.Run("tool scope missing", func(t *testing.T) {
		status, challenge, body := post("mcp admin", simpleText)
		want := `Bearer error="insufficient_scope", error_description="tool ev_test_simple_text needs more scope", scope="mcp admin files:read files:write", resource_metadata="` + metadata + `"`
		if status != http.StatusForbidden || challenge != want {
			t.Errorf("status %d, WWW-Authenticate\n got %s\nwant %s\n(%s)", status, challenge, want, body)
		}
	})
	t.Run("tool scope partly granted", func(t *testing.T) {
		if status, challenge, body := post("mcp admin files:read", simpleText); status != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) {
			t.Errorf("status %d, WWW-Authenticate %q (%s); want 403 insufficient_scope", status, challenge, body)
		}
	})
	t.Run("tool scope granted", func(t *testing.T) {
		status, _, body := post("mcp admin files:read files:write", simpleText)
		wantResults("ev_test_simple_text", status, body, 1)
	})
	t.Run("tool without scopes", func(t *testing.T) {
		status, _, body := post("mcp", echo)
		wantResults("echo", status, body, 1)
	})
	t.Run("batch with one refused call", func(t *testing.T) {
		status, challenge, body := post("mcp", "["+echo+","+add+"]")
		want := `Bearer error="insufficient_scope", error_description="tool add needs more scope", scope="mcp math", resource_metadata="` + metadata + `"`
		if status != http.StatusForbidden || challenge != want {
			t.Errorf("status %d, WWW-Authenticate\n got %s\nwant %s\n(%s)", status, challenge, want, body)
		}
		status, _, body = post("mcp math", "["+echo+","+add+"]")
		wantResults("batch with every scope", status, body, 2)
	})
	t.Run("name given twice", func(t *testing.T) {
		for _, params := range []string{`{"name":"echo","name":"add","arguments":{"text":"hi"}}`, `{"name":"add","name":"echo","arguments":{"text":"hi"}}`} {
			if status, _, body := post("mcp", call(4, params)); status != http.StatusBadRequest || !strings.Contains(body, `"name" given twice`) {
				t.Errorf("params %s: status %d (%s), want 400 naming the duplicate", params, status, body)
			}
		}
	})
	t.Run("name matched case-sensitively as go-sdk does", func(t *testing.T) {
		// go-sdk reads "name" only; "Name" is another key: this calls echo.
		status, _, body := post("mcp", call(5, `{"Name":"add","name":"echo","arguments":{"text":"hi"}}`))
		wantResults(`"Name":"add","name":"echo"`, status, body, 1)
		if status, challenge, body := post("mcp", call(6, `{"Name":"echo","name":"\u0061dd","arguments":{"a":1,"b":2}}`)); status != http.StatusForbidden || !strings.Contains(challenge, `scope="mcp math"`) {
			t.Errorf(`"name":"\u0061dd": status %d, WWW-Authenticate %q (%s); want 403 for add`, status, challenge, body)
		}
	})
	t.Run("malformed body", func(t *testing.T) {
		// go-sdk would refuse it too (400 malformed payload); the check
		// answers first, with its own words: what it cannot read it does
		// not pass on.
		if status, _, body := post("mcp", `{"jsonrpc":`); status != http.StatusBadRequest || !strings.Contains(body, "malformed JSON-RPC message") {
			t.Errorf("status %d (%s), want 400 from the scope check", status, body)
		}
	})
	t.Run("body over the limit", func(t *testing.T) {
		big := call(7, `{"name":"echo","arguments":{"text":"`+strings.Repeat("x", mcp.DefaultMaxRequestBodyBytes)+`"}}`)
		if status, _, body := post("mcp", big); status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "Request Entity Too Large") {
			t.Errorf("status %d (%.200s), want 413", status, body)
		}
	})
	// The session goes on after the refusals.
	if _, text := callText(t, cs, "echo", map[string]any{"text": "still here"}); text != "still here" {
		t.Errorf("echo after the refusals = %q", text)
	}
}

// TestResultsUnderAuthAreCachedPrivately: with [server.auth] a list
// depends on the token's scopes, so a 2026-07-28 client is told to cache
// it privately (cacheScope "private", SEP-2549), never "public", which
// would let a cache shared between users hand one user's list to another.
func TestResultsUnderAuthAreCachedPrivately(t *testing.T) {
	f := newAuthFixture(t, "stateless = true")
	wire := &wireRecorder{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wire", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: f.endpoint, HTTPClient: &http.Client{Transport: bearer{f.tokenOf(t, "alice", "mcp"), wire}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	wire.take()
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if raw := wire.take(); !strings.Contains(raw, `"cacheScope":"private"`) {
		t.Errorf("tools/list under auth is not cached privately:\n%.400s", raw)
	}
}
