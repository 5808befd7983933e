package host_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// hangGuard bounds what must end promptly: far above what it takes, only
// there so that a hang fails the test instead of stalling it.
const hangGuard = 20 * time.Second

// askingTools are the two ways a plugin waits on the client's sampling: a
// plugin of mcphost's ABI returns inputRequests, which the host sends to
// an older client itself (rounds.go)
// (everything's test_sampling); a hyper-mcp plugin blocks in its
// create_message host function (hypermcp-v2's ask_llm).
var askingTools = []struct{ name, plugin, tool string }{
	{"multi-round-trip", "everything", "test_sampling"},
	{"hyper-mcp blocking host function", "v2", "ask_llm"},
}

// askingConfig loads both plugins with a call deadline far beyond the test,
// so that only the host's handling of the session can end the wait.
func askingConfig(t *testing.T) string {
	return `
[server]
watch = false
[[plugin]]
name = "everything"
path = "` + testutil.GoPlugin(t, "plugins/everything") + `"
timeout = "10m"
[[plugin]]
name = "v2"
path = "` + testutil.GoPlugin(t, "testdata/plugins/hypermcp-v2") + `"
timeout = "10m"
`
}

// deafClient returns client options whose sampling handler never answers:
// it reports each request on asked and blocks until release is called
// (which a test does when it ends: a go-sdk client's Close waits for its
// handlers).
func deafClient() (opts *mcp.ClientOptions, asked <-chan struct{}, release func()) {
	askedc := make(chan struct{}, 8)
	released := make(chan struct{})
	var once sync.Once
	return &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			askedc <- struct{}{}
			<-released
			return nil, errors.New("test over")
		},
	}, askedc, func() { once.Do(func() { close(released) }) }
}

// connectDeaf connects a client with deafClient's options to the host
// through transport, for protocol 2025-11-25; asked and release are
// deafClient's.
func connectDeaf(t *testing.T, transport mcp.Transport) (cs *mcp.ClientSession, asked <-chan struct{}, release func()) {
	t.Helper()
	opts, asked, release := deafClient()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "deaf", Version: "1"}, opts).
		Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		release()
		t.Fatalf("connect a deaf client: %v", err)
	}
	return cs, asked, release
}

// pendingCallEnds waits for the outcome of a call callPending started,
// failing the test if none comes within hangGuard.
func pendingCallEnds(t *testing.T, result <-chan error) {
	t.Helper()
	select {
	case err := <-result:
		t.Logf("the pending call ended with %v", err)
	case <-time.After(hangGuard):
		t.Error("the pending call never ended")
	}
}

// serveStdioPipes serves h over in-process pipes until ctx ends (then for
// at most grace) or the client's end of stdin closes; served gets what
// ServeStdio returned. It
// returns the client's transport and the server's and client's writers,
// which the test closes.
func serveStdioPipes(ctx context.Context, h *host.Host, grace time.Duration) (transport mcp.Transport, serverW, clientW *io.PipeWriter, served <-chan error) {
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- h.ServeStdio(ctx, serverR, serverW, grace) }()
	return &mcp.IOTransport{Reader: clientR, Writer: clientW}, serverW, clientW, done
}

// callPending starts a call of tool on cs and waits until the client has
// been asked for sampling; the call's outcome arrives on the channel.
func callPending(t *testing.T, cs *mcp.ClientSession, tool string, asked <-chan struct{}) <-chan error {
	t.Helper()
	result := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"prompt": "hello?"}})
		result <- err
	}()
	select {
	case <-asked:
	case err := <-result:
		t.Fatalf("call %s ended (%v) before the client was asked for sampling", tool, err)
	case <-time.After(hangGuard):
		t.Fatalf("the client was never asked for sampling by %s", tool)
	}
	return result
}

// serveHTTPFor serves h on a loopback port with the given grace; stop
// cancels the serving and returns what ServeStreamableHTTP returned.
func serveHTTPFor(t *testing.T, h *host.Host, grace time.Duration) (endpoint string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.ServeStreamableHTTP(ctx, ln, grace) }()
	stopped := false
	stop = func() error {
		cancel()
		if stopped {
			return nil
		}
		stopped = true
		select {
		case err := <-done:
			return err
		case <-time.After(grace + hangGuard):
			t.Fatalf("ServeStreamableHTTP still running %s after its shutdown began (grace %s)", grace+hangGuard, grace)
			return nil
		}
	}
	t.Cleanup(func() { stop() })
	return "http://" + ln.Addr().String() + host.MCPPath, stop
}

