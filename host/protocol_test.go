package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// everythingHost starts a host with plugins/everything; connect clients to
// it with connect.
func everythingHost(t *testing.T) *host.Host {
	t.Helper()
	h, _ := newHost(t, `
[server]
watch = false
[[plugin]]
name = "everything"
path = "`+testutil.GoPlugin(t, "plugins/everything")+`"
timeout = "10s"
`)
	return h
}

// TestEverythingEcho calls plugins/everything's echo, a typed tool whose
// arguments the SDK decodes itself when it can (sdk/args.go), in the Wasm
// guest: plain and escaped text arrive as sent, and its listing keeps its
// explicit schema and annotations.
func TestEverythingEcho(t *testing.T) {
	cs := connect(t, everythingHost(t), nil, "")
	for _, text := range []string{"hello", "", "tab\there \"quoted\" \\ été ✓ <&>", strings.Repeat("x", 5000)} {
		if res, got := callText(t, cs, "echo", map[string]any{"text": text}); res.IsError || got != text {
			t.Errorf("echo(%q) = %q isError=%v", text, got, res.IsError)
		}
	}
	res, got := callText(t, cs, "echo", map[string]any{"text": 5})
	if !res.IsError || !strings.Contains(got, `tool "echo"`) {
		t.Errorf("echo(5) = %q isError=%v, want a tool error naming echo", got, res.IsError)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "echo" {
			continue
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(schema), `"required":["text"]`) || tool.OutputSchema != nil ||
			tool.Title != "Echo" || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("echo listed as %+v, schema %s", tool, schema)
		}
		return
	}
	t.Error("echo not listed")
}

// TestArgumentsDifferingOnlyInCaseAreRefused: {"region": "eu", "REGION":
// "us"} passes test_x_mcp_header's schema, which allows other properties
// (REGION is just another one to it), and the plugin, matching keys
// case-insensitively as encoding/json does, would read region as "us", a
// value the schema never checked as region. The host refuses such a key
// before the plugin sees it; the key as declared still passes.
func TestArgumentsDifferingOnlyInCaseAreRefused(t *testing.T) {
	cs := connect(t, everythingHost(t), nil, "")
	for _, args := range []string{`{"region":"eu","REGION":"us"}`, `{"Region":"us"}`, `{"region":"eu","level":1,"LEVEL":"x"}`} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_x_mcp_header", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				got = tc.Text
			}
		}
		if !res.IsError || !strings.Contains(got, "only in case") {
			t.Errorf("test_x_mcp_header(%s) = %q isError=%v, want it refused", args, got, res.IsError)
		}
	}
	if res, got := callText(t, cs, "test_x_mcp_header", map[string]any{"region": "eu", "other": "x"}); res.IsError || got != "region=eu" {
		t.Errorf("test_x_mcp_header(region) = %q isError=%v", got, res.IsError)
	}
}

