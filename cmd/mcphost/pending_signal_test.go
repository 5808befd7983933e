package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestServeHTTPStopsOnSIGINTWithASamplingRequestPending runs the real
// binary: a call waits for a sampling answer the client never sends
// (go-sdk's multi-round-trip middleware asks a 2025-11-25 client itself);
// SIGINT still stops mcphost once its shutdown grace is over.
func TestServeHTTPStopsOnSIGINTWithASamplingRequestPending(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "mcphost.toml")
	everything := testutil.GoPlugin(t, "plugins/everything")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf("[server]\nwatch = false\n[[plugin]]\nname = \"everything\"\npath = %q\ntimeout = \"10m\"\n", everything)), 0o644)
	cmd, logs, exited, url := startServeHTTP(t, cfgPath)
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	client := mcp.NewClient(&mcp.Implementation{Name: "deaf", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked <- struct{}{}
			<-release
			return nil, errors.New("test over")
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: 1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "hello?"}})
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the client was never asked for sampling")
	}

	began := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("mcphost exited with %v after SIGINT, want 0", err)
		}
		t.Logf("exited %s after SIGINT (grace %s)", time.Since(began).Round(time.Millisecond), shutdownTimeout)
	case <-time.After(shutdownTimeout + 30*time.Second):
		t.Fatalf("mcphost still running %s after SIGINT (grace %s), with a sampling request pending", shutdownTimeout+30*time.Second, shutdownTimeout)
	}
	logs.wait(t, regexp.MustCompile(`stopped`))
}
