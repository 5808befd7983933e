package host_test

import (
	"context"
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

// httpHost serves cfgText over Streamable HTTP on a loopback port and
// returns the endpoint URL and a function that shuts it down gracefully.
func httpHost(t *testing.T, cfgText string) (endpoint string, stop func() error) {
	t.Helper()
	cfgText = strings.NewReplacer(
		"{hello}", testutil.GoPlugin(t, "plugins/hello"),
		"{faulty}", testutil.GoPlugin(t, "testdata/plugins/faulty"),
	).Replace(cfgText)
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, cfgText))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.ServeStreamableHTTP(ctx, ln, 5*time.Second) }()
	var once sync.Once
	var serveErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			serveErr = <-done
			if err := h.Close(context.Background()); err != nil {
				t.Errorf("host.Close: %v", err)
			}
		})
		return serveErr
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("host log:\n%s", logs.String())
		}
	})
	return "http://" + ln.Addr().String() + host.MCPPath, stop
}

func connectHTTP(t *testing.T, endpoint, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestHTTPBothProtocolRevisions(t *testing.T) {
	for _, tc := range []struct {
		name, extra, version string
	}{
		{"stateful 2025-11-25", "", "2025-11-25"},
		{"stateful 2025-06-18", "", "2025-06-18"},
		{"stateless 2026-07-28", "[server]\nstateless = true\nlist_ttl = \"30s\"\n", "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint, _ := httpHost(t, tc.extra+helloConfig)
			cs := connectHTTP(t, endpoint, tc.version)
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil || len(tools.Tools) != 4 {
				t.Fatalf("ListTools = %v, %v", tools, err)
			}
			if strings.Contains(tc.name, "stateless") && tools.TTLMs != 30000 {
				t.Errorf("tools/list ttlMs = %d, want 30000 from list_ttl", tools.TTLMs)
			}
			for i := range 3 {
				_, text := callText(t, cs, "echo", map[string]any{"text": strings.Repeat("x", i)})
				if text != strings.Repeat("x", i) {
					t.Errorf("echo #%d = %q", i, text)
				}
			}
		})
	}
}

func TestHTTPRefusesForeignHostAndOrigin(t *testing.T) {
	endpoint, _ := httpHost(t, helloConfig)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name         string
		host, origin string
		want         int
	}{
		{"own address", "", "", http.StatusOK},
		{"localhost alias", "localhost:" + strings.Split(strings.TrimPrefix(endpoint, "http://127.0.0.1:"), "/")[0], "", http.StatusOK},
		{"forged Host (DNS rebinding)", "evil.example:80", "", http.StatusForbidden},
		{"foreign Origin", "", "http://evil.example", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status = %d, want %d (%s)", resp.StatusCode, tc.want, b)
			}
		})
	}
}

func TestHTTPGracefulShutdownFinishesCallsInFlight(t *testing.T) {
	endpoint, stop := httpHost(t, `
[[plugin]]
name = "faulty"
path = "{faulty}"
timeout = "700ms"
`)
	// spin logs its text, then runs until its 700ms timeout: a call that is
	// in flight when the shutdown starts, and must get its answer (an
	// error), not a dropped connection. The shutdown starts when the log
	// message has arrived, so the call is surely running in the plugin.
	spinning := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
			select {
			case spinning <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "spin", Arguments: map[string]any{"text": "spinning"}})
		result <- err
	}()
	select {
	case <-spinning:
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("the spin call never reached the plugin")
	}
	if err := stop(); err != nil {
		t.Errorf("ServeStreamableHTTP returned %v", err)
	}
	err = <-result
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("call in flight during shutdown got %v, want the plugin's timeout error", err)
	}
	if _, err := http.Post(endpoint, "application/json", strings.NewReader("{}")); err == nil {
		t.Error("server still accepts connections after shutdown")
	}
}
