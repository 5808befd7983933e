package reftest

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The helpers of the fetch and time tests. Their names start with ft so
// that they never collide with the shared harness (harness_test.go).

// ftServerConfig is the [server] table of the tests' configs: serve waits
// for the plugins (a cold compile on a loaded machine takes a while).
const ftServerConfig = "[server]\nstart_wait = \"300s\"\nwatch = false\n\n"

// ftResult is a tools/call outcome: the text of its one text content and
// isError, or the protocol error.
type ftResult struct {
	Text     string
	IsError  bool
	Protocol error
}

// ftCall calls a tool and returns its outcome.
func ftCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) ftResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		return ftResult{Protocol: err}
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s %v: %d content items, want 1", name, args, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: content %T, want text", name, res.Content[0])
	}
	return ftResult{Text: tc.Text, IsError: res.IsError}
}

// ftWant fails the test unless r is a result (not a protocol error) with
// exactly text and isError.
func ftWant(t *testing.T, what string, r ftResult, isError bool, text string) {
	t.Helper()
	if r.Protocol != nil {
		t.Errorf("%s: protocol error %v, want a result", what, r.Protocol)
		return
	}
	if r.IsError != isError || r.Text != text {
		t.Errorf("%s:\n got isError=%v %q\nwant isError=%v %q", what, r.IsError, r.Text, isError, text)
	}
}
