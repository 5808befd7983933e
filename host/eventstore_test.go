package host_test

import (
	"bufio"
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestAStreamIsReplayedAfterItsLastEventID: a client that lost a stream
// gets its events again from the one after the Last-Event-ID it names
// (Streamable HTTP resumption), from the host's event store: after a
// tools/call has been answered, a GET naming the call's priming event
// brings back the result.
func TestAStreamIsReplayedAfterItsLastEventID(t *testing.T) {
	everything := testutil.GoPlugin(t, "plugins/everything")
	endpoint, _ := httpHost(t, "[server]\nwatch = false\n[[plugin]]\nname = \"everything\"\npath = \""+everything+"\"\n")
	wire := &wireRecorder{}
	var sessionID atomic.Value // string
	httpClient := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := wire.RoundTrip(req)
		if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
			sessionID.Store(resp.Header.Get("Mcp-Session-Id"))
		}
		return resp, err
	})}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "resume", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	wire.take()
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "replay me"}}); err != nil {
		t.Fatal(err)
	}
	ids := regexp.MustCompile(`(?m)^id: (\S+)$`).FindAllStringSubmatch(wire.take(), -1)
	if len(ids) < 2 {
		t.Fatalf("the call's stream had %d event ids, want a priming event and the result", len(ids))
	}

	// The client has the result before the server's handler of the POST
	// has let go of the stream; until it has, a GET for the stream is
	// 409 Conflict ("ongoing stream"). Ask again until it is not.
	var resp *http.Response
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, endpoint, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sessionID.Load().(string))
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Last-Event-ID", ids[0][1])
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusConflict || attempt == 1000 { // a hang guard only
			break
		}
		resp.Body.Close()
		time.Sleep(10 * time.Millisecond)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET with Last-Event-ID %s: status %s", ids[0][1], resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data:") && strings.Contains(line, "replay me") {
			return
		}
	}
	t.Fatalf("the replayed stream ended (%v) without the call's result", sc.Err())
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestASlowCallsPrimingEventArrivesBeforeItsAnswer: the host holds back
// go-sdk's priming event so that it leaves with an ordinary call's answer
// (coalescePriming), but a call still running gets it alone, so that a
// client can resume that stream if it breaks. The call here loops until
// its 10 min deadline, so a priming event held until the answer would
// hang the test; it is read while the call runs, and the session's close
// (DELETE) then cancels the call.
func TestASlowCallsPrimingEventArrivesBeforeItsAnswer(t *testing.T) {
	endpoint, _ := httpHost(t, "[server]\nwatch = false\n[[plugin]]\nname = \"faulty\"\npath = \"{faulty}\"\ntimeout = \"10m\"\n")
	var sessionID atomic.Value // string
	httpClient := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
			sessionID.Store(resp.Header.Get("Mcp-Session-Id"))
		}
		return resp, err
	})}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "slow", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint,
		strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"spin","arguments":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sessionID.Load().(string))
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the call's answer is %q, want an SSE stream", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data:") && strings.Contains(line, `"id":99`) {
			t.Fatalf("the call's answer came before any priming event: %s", line)
		}
		if strings.HasPrefix(line, "id: ") {
			return // the priming event, while the call still spins
		}
	}
	t.Fatalf("the call's stream ended (%v) without a priming event", sc.Err())
}
