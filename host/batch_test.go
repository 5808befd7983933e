package host_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// echoBatch is a JSON-RPC batch of n tools/call of hello's echo, with ids
// 1..n and texts "b1".."bn", and the extra messages at its end.
func echoBatch(n int, extra ...string) string {
	msgs := make([]string, 0, n+len(extra))
	for i := 1; i <= n; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b%d"}}}`, i, i))
	}
	return "[" + strings.Join(append(msgs, extra...), ",") + "]"
}

const initializeMessage = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batch-test","version":"1"}}}`

// rpcResponse is a JSON-RPC response as the tests read it.
type rpcResponse struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeResponses reads the JSON-RPC responses in body: one response or a
// batch, as JSON or as the data of server-sent events.
func decodeResponses(t *testing.T, body string) []rpcResponse {
	t.Helper()
	var out []rpcResponse
	add := func(data string) {
		data = strings.TrimSpace(data)
		if data == "" {
			return
		}
		if strings.HasPrefix(data, "[") {
			var batch []rpcResponse
			if err := json.Unmarshal([]byte(data), &batch); err != nil {
				t.Fatalf("response %q: %v", data, err)
			}
			out = append(out, batch...)
			return
		}
		var r rpcResponse
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			t.Fatalf("response %q: %v", data, err)
		}
		out = append(out, r)
	}
	if !strings.Contains(body, "data:") {
		add(body)
		return out
	}
	for line := range strings.Lines(body) {
		if data, ok := strings.CutPrefix(line, "data:"); ok {
			add(data)
		}
	}
	return out
}

// postMCP POSTs body to endpoint as an MCP client would, in the session
// sid (none if ""), with the Mcp-Protocol-Version header version (none if
// ""), and returns the status and the body of the answer.
func postMCP(t *testing.T, endpoint, sid, version, body string) (int, string) {
	t.Helper()
	status, _, answer := postMCPAs(t, endpoint, "", sid, version, body)
	return status, answer
}

// postMCPAs is postMCP with the bearer token token (none if ""); it also
// returns the answer's headers.
func postMCPAs(t *testing.T, endpoint, token, sid, version, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// wantRefused checks that a batch got 400 and one JSON-RPC error -32600
// whose message says why.
func wantRefused(t *testing.T, status int, body, why string) {
	t.Helper()
	if status != http.StatusBadRequest {
		t.Errorf("status = %d, want 400 (%s)", status, body)
		return
	}
	rs := decodeResponses(t, body)
	if len(rs) != 1 || rs[0].Error == nil || rs[0].Error.Code != -32600 || rs[0].Result != nil {
		t.Errorf("answer = %s, want one JSON-RPC error -32600", body)
		return
	}
	if !strings.Contains(rs[0].Error.Message, why) {
		t.Errorf("error message %q does not say %q", rs[0].Error.Message, why)
	}
}

// wantEchoes checks that the answer holds the results of echo calls 1..n.
func wantEchoes(t *testing.T, status int, body string, n int) {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("status = %d, want 200 (%s)", status, body)
	}
	got := map[string]bool{}
	for _, r := range decodeResponses(t, body) {
		if r.Error != nil {
			t.Errorf("call %v failed: %s", r.ID, r.Error.Message)
		}
		got[string(r.Result)] = true
	}
	for i := 1; i <= n; i++ {
		if want := fmt.Sprintf(`{"content":[{"type":"text","text":"b%d"}]}`, i); !got[want] {
			t.Errorf("no result %s in the answer", want)
		}
	}
}