// TestHTTPShutdownEndsWaitsOnAClientThatNeverAnswers: a call waits for a
// sampling answer the client never sends; shutting the HTTP server down
// still finishes once its grace is over, and the call gets an answer.
func TestHTTPShutdownEndsWaitsOnAClientThatNeverAnswers(t *testing.T) {
	for _, tc := range askingTools {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHost(t, askingConfig(t))
			const grace = 500 * time.Millisecond
			endpoint, stop := serveHTTPFor(t, h, grace)
			// One retry: the server is gone for good once shut down.
			cs, asked, release := connectDeaf(t, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: 1})
			defer release()
			result := callPending(t, cs, tc.tool, asked)
			began := time.Now()
			if err := stop(); err != nil {
				t.Errorf("ServeStreamableHTTP returned %v", err)
			}
			t.Logf("shutdown took %s (grace %s)", time.Since(began).Round(time.Millisecond), grace)
			pendingCallEnds(t, result)
			release()
			cs.Close()
		})
	}
}

// TestHTTPDeleteEndsWaitsOnItsClient: a client that leaves (DELETE of its
// session, which go-sdk's Close sends) while a call of its session waits
// for its sampling answer: the DELETE returns and the call ends.
func TestHTTPDeleteEndsWaitsOnItsClient(t *testing.T) {
	for _, tc := range askingTools {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHost(t, askingConfig(t))
			endpoint, _ := serveHTTPFor(t, h, 5*time.Second)
			cs, asked, release := connectDeaf(t, &mcp.StreamableClientTransport{Endpoint: endpoint})
			t.Cleanup(func() { release(); cs.Close() })
			result := callPending(t, cs, tc.tool, asked)

			req, _ := http.NewRequest(http.MethodDelete, endpoint, nil)
			req.Header.Set("Mcp-Session-Id", cs.ID())
			deleted := make(chan int, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("DELETE: %v", err)
					deleted <- 0
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				deleted <- resp.StatusCode
			}()
			select {
			case code := <-deleted:
				if code != http.StatusNoContent {
					t.Errorf("DELETE = %d, want 204", code)
				}
			case <-time.After(hangGuard):
				t.Fatal("DELETE of a session whose call waits on its client hung")
			}
			pendingCallEnds(t, result)
		})
	}
}

// TestDeleteEndsOnlyTheCallerSessionsWaits: a DELETE naming another
// session (or none the host knows) cancels nothing.
func TestDeleteOfAnotherSessionLeavesWaitsAlone(t *testing.T) {
	h, _ := newHost(t, askingConfig(t))
	endpoint, _ := serveHTTPFor(t, h, 5*time.Second)
	cs, asked, release := connectDeaf(t, &mcp.StreamableClientTransport{Endpoint: endpoint})
	other := connectHTTP(t, endpoint, "2025-11-25")
	result := callPending(t, cs, "test_sampling", asked)
	t.Cleanup(func() {
		// The client must have sent its answer before it closes: go-sdk's
		// Close drops it otherwise, and waits for the call forever.
		release()
		select {
		case <-result:
		case <-time.After(hangGuard):
			t.Error("the call did not end once the client answered")
		}
		cs.Close()
	})
	req, _ := http.NewRequest(http.MethodDelete, endpoint, nil)
	req.Header.Set("Mcp-Session-Id", other.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE of the other session = %d", resp.StatusCode)
	}
	// Ping the host through the waiting session: it is alive, and its
	// call is still pending.
	if err := cs.Ping(t.Context(), nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	select {
	case err := <-result:
		t.Fatalf("the call of another session ended (%v) on this DELETE", err)
	default:
	}
}

// TestStdioAndHostCloseEndWaitsOnAClientThatNeverAnswers: over stdio, the
// end of ServeStdio's context ends the session once its grace is over even
// while a call waits on the client; over any transport, Host.Close returns
// once its context ends.
func TestStdioAndHostCloseEndWaitsOnAClientThatNeverAnswers(t *testing.T) {
	for _, tc := range askingTools {
		t.Run("stdio/"+tc.name, func(t *testing.T) {
			h, _ := newHost(t, askingConfig(t))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			transport, serverW, clientW, served := serveStdioPipes(ctx, h, 500*time.Millisecond)
			cs, asked, release := connectDeaf(t, transport)
			t.Cleanup(func() { release(); clientW.Close(); serverW.Close(); cs.Close() })
			callPending(t, cs, tc.tool, asked)
			cancel()
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("ServeStdio = %v", err)
				}
			case <-time.After(hangGuard):
				t.Fatal("ServeStdio did not return after its context ended, with a call waiting on the client")
			}
		})
		t.Run("Host.Close/"+tc.name, func(t *testing.T) {
			cfg, err := host.LoadConfig(testutil.WriteConfig(t, askingConfig(t)))
			if err != nil {
				t.Fatal(err)
			}
			h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.NewNullLogger()})
			if err != nil {
				t.Fatal(err)
			}
			opts, asked, release := deafClient()
			cs := connect(t, h, opts, "2025-11-25")
			t.Cleanup(release) // before connect's cleanup closes the client
			result := callPending(t, cs, tc.tool, asked)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			closed := make(chan error, 1)
			go func() { closed <- h.Close(ctx) }()
			select {
			case err := <-closed:
				if err != nil && !strings.Contains(err.Error(), "context") {
					t.Errorf("Host.Close = %v", err)
				}
			case <-time.After(hangGuard):
				t.Fatal("Host.Close did not return after its context ended, with a call waiting on the client")
			}
			pendingCallEnds(t, result)
		})
	}
}

