package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestHyperMCPPluginsLoadUnmodified loads plugins written exactly to
// hyper-mcp's v1 and v2 plugin ABIs and uses them through a go-sdk client.
func TestHyperMCPPluginsLoadUnmodified(t *testing.T) {
	h, _ := newHost(t, `
[server]
watch = false
[[plugin]]
name = "v1"
path = "`+testutil.GoPlugin(t, "testdata/plugins/hypermcp-v1")+`"
[[plugin]]
name = "v2"
path = "`+testutil.GoPlugin(t, "testdata/plugins/hypermcp-v2")+`"
timeout = "10s"
`)
	flavors := map[string]string{}
	for _, p := range h.Plugins() {
		flavors[p.Name] = p.Flavor
	}
	if flavors["v1"] != "hyper-mcp v1" || flavors["v2"] != "hyper-mcp v2" {
		t.Errorf("flavors = %v", flavors)
	}

	progress := make(chan *mcp.ProgressNotificationParams, 4)
	cs := connect(t, h, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { progress <- req.Params },
	}, "2025-11-25")

	// v1: describe/call.
	if _, text := callText(t, cs, "shout", map[string]any{"text": "quiet please"}); text != "QUIET PLEASE" {
		t.Errorf("v1 shout = %q", text)
	}
	// v2: blocking sampling through create_message.
	if _, text := callText(t, cs, "ask_llm", map[string]any{"prompt": "Capital of France?"}); text != "model said: Paris" {
		t.Errorf("v2 ask_llm = %q", text)
	}
	// v2: secrets are refused (nothing is granted).
	if _, text := callText(t, cs, "secret", map[string]any{}); text != "secret refused" {
		t.Errorf("v2 secret = %q", text)
	}
	// v2: progress with the request's token.
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
	params.SetProgressToken("p-1")
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-progress:
		if p.ProgressToken != "p-1" || p.Progress != 1 {
			t.Errorf("progress = %+v", p)
		}
	case <-time.After(60 * time.Second):
		t.Error("no progress from the hyper-mcp plugin")
	}
	// v2: completion gets ref.type without "ref/", as hyper-mcp sends it.
	res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "p"}, Argument: mcp.CompleteParamsArgument{Name: "a", Value: "x"}})
	if err != nil || len(res.Completion.Values) != 1 || !strings.HasSuffix(res.Completion.Values[0], "=prompt") {
		t.Errorf("v2 complete = %+v, %v", res, err)
	}
}