// TestBatchesFollowTheSessionRevision sends JSON-RPC batches over HTTP to a
// host listening on loopback, in sessions opened by go-sdk clients. A
// batch is refused, with a JSON-RPC error and before any of its calls
// runs, in a session initialized with a revision after 2025-03-26 —
// whatever the Mcp-Protocol-Version header says or if it says nothing —,
// outside an initialized session, and by a stateless server. In a
// 2025-03-26 session a batch is served up to 100 messages, and refused
// beyond, or with an initialize in it. The session goes on after a refusal.
func TestBatchesFollowTheSessionRevision(t *testing.T) {
	endpoint, _ := httpHost(t, helloConfig)

	t.Run("2025-11-25 session", func(t *testing.T) {
		cs := connectHTTP(t, endpoint, "2025-11-25")
		for _, header := range []string{"", "2025-03-26", "2025-11-25"} {
			status, body := postMCP(t, endpoint, cs.ID(), header, echoBatch(2))
			wantRefused(t, status, body, "not part of MCP after revision 2025-03-26")
		}
		if _, text := callText(t, cs, "echo", map[string]any{"text": "still here"}); text != "still here" {
			t.Errorf("echo after the refused batches = %q", text)
		}
	})

	t.Run("2025-03-26 session", func(t *testing.T) {
		cs := connectHTTP(t, endpoint, "2025-03-26")
		status, body := postMCP(t, endpoint, cs.ID(), "2025-03-26", echoBatch(2))
		wantEchoes(t, status, body, 2)
		status, body = postMCP(t, endpoint, cs.ID(), "", echoBatch(100))
		wantEchoes(t, status, body, 100)

		status, body = postMCP(t, endpoint, cs.ID(), "2025-03-26", echoBatch(101))
		wantRefused(t, status, body, "at most 100 messages")
		status, body = postMCP(t, endpoint, cs.ID(), "2025-03-26", echoBatch(20000))
		wantRefused(t, status, body, "at most 100 messages")
		status, body = postMCP(t, endpoint, cs.ID(), "2025-03-26", echoBatch(1, initializeMessage))
		wantRefused(t, status, body, "initialize must not be part of a JSON-RPC batch")
		status, body = postMCP(t, endpoint, cs.ID(), "2025-03-26", "[]")
		wantRefused(t, status, body, "empty JSON-RPC batch")
		status, body = postMCP(t, endpoint, cs.ID(), "2025-03-26", echoBatch(1)+" {}")
		wantRefused(t, status, body, "malformed")
		if _, text := callText(t, cs, "echo", map[string]any{"text": "still here"}); text != "still here" {
			t.Errorf("echo after the refused batches = %q", text)
		}
	})

	t.Run("no session", func(t *testing.T) {
		status, body := postMCP(t, endpoint, "", "", "["+initializeMessage+"]")
		wantRefused(t, status, body, "needs an initialized session")
		status, body = postMCP(t, endpoint, "", "2025-03-26", echoBatch(2))
		wantRefused(t, status, body, "needs an initialized session")
	})

	t.Run("stateless server", func(t *testing.T) {
		endpoint, _ := httpHost(t, "[server]\nstateless = true\n"+helloConfig)
		cs := connectHTTP(t, endpoint, "2026-07-28")
		for _, header := range []string{"", "2025-03-26", "2026-07-28"} {
			status, body := postMCP(t, endpoint, "", header, echoBatch(2))
			wantRefused(t, status, body, "stateless")
		}
		if _, text := callText(t, cs, "echo", map[string]any{"text": "still here"}); text != "still here" {
			t.Errorf("echo after the refused batches = %q", text)
		}
	})
}

