package host_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// TestTracesReachABackend serves hello and faulty over HTTP with traces
// exported to a real Jaeger (internal/testutil), over both OTLP protocols,
// and reads the traces back from Jaeger's query API: the request's SERVER
// span by the MCP conventions under the client's _meta.traceparent, the
// activation of an idle plugin, the Wasm call, a tool error, and an
// http_request whose outbound request carries the trace on.
func TestTracesReachABackend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Jaeger; skipped in -short mode")
	}
	for _, protocol := range []string{testutil.OTLPHTTP, testutil.OTLPGRPC} {
		t.Run(strings.ReplaceAll(protocol, "/", "_"), func(t *testing.T) { tracesReachABackend(t, protocol) })
	}
}

func tracesReachABackend(t *testing.T, protocol string) {
	j := testutil.StartJaeger(t)
	service := "mcphost-test-" + strings.ReplaceAll(protocol, "/", "-")

	// The API a plugin calls: it records the traceparent it gets.
	var mu sync.Mutex
	var gotTraceparent string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotTraceparent = r.Header.Get("traceparent")
		mu.Unlock()
		fmt.Fprint(w, "pong")
	}))
	t.Cleanup(api.Close)

	// max_idle_code_mb = 0: the first call's activation reads and compiles
	// the module instead of taking the code the load's describe kept.
	h, logs := newHost(t, fmt.Sprintf(`
[server]
watch = false
max_idle_code_mb = 0
[server.telemetry]
traces_exporter = "otlp"
endpoint = %q
protocol = %q
service_name = %q
sampler = "always_on"
[[plugin]]
name = "hello"
path = %q
[[plugin]]
name = "faulty"
path = %q
allowed_hosts = ["127.0.0.1"]
allow_private_network = true
`, j.Endpoint(protocol), protocol, service, testutil.GoPlugin(t, "plugins/hello"), testutil.GoPlugin(t, "testdata/plugins/faulty")))
	endpoint, _ := serveHTTPFor(t, h, time.Second)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	// A call carrying the client's trace context in _meta (SEP-414), to
	// an idle plugin: it activates.
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "traced"},
		Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	tr := j.WaitForTrace(t, clientTrace, 3, 30*time.Second)
	server := tr.Span(t, "tools/call echo")
	if server.Kind != "server" || server.ParentSpanID != clientSpan || server.Service != service {
		t.Errorf("tools/call echo: kind %q, parent %q, service %q; want server, child of the client's span %s, %s", server.Kind, server.ParentSpanID, server.Service, clientSpan, service)
	}
	for k, want := range map[string]any{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool", "network.transport": "tcp", "mcp.protocol.version": "2025-11-25"} {
		if got := server.Attributes[k]; got != want {
			t.Errorf("tools/call echo: %s = %v, want %v", k, got, want)
		}
	}
	for _, k := range []string{"mcp.session.id", "jsonrpc.request.id"} {
		if server.Attributes[k] == nil || server.Attributes[k] == "" {
			t.Errorf("tools/call echo has no %s: %v", k, server.Attributes)
		}
	}
	if _, bad := server.Attributes["error.type"]; bad || server.Status.Code == "ERROR" {
		t.Errorf("a successful call has error.type %v, status %+v", server.Attributes["error.type"], server.Status)
	}
	call := tr.Span(t, "hello call_tool")
	wait := tr.Span(t, "activation wait hello")
	activate := tr.Span(t, "activate hello")
	if call.ParentSpanID != server.SpanID || wait.ParentSpanID != server.SpanID || activate.ParentSpanID != wait.SpanID {
		t.Errorf("span tree: %s", tr.Summary())
	}
	// The activation's steps: reading the module, then compiling it (or
	// preparing the interpreter, which the host may choose first).
	if src := activate.Attributes["mcphost.activation.source"]; src == "kept compiled code" {
		t.Errorf("the activation took kept code although max_idle_code_mb = 0")
	}
	tr = j.WaitForTrace(t, clientTrace, 5, 30*time.Second)
	read := tr.Span(t, "read module hello")
	compiled := tr.Named("compile hello")
	if len(compiled) == 0 {
		compiled = []testutil.Span{tr.Span(t, "prepare interpreter hello")}
	}
	if read.ParentSpanID != activate.SpanID || len(compiled) != 1 || compiled[0].ParentSpanID != activate.SpanID {
		t.Errorf("activation steps are not children of %q: %s", activate.SpanID, tr.Summary())
	}

	// A tool error: error.type tool_error.
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}}); err != nil || !res.IsError {
		t.Fatalf("fail: %v %+v", err, res)
	}
	failed := waitForSpan(t, j, service, "tools/call fail")
	if failed.Attributes["error.type"] != "tool_error" || failed.Status.Code != "ERROR" {
		t.Errorf("tools/call fail: error.type %v, status %+v; want tool_error, ERROR", failed.Attributes["error.type"], failed.Status)
	}

	// An http_request: the API sees a traceparent of the same trace, whose
	// parent is the host's CLIENT span.
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"text": api.URL + "/ping"}}); err != nil || res.IsError {
		t.Fatalf("fetch: %v %+v", err, res)
	}
	fetch := waitForSpan(t, j, service, "tools/call fetch")
	ftr := j.WaitForTrace(t, fetch.TraceID, 3, 30*time.Second)
	out := ftr.Span(t, "HTTP GET")
	mu.Lock()
	tp := gotTraceparent
	mu.Unlock()
	if want := "00-" + fetch.TraceID + "-" + out.SpanID + "-01"; tp != want {
		t.Errorf("the API got traceparent %q, want %q (the host's HTTP GET span)", tp, want)
	}
	if out.Kind != "client" || out.Attributes["http.response.status_code"] != int64(200) || out.Attributes["server.address"] != "127.0.0.1" {
		t.Errorf("HTTP GET span: kind %q, attributes %v", out.Kind, out.Attributes)
	}
	if fcall := ftr.Span(t, "faulty call_tool"); out.ParentSpanID != fcall.SpanID {
		t.Errorf("span tree of the fetch: %s", ftr.Summary())
	}
	if !strings.Contains(logs.String(), "trace_id="+fetch.TraceID) {
		t.Errorf("no log line about the fetch carries trace_id=%s:\n%s", fetch.TraceID, logs)
	}
}