// TestStdioClientLeavingEndsItsWaits: a client that goes away (its end of
// stdin closes) while a call waits on its answer: the session ends.
func TestStdioClientLeavingEndsItsWaits(t *testing.T) {
	h, _ := newHost(t, askingConfig(t))
	transport, serverW, clientW, served := serveStdioPipes(context.Background(), h, 0)
	cs, asked, release := connectDeaf(t, transport)
	t.Cleanup(func() { release(); serverW.Close(); cs.Close() })
	callPending(t, cs, "test_sampling", asked)
	clientW.Close()
	select {
	case <-served:
	case <-time.After(hangGuard):
		t.Fatal("ServeStdio outlived its client, held by a call waiting on it")
	}
}

// TestIdleSessionTimeoutEndsWaitsOnAVanishedClient: a client that drops
// its connection while a call waits on its sampling answer, and never comes
// back: once the session is idle past session_timeout, go-sdk closes it,
// and the close goes through (the call's wait is cancelled).
func TestIdleSessionTimeoutEndsWaitsOnAVanishedClient(t *testing.T) {
	h, logs := newHost(t, `
[server]
watch = false
session_timeout = "1s"
[[plugin]]
name = "everything"
path = "`+testutil.GoPlugin(t, "plugins/everything")+`"
timeout = "10m"
`)
	endpoint, _ := serveHTTPFor(t, h, 5*time.Second)
	post := func(ctx context.Context, session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(t.Context(), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"vanishing","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: no session (status %d)", resp.StatusCode)
	}
	resp = post(t.Context(), session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()

	// The call; once the sampling request arrives on its stream, the
	// client vanishes.
	ctx, vanish := context.WithCancel(t.Context())
	resp = post(ctx, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hello?"}}}`)
	var seen strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "sampling/createMessage") {
		n, err := resp.Body.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("the sampling request never came: %v; stream: %s", err, seen.String())
		}
	}
	vanish()
	resp.Body.Close()

	// GET (which keeps no session alive) until the session is gone.
	deadline := time.Now().Add(hangGuard)
	for {
		req, _ := http.NewRequest(http.MethodGet, endpoint, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session still there (GET %d) %s after its client vanished, with session_timeout 1s", resp.StatusCode, hangGuard)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "session idle past session_timeout") {
		t.Error("the log does not say the idle session's requests were cancelled")
	}
}

// TestStdioShutdownLetsACallWaitingOnTheClientFinish: ServeStdio's context
// ends while a call waits for the client's sampling answer; the answer
// still reaches the call (the client's answers pass while draining), the
// call gets its result, and ServeStdio returns as soon as it has, long
// before its grace (10 minutes) is over.
func TestStdioShutdownLetsACallWaitingOnTheClientFinish(t *testing.T) {
	h, logs := newHost(t, askingConfig(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	transport, serverW, clientW, served := serveStdioPipes(ctx, h, 10*time.Minute)
	asked := make(chan struct{}, 1)
	answer := make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(answer) }) }
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "patient", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked <- struct{}{}
			<-answer
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
	}).Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { let(); clientW.Close(); serverW.Close(); cs.Close() })
	result := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "capital?"}})
		switch {
		case err != nil:
			result <- err.Error()
		case len(res.Content) == 0:
			result <- "no content"
		default:
			result <- res.Content[0].(*mcp.TextContent).Text
		}
	}()
	select {
	case <-asked:
	case <-time.After(hangGuard):
		t.Fatal("the client was never asked")
	}
	cancel()
	for deadline := time.Now().Add(hangGuard); !strings.Contains(logs.String(), "shutting down: no new requests"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("ServeStdio did not start shutting down")
		}
	}
	let()
	select {
	case got := <-result:
		if got != "LLM response: Paris" {
			t.Errorf("the call waiting at the shutdown got %q, want its result", got)
		}
	case <-time.After(hangGuard):
		t.Fatal("the call waiting at the shutdown got no answer")
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("ServeStdio still running after its last call was answered")
	}
}