// TestStdioBatchesFollowTheSessionRevision: over stdio a batch is answered
// with a JSON-RPC error and dropped before initialization, in a
// 2025-11-25 session (where go-sdk would end the session), when it holds
// more than 100 messages or an initialize; the session goes on. In a
// 2025-03-26 session a batch is served.
func TestStdioBatchesFollowTheSessionRevision(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			h, _ := newHost(t, strings.ReplaceAll(helloConfig, "{hello}", testutil.GoPlugin(t, "plugins/hello")))
			clientIn, serverOut := io.Pipe()
			serverIn, clientOut := io.Pipe()
			served := make(chan error, 1)
			go func() { served <- h.ServeStdio(context.Background(), serverIn, serverOut, 0) }()
			t.Cleanup(func() {
				clientOut.Close()
				if err := <-served; err != nil {
					t.Errorf("ServeStdio: %v", err)
				}
				clientIn.Close()
			})
			lines := bufio.NewScanner(clientIn)
			lines.Buffer(nil, 1<<20)
			send := func(msg string) {
				t.Helper()
				if _, err := io.WriteString(clientOut, msg+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			receive := func() string {
				t.Helper()
				if !lines.Scan() {
					t.Fatalf("no answer: %v", lines.Err())
				}
				return lines.Text()
			}
			refused := func(why string) {
				t.Helper()
				rs := decodeResponses(t, receive())
				if len(rs) != 1 || rs[0].Error == nil || rs[0].Error.Code != -32600 || !strings.Contains(rs[0].Error.Message, why) {
					t.Errorf("answer = %+v, want a JSON-RPC error -32600 saying %q", rs, why)
				}
			}

			send(echoBatch(1, strings.Replace(initializeMessage, "2025-03-26", version, 1)))
			refused("needs an initialized session")
			send(strings.Replace(initializeMessage, "2025-03-26", version, 1))
			if rs := decodeResponses(t, receive()); len(rs) != 1 || rs[0].Result == nil {
				t.Fatalf("initialize = %+v", rs)
			}
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

			if version == "2025-03-26" {
				send(echoBatch(3))
				got := decodeResponses(t, receive())
				if len(got) != 3 || got[0].Error != nil || got[2].Error != nil {
					t.Errorf("batch of 3 = %+v", got)
				}
				send(echoBatch(101))
				refused("at most 100 messages")
				send(echoBatch(2, initializeMessage))
				refused("initialize must not be part of a JSON-RPC batch")
			} else {
				send(echoBatch(3))
				refused("not part of MCP after revision 2025-03-26")
			}

			send(`{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
			if rs := decodeResponses(t, receive()); len(rs) != 1 || !strings.Contains(string(rs[0].Result), "still here") {
				t.Errorf("echo after the refused batches = %+v", rs)
			}
		})
	}
}

// TestInFlightRequestsPerSessionAreBounded: one session with 100 calls in
// flight (over HTTP, from a go-sdk client) gets its next request refused
// with -32010 rather than queued; another session is served meanwhile, and
// the first is served again once its calls end.
func TestInFlightRequestsPerSessionAreBounded(t *testing.T) {
	// hello first: its echo, not faulty's, is the one served.
	endpoint, _ := httpHost(t, helloConfig+`
[[plugin]]
name = "faulty"
path = "{faulty}"
timeout = "20s"
max_instances = 1
`)
	cs := connectHTTP(t, endpoint, "2025-11-25")

	// One spin holds faulty's only instance; the other 99 wait for it. All
	// 100 are in flight until cancelled.
	spinCtx, cancelSpins := context.WithCancel(t.Context())
	var spins sync.WaitGroup
	spinRefused := make(chan error, 100)
	for range 100 {
		spins.Go(func() {
			_, err := cs.CallTool(spinCtx, &mcp.CallToolParams{Name: "spin", Arguments: map[string]any{}})
			if err != nil && spinCtx.Err() == nil {
				spinRefused <- err
			}
		})
	}
	defer spins.Wait()
	defer cancelSpins()

	// Eventually (once the 100 have reached the host) a request is refused:
	// an echo, or one of the spins when an echo reached the host before it.
	var refusal error
	for range 2000 {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		if err != nil {
			refusal = err
			break
		}
		select {
		case refusal = <-spinRefused:
		case <-time.After(10 * time.Millisecond):
		}
		if refusal != nil {
			break
		}
	}
	if refusal == nil {
		t.Fatal("a session with 100 calls in flight is still served")
	}
	if code := rpcCode(t, refusal); code != -32010 || !strings.Contains(refusal.Error(), "too many requests in flight") {
		t.Fatalf("refusal = %v (code %d), want -32010 too many requests in flight", refusal, code)
	}

	other := connectHTTP(t, endpoint, "2025-11-25")
	if _, text := callText(t, other, "echo", map[string]any{"text": "other"}); text != "other" {
		t.Errorf("another session's echo = %q", text)
	}

	cancelSpins()
	spins.Wait()
	var err error
	for range 2000 {
		if _, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("the session is not served again after its calls ended: %v", err)
	}
}

// FuzzStdioBatches sends an initialized 2025-03-26 session (one where
// batches are allowed, up to 100 messages) an arbitrary line over stdio,
// through ServeStdio and its batch filter, then a ping: the host must
// neither crash nor hang, and every line it writes must be one JSON value
// (its answers to refused batches never interleave with go-sdk's).
func FuzzStdioBatches(f *testing.F) {
	for _, seed := range []string{
		echoBatch(2),
		echoBatch(101),
		echoBatch(1, initializeMessage),
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]`,
		`[]`,
		`[1,2,3]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}] [`,
		` [ {"jsonrpc":"2.0","id":1,"method":"ping"} ] `,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`[`,
	} {
		f.Add([]byte(seed))
	}
	h, _ := newHost(f, "[server]\nwatch = false\n[[plugin]]\nname = \"hello\"\npath = \""+testutil.GoPlugin(f, "plugins/hello")+"\"\ntimeout = \"2s\"\n")

	f.Fuzz(func(t *testing.T, line []byte) {
		input := initializeMessage + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			string(bytes.ReplaceAll(line, []byte("\n"), nil)) + "\n" +
			`{"jsonrpc":"2.0","id":"last","method":"ping"}` + "\n"
		out := &syncBuffer{}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.ServeStdio(ctx, strings.NewReader(input), out, 0); ctx.Err() != nil {
			t.Fatalf("ServeStdio still running 10 s after its input ended (%v); input %q", err, line)
		}
		for l := range strings.Lines(out.String()) {
			if !json.Valid([]byte(l)) {
				t.Fatalf("output line %q is not one JSON value; input %q", l, line)
			}
		}
	})
}
