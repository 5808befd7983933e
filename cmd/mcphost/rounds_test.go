package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestServeOverStdioAsksEveryInputRound: `mcphost serve` over stdio, a
// 2025-11-25 go-sdk client declaring elicitation, and plugins/everything's
// test_input_required_result_multi_round, which asks in two rounds: the
// client is asked both and gets the complete result, without 2026-07-28's
// inputRequests or requestState. The client's own multi-round-trip retry
// is off, as an older client has none (go-sdk's would hide the fault).
func TestServeOverStdioAsksEveryInputRound(t *testing.T) {
	cfg := testutil.WriteConfig(t, fmt.Sprintf("[server]\nwatch = false\n[[plugin]]\nname = \"everything\"\npath = %q\n",
		testutil.GoPlugin(t, "plugins/everything")))
	cmd := exec.Command(os.Args[0], "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "MCPHOST_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var mu sync.Mutex
	var asked []string
	answers := map[string]map[string]any{
		"Step 1: What is your name?":           {"name": "Ada"},
		"Step 2: What is your favorite color?": {"color": "green"},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-rounds-test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req.Params.Message)
			if content, ok := answers[req.Params.Message]; ok {
				return &mcp.ElicitResult{Action: "accept", Content: content}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_input_required_result_multi_round", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("CallTool: %v\nstderr:\n%s", err, stderr.String())
	}
	text := ""
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError || text != "Multi-round complete: Ada likes green" || res.InputRequests != nil || res.RequestState != "" {
		t.Errorf("result %+v (text %q), want the complete one and nothing of 2026-07-28", res, text)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "Step 1: What is your name?|Step 2: What is your favorite color?"; strings.Join(asked, "|") != want {
		t.Errorf("the client was asked %q, want both rounds", asked)
	}
}