// connect connects a go-sdk client with opts, speaking protocol version
// (empty: the newest), to h over an in-memory transport.
func connect(t *testing.T, h *host.Host, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := h.Server().Connect(t.Context(), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "protocol-test", Version: "1"}, opts).
		Connect(t.Context(), clientT, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

var versions = []string{"2025-11-25", "2026-07-28"}

func TestResources(t *testing.T) {
	h := everythingHost(t)
	cs := connect(t, h, nil, "2025-11-25")
	var uris []string
	for r, err := range cs.Resources(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if got := strings.Join(uris, " "); !strings.Contains(got, "test://static-text") || !strings.Contains(got, "test://static-binary") {
		t.Errorf("resources/list = %v", uris)
	}
	templates, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "test://template/{id}/data" {
		t.Errorf("resources/templates/list = %+v, %v", templates, err)
	}

	text, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://static-text"})
	if err != nil || len(text.Contents) != 1 || text.Contents[0].Text == "" || text.Contents[0].MIMEType != "text/plain" {
		t.Errorf("read static-text = %+v, %v", text, err)
	}
	blob, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://static-binary"})
	if err != nil || len(blob.Contents) != 1 || len(blob.Contents[0].Blob) == 0 {
		t.Errorf("read static-binary = %+v, %v", blob, err)
	}
	tmpl, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://template/42/data"})
	if err != nil || len(tmpl.Contents) != 1 || !strings.Contains(tmpl.Contents[0].Text, "42") {
		t.Errorf("read template = %+v, %v", tmpl, err)
	}
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://nowhere"})
	if err == nil {
		t.Error("reading an unknown URI succeeded")
	} else if code := rpcCode(t, err); code != mcp.CodeResourceNotFound {
		t.Errorf("unknown URI: code %d, want %d", code, mcp.CodeResourceNotFound)
	}
}

func TestSubscriptionsReachOnlySubscribers(t *testing.T) {
	h := everythingHost(t)
	// Each session's handlers report updates, and log messages, which
	// mark a point in the session's notifications: a client handles them
	// one at a time in the order they came.
	type session struct {
		cs      *mcp.ClientSession
		updates chan string
		logs    chan struct{}
	}
	connectSession := func() session {
		s := session{updates: make(chan string, 10), logs: make(chan struct{}, 10)}
		s.cs = connect(t, h, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				s.updates <- req.Params.URI
			},
			LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { s.logs <- struct{}{} },
		}, "2025-11-25")
		if err := s.cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// noUpdate checks that s got no update: the plugin sends s a log
	// message, after any update the host sent it before, and once that
	// has been handled an update would have been too. (Waiting a while
	// instead passes whenever the update is late.)
	noUpdate := func(s session, why string) {
		t.Helper()
		callText(t, s.cs, "test_logging_tool", map[string]any{})
		select {
		case <-s.logs:
		case <-time.After(hangGuard): // a hang guard only
			t.Fatal("the log message never came")
		}
		select {
		case uri := <-s.updates:
			t.Errorf("%s, an update for %q came", why, uri)
		default:
		}
	}
	subscriber, other := connectSession(), connectSession()
	if err := subscriber.cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatal(err)
	}
	if err := other.cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "test://nowhere"}); err == nil {
		t.Error("subscribing to an unknown URI succeeded")
	}
	// The other session makes the plugin announce the update.
	callText(t, other.cs, "test_update_watched_resource", map[string]any{})
	select {
	case uri := <-subscriber.updates:
		if uri != "test://watched-resource" {
			t.Errorf("subscriber got an update for %q", uri)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("subscriber got no notifications/resources/updated")
	}
	noUpdate(other, "to a session that did not subscribe")
	// After unsubscribing, no more updates.
	if err := subscriber.cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatal(err)
	}
	callText(t, other.cs, "test_update_watched_resource", map[string]any{})
	noUpdate(subscriber, "after unsubscribing")
}

func TestPrompts(t *testing.T) {
	h := everythingHost(t)
	cs := connect(t, h, nil, "")
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "alpha", "arg2": "beta"}})
	if err != nil || len(res.Messages) == 0 {
		t.Fatalf("prompts/get = %+v, %v", res, err)
	}
	if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "alpha") || !strings.Contains(tc.Text, "beta") {
		t.Errorf("prompt message = %+v", res.Messages[0].Content)
	}
	_, err = cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "alpha"}})
	if err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), `"arg2"`) {
		t.Errorf("prompt without a required argument: %v, want -32602 naming arg2", err)
	}
	img, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_prompt_with_image"})
	if err != nil || len(img.Messages) == 0 {
		t.Fatalf("image prompt = %+v, %v", img, err)
	}
	var sawImage bool
	for _, m := range img.Messages {
		if ic, ok := m.Content.(*mcp.ImageContent); ok && len(ic.Data) > 0 && ic.MIMEType == "image/png" {
			sawImage = true
		}
	}
	if !sawImage {
		t.Errorf("image prompt has no image content: %+v", img.Messages)
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "nope"}); err == nil {
		t.Error("unknown prompt succeeded")
	}
}