// waitForSpan waits until Jaeger has a span of service named name.
func waitForSpan(t *testing.T, j *testutil.Jaeger, service, name string) testutil.Span {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, tr := range j.Traces(t, service) {
			if spans := tr.Named(name); len(spans) > 0 {
				return spans[0]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger has no span %q of %s after 30s", name, service)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestTraceContextFromTheHTTPHeaderAndTheEnvironment: switched on by the
// OTEL_* variables alone, a stateless request without _meta.traceparent
// takes its parent from the HTTP traceparent header; a client over stdio
// (ServeStdio, on pipes) gets its parent from _meta only, its span
// jsonrpc.request.id as over HTTP, and network.transport pipe.
func TestTraceContextFromTheHTTPHeaderAndTheEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Jaeger; skipped in -short mode")
	}
	j := testutil.StartJaeger(t)
	env := map[string]string{}
	for _, kv := range j.Env(testutil.OTLPHTTP, "mcphost-env-test") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, `
[server]
watch = false
stateless = true
[[plugin]]
name = "hello"
path = "`+testutil.GoPlugin(t, "plugins/hello")+`"
`))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs}),
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	endpoint, _ := serveHTTPFor(t, h, time.Second)

	const headerTrace, headerSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	req, _ := http.NewRequestWithContext(t.Context(), "POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo",
		"traceparent": "00-" + headerTrace + "-" + headerSpan + "-01", "Mcphost-Jsonrpc-Id": "forged", "Mcphost-Stdio": "1"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tr := j.WaitForTrace(t, headerTrace, 2, 30*time.Second)
	s := tr.Span(t, "tools/call echo")
	if s.ParentSpanID != headerSpan || s.Attributes["jsonrpc.request.id"] != "req-7" || s.Attributes["mcp.protocol.version"] != "2026-07-28" ||
		s.Attributes["network.transport"] != "tcp" {
		t.Errorf("tools/call echo over HTTP: parent %q, jsonrpc.request.id %v, version %v, network.transport %v; want %s, req-7, 2026-07-28, tcp (not the forged headers)",
			s.ParentSpanID, s.Attributes["jsonrpc.request.id"], s.Attributes["mcp.protocol.version"], s.Attributes["network.transport"], headerSpan)
	}

	const metaTrace, metaSpan = "11111111111111111111111111111111", "2222222222222222"
	stdio, serverW, clientW, served := serveStdioPipes(t.Context(), h, time.Second)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio", Version: "1"}, nil).Connect(t.Context(), stdio, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		clientW.Close()
		serverW.Close()
		<-served
	})
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "pipe"},
		Meta: mcp.Meta{"traceparent": "00-" + metaTrace + "-" + metaSpan + "-01"}}); err != nil {
		t.Fatal(err)
	}
	s = j.WaitForTrace(t, metaTrace, 2, 30*time.Second).Span(t, "tools/call greet")
	// go-sdk's client numbers its calls: initialize is 1, this call 2.
	if s.ParentSpanID != metaSpan || s.Attributes["network.transport"] != "pipe" || s.Attributes["jsonrpc.request.id"] != "2" {
		t.Errorf("tools/call greet over stdio: parent %q, network.transport %v, jsonrpc.request.id %v; want %s, pipe, 2",
			s.ParentSpanID, s.Attributes["network.transport"], s.Attributes["jsonrpc.request.id"], metaSpan)
	}

	// The metrics of the conventions, through the same backend's
	// Prometheus view of what it received over OTLP.
	j.WaitForMetric(t, "mcp_server_operation_duration_seconds_count", 30*time.Second, `mcp_method_name="tools/call"`, `gen_ai_tool_name="greet"`, `network_transport="pipe"`)
	cs.Close()
	j.WaitForMetric(t, "mcp_server_session_duration_seconds_count", 30*time.Second, `network_transport="pipe"`)
}

