package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestServeOverStdioFinishesCallsInFlightOnSIGTERM: `mcphost serve` over
// stdio gets SIGTERM while a call runs — a plugin call of faulty's fetch,
// held inside its http_request by a test server until the test lets it
// answer, so the call is surely in flight. The host takes no new request
// (it answers -32004 "server is closing"), the call gets its answer
// within the grace period, and the process exits 0. Before, SIGTERM
// cancelled the call at once and closed the connection.
func TestServeOverStdioFinishesCallsInFlightOnSIGTERM(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	var releaseOnce sync.Once
	let := func() { releaseOnce.Do(func() { close(release) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		arrived <- struct{}{}
		<-release
		io.WriteString(w, "answered after SIGTERM")
	}))
	defer srv.Close()
	defer let() // before srv.Close, which waits for the handler

	cfg := testutil.WriteConfig(t, fmt.Sprintf(`
[server]
watch = false
log_level = "info"
[[plugin]]
name = "faulty"
path = %q
timeout = "1m"
allowed_hosts = ["127.0.0.1"]
allow_private_network = true
`, testutil.GoPlugin(t, "testdata/plugins/faulty")))
	cmd := exec.Command(os.Args[0], "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "MCPHOST_TEST_MAIN=1")
	stderrR, stderrW := io.Pipe()
	cmd.Stderr = stderrW
	logs := newLineLog(stderrR)
	t.Cleanup(func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		stderrW.Close()
		if t.Failed() {
			t.Logf("mcphost stderr:\n%s", logs.String())
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-shutdown-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	result := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"text": srv.URL}})
		result <- outcome{res, err}
	}()
	select {
	case <-arrived:
	case o := <-result:
		t.Fatalf("the call ended (%+v, %v) before its request reached the test server", o.res, o.err)
	case <-time.After(20 * time.Second):
		t.Fatal("the call's request never reached the test server")
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, regexp.MustCompile(`shutting down: no new requests`))
	// A request sent now is refused (go-sdk's client reads -32004 as its
	// connection closing); the call in flight runs on.
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "late"}})
	if err == nil || !strings.Contains(err.Error(), "mcphost is shutting down and takes no new requests") {
		t.Errorf("a call sent during the shutdown = %v, want it refused", err)
	}
	select {
	case o := <-result:
		t.Fatalf("the call in flight ended (%+v, %v) before its plugin call could answer", o.res, o.err)
	default:
	}

	let()
	select {
	case o := <-result:
		text := ""
		if o.err == nil && len(o.res.Content) == 1 {
			text = o.res.Content[0].(*mcp.TextContent).Text
		}
		if o.err != nil || o.res.IsError || text != "answered after SIGTERM" {
			t.Errorf("the call in flight at SIGTERM got %+v, %v; want its answer", o.res, o.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight at SIGTERM got no answer")
	}
	logs.wait(t, regexp.MustCompile(`stopped`))
	if err := cs.Close(); err != nil && !strings.Contains(err.Error(), "closed") {
		t.Errorf("mcphost exited with %v after SIGTERM, want 0", err)
	}
}
