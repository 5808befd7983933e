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

// elicitAnswers is an ElicitationHandler answering by the message each
// request shows (decline for any other), recording the messages asked.
type elicitAnswers struct {
	answers map[string]map[string]any
	mu      sync.Mutex
	asked   []string
}

func (e *elicitAnswers) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, req.Params.Message)
	if content, ok := e.answers[req.Params.Message]; ok {
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
	return &mcp.ElicitResult{Action: "decline"}, nil
}

func (e *elicitAnswers) messages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.asked...)
}

// olderClientOptions are a 2025-11-25 client's, answering elicitations
// with e. go-sdk's client retries a multi-round trip itself, whatever its
// revision, which would hide what the server hands an older client: a
// client before 2026-07-28 does not, so neither does this one.
func olderClientOptions(e *elicitAnswers) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ElicitationHandler: e.handle,
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}
}

// multiRoundAnswers answers both rounds of plugins/everything's
// test_input_required_result_multi_round.
func multiRoundAnswers() *elicitAnswers {
	return &elicitAnswers{answers: map[string]map[string]any{
		"Step 1: What is your name?":           {"name": "Ada"},
		"Step 2: What is your favorite color?": {"color": "green"},
	}}
}

// checkMultiRound calls test_input_required_result_multi_round through cs
// and checks that the client was asked both rounds and got the complete
// result, with nothing of 2026-07-28's multi-round trip in it.
func checkMultiRound(t *testing.T, cs *mcp.ClientSession, e *elicitAnswers) {
	t.Helper()
	res, text := callText(t, cs, "test_input_required_result_multi_round", map[string]any{})
	if res.IsError || text != "Multi-round complete: Ada likes green" {
		t.Errorf("result %q (isError %v), want the complete one", text, res.IsError)
	}
	if res.InputRequests != nil || res.RequestState != "" {
		t.Errorf("a 2025-11-25 client got inputRequests %v, requestState %q", res.InputRequests, res.RequestState)
	}
	want := []string{"Step 1: What is your name?", "Step 2: What is your favorite color?"}
	if got := e.messages(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the client was asked %q, want %q", got, want)
	}
}

// TestOlderClientsAreAskedEveryRound: a plugin asking for input in two
// rounds, called by a 2025-11-25 client (in-memory and over stateful
// HTTP): the host asks the client each round and returns the complete
// result (go-sdk's server middleware asked the first round only, and
// handed the second round's inputRequests to the client as a result).
func TestOlderClientsAreAskedEveryRound(t *testing.T) {
	everything := testutil.GoPlugin(t, "plugins/everything")
	t.Run("in-memory", func(t *testing.T) {
		e := multiRoundAnswers()
		checkMultiRound(t, connect(t, everythingHost(t), olderClientOptions(e), "2025-11-25"), e)
	})
	t.Run("stateful HTTP", func(t *testing.T) {
		endpoint, _ := httpHost(t, "[server]\nwatch = false\n[[plugin]]\nname = \"everything\"\npath = \""+everything+"\"\n")
		e := multiRoundAnswers()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "rounds-test", Version: "1"}, olderClientOptions(e)).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		checkMultiRound(t, cs, e)
	})
	t.Run("2026-07-28 retries itself", func(t *testing.T) {
		e := multiRoundAnswers()
		cs := connect(t, everythingHost(t), &mcp.ClientOptions{ElicitationHandler: e.handle}, "2026-07-28")
		checkMultiRound(t, cs, e)
	})
}

// TestInputRoundsAreBounded: a plugin that asks again whatever the answer
// (test_input_required_result_elicitation and _prompt ask until a name
// or context is accepted; this user always declines) is called at most
// host.MaxInputRounds times for one request of an older client, which then
// fails saying so: a tool error for a tool, a JSON-RPC error for a prompt.
func TestInputRoundsAreBounded(t *testing.T) {
	h := everythingHost(t)
	t.Run("tool", func(t *testing.T) {
		e := &elicitAnswers{}
		cs := connect(t, h, olderClientOptions(e), "2025-11-25")
		res, text := callText(t, cs, "test_input_required_result_elicitation", map[string]any{})
		if !res.IsError || !strings.Contains(text, `tool "test_input_required_result_elicitation" still asked the client for input after`) {
			t.Errorf("result %q (isError %v), want a tool error saying the rounds ran out", text, res.IsError)
		}
		if got := len(e.messages()); got != host.MaxInputRounds-1 {
			t.Errorf("the client was asked %d times, want %d", got, host.MaxInputRounds-1)
		}
	})
	t.Run("prompt", func(t *testing.T) {
		e := &elicitAnswers{}
		cs := connect(t, h, olderClientOptions(e), "2025-11-25")
		_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
		if err == nil || rpcCode(t, err) != jsonrpc.CodeInternalError || !strings.Contains(err.Error(), `prompt "test_input_required_result_prompt" still asked`) {
			t.Errorf("GetPrompt = %v, want -32603 saying the rounds ran out", err)
		}
		if got := len(e.messages()); got != host.MaxInputRounds-1 {
			t.Errorf("the client was asked %d times, want %d", got, host.MaxInputRounds-1)
		}
	})
	t.Run("prompt answered", func(t *testing.T) {
		e := &elicitAnswers{answers: map[string]map[string]any{"Please provide context for the prompt": {"context": "tests"}}}
		cs := connect(t, h, olderClientOptions(e), "2025-11-25")
		res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
		if err != nil || len(res.Messages) != 1 || res.InputRequests != nil || res.RequestState != "" {
			t.Fatalf("GetPrompt = %+v, %v", res, err)
		}
		if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Context: tests" {
			t.Errorf("message %+v", res.Messages[0].Content)
		}
	})
}
