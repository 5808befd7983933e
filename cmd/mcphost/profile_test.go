package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

func profileConfig(t *testing.T, extra string) string {
	return testutil.WriteConfig(t, fmt.Sprintf(`
[server]
watch = false
start_wait = "5m"

[[plugin]]
name = "hello"
path = %q

[[profile]]
name = "echoes"
tools = ["echo"]
rename = { echo = "say" }
%s`, testutil.GoPlugin(t, "plugins/hello"), extra))
}

// TestServeProfileOverStdio: serve --profile NAME serves over stdio what
// the profile shows, by its names; an unknown profile is refused before
// anything loads.
func TestServeProfileOverStdio(t *testing.T) {
	cfg := profileConfig(t, "")
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	var stderr syncedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"serve", "--config", cfg, "--profile", "echoes"}, serverR, serverW, &stderr)
		serverW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "cli-profile", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: clientR, Writer: clientW}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"say"}) {
		t.Errorf("tools through --profile echoes = %v, want [say]", names)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "say", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Errorf("say = %+v, %v", res, err)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("echo through the profile: %v, want unknown tool", err)
	}
	cs.Close()
	if err := <-done; err != nil && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("serve: %v", err)
	}

	_, _, err = runCLI(t, "serve", "--config", cfg, "--profile", "nope")
	if err == nil || !strings.Contains(err.Error(), `--profile "nope"`) || !strings.Contains(err.Error(), "the profiles echoes") {
		t.Errorf("serve --profile nope = %v, want a refusal naming the profiles defined", err)
	}
	_, _, err = runCLI(t, "serve", "--config", cfg, "--profile", "echoes", "--http", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "over HTTP every profile is served") {
		t.Errorf("serve --http --profile = %v, want a usage error", err)
	}
}

// TestValidateReportsProfiles: validate lists each profile's tools and
// fails on one whose table selects nothing.
func TestValidateReportsProfiles(t *testing.T) {
	out, _, err := runCLI(t, "validate", "--config", profileConfig(t, ""))
	if err != nil || !strings.Contains(out, "profile echoes (/mcp/echoes)") || !strings.Contains(out, "1 tools: say") {
		t.Errorf("validate = %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "validate", "--config", profileConfig(t, `
[[profile]]
name = "typo"
tools = ["ehco", "add"]
rename = { greet = "hi" }
`))
	if err == nil || !strings.Contains(err.Error(), "profile(s) typo") ||
		!strings.Contains(out, `PROBLEM tools: "ehco" matches no tool the host serves`) ||
		!strings.Contains(out, `PROBLEM rename: "greet" is not a tool this profile serves`) {
		t.Errorf("validate with a typo = %v\n%s", err, out)
	}
}

// syncedBuffer is a bytes.Buffer safe for concurrent use.
type syncedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncedBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeSearchProfileOverStdio (issue 31): serve --profile NAME of a
// search profile serves its two tools over stdio; search_tools finds the
// profile's tools by the names it gives them, call_tool calls one; and
// validate says how many tools its search indexes.
func TestServeSearchProfileOverStdio(t *testing.T) {
	cfg := profileConfig(t, `
[[profile]]
name = "find"
plugins = ["hello"]
prefix = "h_"
search = true
`)
	out, _, err := runCLI(t, "validate", "--config", cfg)
	if err != nil || !strings.Contains(out, "profile find (/mcp/find)") || !strings.Contains(out, "search: 4 tools indexed") {
		t.Errorf("validate = %v\n%s", err, out)
	}

	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	var stderr syncedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"serve", "--config", cfg, "--profile", "find"}, serverR, serverW, &stderr)
		serverW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "cli-search", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: clientR, Writer: clientW}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"call_tool", "search_tools"}) {
		t.Errorf("tools through --profile find = %v, want call_tool and search_tools", names)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "echo", "limit": 1}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"name":"h_echo"`) {
		t.Errorf("search_tools echo = %+v, %v", res, err)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "h_echo", "arguments": map[string]any{"text": "hi"}}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Errorf("call_tool h_echo = %+v, %v", res, err)
	}
	cs.Close()
	if err := <-done; err != nil && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("serve: %v", err)
	}
}