// TestTracedRoundsResourcesPromptsCompletions: a tool asking for input twice, called
// by a 2025-11-25 client: under the request's span, the first call of the
// plugin, then for each answer an elicitation/create the host sends the
// client (a CLIENT span) and a "round N" span (2, 3) with the next call of
// the plugin under it. Then a resource read, a prompt and a completion:
// each a SERVER span with its target and the plugin's call under it.
func TestTracedRoundsResourcesPromptsCompletions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Jaeger; skipped in -short mode")
	}
	j := testutil.StartJaeger(t)
	const service = "mcphost-rounds-test"
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[server.telemetry]
traces_exporter = "otlp"
endpoint = %q
protocol = %q
service_name = %q
sampler = "always_on"
[[plugin]]
name = "everything"
path = %q
`, j.Endpoint(testutil.OTLPHTTP), testutil.OTLPHTTP, service, testutil.GoPlugin(t, "plugins/everything")))
	e := multiRoundAnswers()
	cs := connect(t, h, olderClientOptions(e), "2025-11-25")
	const clientTrace = "5bf92f3577b34da6a3ce929d0e0e4737"
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_input_required_result_multi_round", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-00f067aa0ba902b7-01"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	// The request, 3 Wasm calls, 2 elicitations, rounds 2 and 3.
	tr := j.WaitForTrace(t, clientTrace, 8, 30*time.Second)
	server := tr.Span(t, "tools/call test_input_required_result_multi_round")
	asks := tr.Named("elicitation/create")
	if len(asks) != 2 || len(tr.Named("everything call_tool")) != 3 {
		t.Fatalf("%d elicitation/create and %d call_tool spans, want 2 and 3: %s", len(asks), len(tr.Named("everything call_tool")), tr.Summary())
	}
	for _, a := range asks {
		if a.Kind != "client" || a.ParentSpanID != server.SpanID || a.Attributes["mcp.method.name"] != "elicitation/create" {
			t.Errorf("elicitation/create: kind %s, parent %s, mcp.method.name %v; want client, the request's span %s",
				a.Kind, a.ParentSpanID, a.Attributes["mcp.method.name"], server.SpanID)
		}
	}
	for _, name := range []string{"round 2", "round 3"} {
		round := tr.Span(t, name)
		children := tr.Children(round)
		if round.ParentSpanID != server.SpanID || round.Attributes["mcphost.round"] == nil ||
			len(children) != 1 || children[0].Name != "everything call_tool" {
			t.Errorf("%s: parent %s (want %s), mcphost.round %v, children %d (want the plugin's call): %s",
				name, round.ParentSpanID, server.SpanID, round.Attributes["mcphost.round"], len(children), tr.Summary())
		}
	}

	checkServed := func(name, export string, attrs map[string]any, call func(context.Context) error) {
		t.Helper()
		if err := call(t.Context()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := waitForSpan(t, j, service, name)
		for k, want := range attrs {
			if s.Attributes[k] != want {
				t.Errorf("%s: %s = %v, want %v", name, k, s.Attributes[k], want)
			}
		}
		tr := j.WaitForTrace(t, s.TraceID, 2, 30*time.Second)
		if c := tr.Named("everything " + export); len(c) != 1 || c[0].ParentSpanID != s.SpanID || s.Kind != "server" {
			t.Errorf("%s: kind %s, want server with one everything %s under it: %s", name, s.Kind, export, tr.Summary())
		}
	}
	checkServed("resources/read test://static-text", "read_resource", map[string]any{"mcp.resource.uri": "test://static-text"}, func(ctx context.Context) error {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"})
		return err
	})
	checkServed("prompts/get test_simple_prompt", "get_prompt", map[string]any{"gen_ai.prompt.name": "test_simple_prompt"}, func(ctx context.Context) error {
		_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_simple_prompt"})
		return err
	})
	checkServed("completion/complete", "complete", map[string]any{"mcp.method.name": "completion/complete"}, func(ctx context.Context) error {
		_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
			Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "a"}})
		return err
	})
}
