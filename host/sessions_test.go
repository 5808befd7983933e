package host_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestMaxSessionsRefusesANewSessionOnly: with max_sessions = 3, three
// go-sdk clients connect over HTTP; a fourth is refused before go-sdk with
// 503, Retry-After and a JSON-RPC error naming max_sessions (the raw
// answer, and go-sdk's Connect fails); the three sessions keep working;
// once one ends (DELETE) a new client connects. Refusals are counted in
// mcphost_sessions_refused_total.
func TestMaxSessionsRefusesANewSessionOnly(t *testing.T) {
	endpoint, _ := httpHost(t, "[server]\nmax_sessions = 3\n[server.metrics]\nenabled = true\n"+helloConfig)
	var open []*mcp.ClientSession
	for range 3 {
		open = append(open, connectHTTP(t, endpoint, "2025-11-25"))
	}

	status, header, body := postMCPAs(t, endpoint, "", "", "", initializeBody)
	if status != http.StatusServiceUnavailable {
		t.Fatalf("fourth initialize: status %d, want 503 (%s)", status, body)
	}
	if header.Get("Retry-After") == "" {
		t.Errorf("fourth initialize: no Retry-After header (headers %v)", header)
	}
	var answer struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil || answer.JSONRPC != "2.0" || answer.Error == nil ||
		answer.Error.Code != -32011 || !strings.Contains(answer.Error.Message, "max_sessions = 3") {
		t.Errorf("fourth initialize: body %s (%v), want a JSON-RPC error -32011 naming max_sessions = 3", body, err)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "fourth", Version: "1"}, nil)
	if cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err == nil {
		cs.Close()
		t.Fatal("a fourth go-sdk client connected past max_sessions = 3")
	} else {
		t.Logf("fourth go-sdk client: %v", err)
	}

	if _, metrics := get(t, strings.TrimSuffix(endpoint, "/mcp")+"/metrics"); !strings.Contains(metrics, "mcphost_sessions_refused_total 2\n") ||
		!strings.Contains(metrics, "mcphost_sessions_open 3\n") {
		t.Errorf("/metrics: want mcphost_sessions_refused_total 2 and mcphost_sessions_open 3:\n%s", metrics)
	}

	for i, cs := range open {
		if _, text := callText(t, cs, "echo", map[string]any{"text": "still here"}); text != "still here" {
			t.Errorf("session %d at the cap: echo = %q", i, text)
		}
	}

	if err := open[0].Close(); err != nil { // DELETE
		t.Fatalf("close a session: %v", err)
	}
	cs := connectHTTP(t, endpoint, "2025-11-25")
	if _, text := callText(t, cs, "echo", map[string]any{"text": "in its place"}); text != "in its place" {
		t.Errorf("new session after a DELETE: echo = %q", text)
	}
	if status, _, body := postMCPAs(t, endpoint, "", "", "", initializeBody); status != http.StatusServiceUnavailable {
		t.Errorf("at the cap again: initialize status %d, want 503 (%s)", status, body)
	}
}

// TestMaxSessionsNotForStateless: stateless serving has no sessions, so
// max_sessions does not limit how many clients use it.
func TestMaxSessionsNotForStateless(t *testing.T) {
	endpoint, _ := httpHost(t, "[server]\nstateless = true\nmax_sessions = 1\n"+helloConfig)
	for i := range 3 {
		cs := connectHTTP(t, endpoint, "2026-07-28")
		if _, text := callText(t, cs, "echo", map[string]any{"text": "hi"}); text != "hi" {
			t.Errorf("stateless client %d: echo = %q", i, text)
		}
	}
}

// TestMaxSessionsHoldsUnderConcurrentOpens: twenty initialize POSTs at
// once against max_sessions = 3 open three sessions at most (the count
// includes sessions being opened), and at least one.
func TestMaxSessionsHoldsUnderConcurrentOpens(t *testing.T) {
	endpoint, _ := httpHost(t, "[server]\nmax_sessions = 3\n"+helloConfig)
	const n = 20
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(t.Context(), "POST", endpoint, strings.NewReader(initializeBody))
			if err != nil {
				statuses <- 0
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("initialize: %v", err)
				statuses <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && resp.Header.Get("Mcp-Session-Id") == "" {
				t.Errorf("initialize: 200 without a session")
			}
			statuses <- resp.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	opened := 0
	for s := range statuses {
		switch s {
		case http.StatusOK:
			opened++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("initialize: status %d, want 200 or 503", s)
		}
	}
	if opened < 1 || opened > 3 {
		t.Errorf("%d of %d concurrent initializes opened a session, want 1 to 3 (max_sessions = 3)", opened, n)
	}
}

// TestAuthMaxSessionsPerUser: with [server.auth] and max_sessions_per_user
// = 2, alice opens two sessions (go-sdk clients); her third is refused
// before go-sdk with 503, Retry-After and a JSON-RPC error naming
// max_sessions_per_user (the raw answer, and go-sdk's Connect fails),
// while bob still connects and her two sessions keep working; once she
// ends one (DELETE), she connects again, and is at her cap again.
func TestAuthMaxSessionsPerUser(t *testing.T) {
	f := newAuthFixture(t, "max_sessions = 10", "max_sessions_per_user = 2")
	alice, bob := f.tokenOf(t, "alice", "mcp"), f.tokenOf(t, "bob", "mcp")
	var hers []*mcp.ClientSession
	for i := range 2 {
		cs, err := f.connect(t, alice)
		if err != nil {
			t.Fatalf("alice's session %d: %v", i+1, err)
		}
		hers = append(hers, cs)
	}

	status, header, body := postMCPAs(t, f.endpoint, alice, "", "", initializeBody)
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" {
		t.Fatalf("alice's third initialize: status %d, Retry-After %q, want 503 with Retry-After (%s)", status, header.Get("Retry-After"), body)
	}
	var answer struct {
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil || answer.Error == nil ||
		answer.Error.Code != -32011 || !strings.Contains(answer.Error.Message, "max_sessions_per_user = 2") {
		t.Errorf("alice's third initialize: body %s (%v), want a JSON-RPC error -32011 naming max_sessions_per_user = 2", body, err)
	}
	if _, err := f.connect(t, alice); err == nil {
		t.Fatal("alice's third go-sdk client connected past max_sessions_per_user = 2")
	}

	cs, err := f.connect(t, bob)
	if err != nil {
		t.Fatalf("bob, while alice is at her cap: %v", err)
	}
	if _, text := callText(t, cs, "echo", map[string]any{"text": "bob here"}); text != "bob here" {
		t.Errorf("bob's session: echo = %q", text)
	}
	for i, cs := range hers {
		if _, text := callText(t, cs, "echo", map[string]any{"text": "still here"}); text != "still here" {
			t.Errorf("alice's session %d at her cap: echo = %q", i+1, text)
		}
	}

	if err := hers[0].Close(); err != nil { // DELETE
		t.Fatalf("close one of alice's sessions: %v", err)
	}
	if _, err := f.connect(t, alice); err != nil {
		t.Fatalf("alice, after ending one of her sessions: %v", err)
	}
	if status, _, body := postMCPAs(t, f.endpoint, alice, "", "", initializeBody); status != http.StatusServiceUnavailable {
		t.Errorf("alice at her cap again: initialize status %d, want 503 (%s)", status, body)
	}
}