func TestCompletionIsRouted(t *testing.T) {
	h := everythingHost(t)
	cs := connect(t, h, nil, "")
	for _, ref := range []*mcp.CompleteReference{
		{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		{Type: "ref/resource", URI: "test://template/{id}/data"},
	} {
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "a"}})
		if err != nil || res.Completion.Values == nil {
			t.Errorf("complete %+v = %+v, %v", ref, res, err)
		}
	}
	_, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "nope"}, Argument: mcp.CompleteParamsArgument{Name: "x"}})
	if err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams {
		t.Errorf("completion for an unknown prompt = %v, want -32602", err)
	}
}

func TestLoggingFollowsTheSessionLevel(t *testing.T) {
	h := everythingHost(t)
	var mu sync.Mutex
	var got []string
	marked := make(chan struct{}) // closed when the marker below arrives
	cs := connect(t, h, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(req.Params.Level)+":"+req.Params.Data.(string))
		if req.Params.Data == "test_logging_tool executed" {
			close(marked)
		}
	}}, "2025-11-25")

	// No level set: the spec sends nothing. The messages a call sends are
	// written before its result, on the session's one ordered stream, and
	// a client handles notifications one at a time in that order. So once
	// the message of a third call (test_logging_tool, the marker) has been
	// handled, every message the first two sent has been too: the client
	// must have the second call's three, then the marker, no more.
	callText(t, cs, "test_tool_with_logging", map[string]any{})
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	callText(t, cs, "test_tool_with_logging", map[string]any{})
	callText(t, cs, "test_logging_tool", map[string]any{})
	select {
	case <-marked:
	case <-time.After(60 * time.Second): // a hang guard
		t.Fatal("the marker log message never came")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"info:Tool execution started", "info:Tool processing data", "info:Tool execution completed", "info:test_logging_tool executed"}
	if !slices.Equal(got, want) {
		t.Errorf("log messages = %q, want the three of the call made after logging/setLevel, then the marker", got)
	}
}

func TestProgressUsesTheRequestToken(t *testing.T) {
	h := everythingHost(t)
	progress := make(chan *mcp.ProgressNotificationParams, 20)
	cs := connect(t, h, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		progress <- req.Params
	}}, "2025-11-25")
	params := &mcp.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}}
	params.SetProgressToken("tok-7")
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-progress:
		if p.ProgressToken != "tok-7" || p.Total == 0 {
			t.Errorf("progress = %+v", p)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no progress notification")
	}
}

// TestSamplingRoundTrips: the plugin asks for a completion the
// multi-round-trip way; go-sdk carries it to a new client (which retries
// itself) and to an old one (asked by the server, handler re-invoked).
func TestSamplingRoundTrips(t *testing.T) {
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			h := everythingHost(t)
			var asked string
			cs := connect(t, h, &mcp.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					asked = req.Params.Messages[0].Content.(*mcp.TextContent).Text
					return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "Paris"}}, nil
				},
			}, version)
			res, text := callText(t, cs, "test_sampling", map[string]any{"prompt": "Capital of France?"})
			if res.IsError || text != "LLM response: Paris" || asked != "Capital of France?" {
				t.Errorf("sampling: %q (isError %v); the client was asked %q", text, res.IsError, asked)
			}
		})
	}
}

func TestElicitationRoundTrips(t *testing.T) {
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			h := everythingHost(t)
			cs := connect(t, h, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada"}}, nil
				},
			}, version)
			res, text := callText(t, cs, "test_elicitation", map[string]any{"message": "Who are you?"})
			if res.IsError || !strings.Contains(text, "action=accept") || !strings.Contains(text, "ada") {
				t.Errorf("elicitation: %q (isError %v)", text, res.IsError)
			}
		})
	}
}

// TestSamplingRefusedWithoutTheCapability: a client that did not declare
// sampling gets a clear error, not a hang.
func TestSamplingRefusedWithoutTheCapability(t *testing.T) {
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			h := everythingHost(t)
			cs := connect(t, h, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, version)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "x"}})
			if err == nil && !res.IsError {
				t.Fatalf("sampling without the capability succeeded: %+v", res)
			}
			if ctx.Err() != nil {
				t.Fatal("sampling without the capability hung")
			}
			t.Logf("refused with: %v", err)
		})
	}
}
