package host_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// askingHost loads plugins/everything (which asks the multi-round-trip way)
// and the hyper-mcp v2 test plugin (which asks through blocking host
// functions).
func askingHost(t *testing.T) (*host.Host, *syncBuffer) {
	return newHost(t, `
[server]
watch = false
[[plugin]]
name = "everything"
path = "`+testutil.GoPlugin(t, "plugins/everything")+`"
timeout = "10s"
[[plugin]]
name = "v2"
path = "`+testutil.GoPlugin(t, "testdata/plugins/hypermcp-v2")+`"
timeout = "10s"
`)
}

// connectRecording connects a client with opts, recording the methods of
// the requests the server sends it.
func connectRecording(t *testing.T, h *host.Host, opts *mcp.ClientOptions, version string) (*mcp.ClientSession, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	client := mcp.NewClient(&mcp.Implementation{Name: "recording", Version: "1"}, opts)
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if !strings.HasPrefix(method, "notifications/") && method != "ping" {
				mu.Lock()
				got = append(got, method)
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := h.Server().Connect(t.Context(), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(t.Context(), clientT, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestNoRequestsForCapabilitiesTheClientDidNotDeclare: a client whose
// capabilities are {} is never sent sampling/createMessage, roots/list or
// elicitation/create, whichever way a plugin asks; the tool fails cleanly
// (isError naming the capability), a prompt with -32021. A client that
// declares sampling is asked.
func TestNoRequestsForCapabilitiesTheClientDidNotDeclare(t *testing.T) {
	h, logs := askingHost(t)
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs, received := connectRecording(t, h, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, version)
			for _, tc := range []struct{ tool, capability string }{
				{"test_sampling", "sampling"},
				{"test_elicitation", "elicitation"},
				{"test_input_required_result_list_roots", "roots"},
			} {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"prompt": "x", "message": "x"}})
				if err != nil {
					t.Errorf("%s: a protocol error (%v), want a tool error", tc.tool, err)
					continue
				}
				text := ""
				if len(res.Content) > 0 {
					text = res.Content[0].(*mcp.TextContent).Text
				}
				if !res.IsError || !strings.Contains(text, tc.capability) {
					t.Errorf("%s: isError %v, %q; want a tool error naming %q", tc.tool, res.IsError, text, tc.capability)
				}
			}
			// hyper-mcp's host functions answer nothing when refused (the
			// plugin's PDK then fails to decode); the log says why.
			if res, text := callText(t, cs, "ask_llm", map[string]any{"prompt": "x"}); !res.IsError {
				t.Errorf("ask_llm = %q, want a tool error", text)
			}
			if !strings.Contains(logs.String(), `did not declare the \"sampling\" capability`) {
				t.Error("the host log does not say why create_message was refused")
			}
			if _, text := callText(t, cs, "roots", map[string]any{}); text != "no roots" {
				t.Errorf("roots = %q", text)
			}
			_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
			if err == nil || rpcCode(t, err) != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(err.Error(), "elicitation") {
				t.Errorf("prompt needing elicitation: %v, want -32021 naming elicitation", err)
			}
			if got := received(); len(got) > 0 {
				t.Errorf("the client, which declared no capability, was sent %v", got)
			}
		})
	}
	t.Run("declared", func(t *testing.T) {
		cs, received := connectRecording(t, h, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}}, nil
			},
		}, "2025-11-25")
		if _, text := callText(t, cs, "test_sampling", map[string]any{"prompt": "x"}); text != "LLM response: Paris" {
			t.Errorf("test_sampling = %q", text)
		}
		if _, text := callText(t, cs, "ask_llm", map[string]any{"prompt": "x"}); text != "model said: Paris" {
			t.Errorf("ask_llm = %q", text)
		}
		if got := received(); len(got) != 2 || got[0] != "sampling/createMessage" {
			t.Errorf("the client was sent %v, want two sampling requests", got)
		}
	})
}

// TestClientRefusingSamplingIsAToolError: a client that declared sampling
// but answers the request with a JSON-RPC error (as clients do when the
// user declines): the tool call gets a tool error, not the client's
// JSON-RPC error passed back to it as if the host had failed.
func TestClientRefusingSamplingIsAToolError(t *testing.T) {
	h, _ := askingHost(t)
	cs, _ := connectRecording(t, h, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the user declined"}
		},
	}, "2025-11-25")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "x"}})
	if err != nil {
		t.Fatalf("a protocol error (%v), want a tool error", err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "the user declined") {
		t.Errorf("isError %v, %q; want a tool error with the client's reason", res.IsError, text)
	}
}
