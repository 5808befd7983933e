package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// started is a host with a go-sdk client connected to it in memory.
type started struct {
	host    *host.Host
	session *mcp.ClientSession
	log     *syncBuffer
}

// start loads cfgText (with {hello} and {faulty} replaced by the paths of
// freshly built plugins), and connects a go-sdk client to the host.
func start(t testing.TB, cfgText string) *started {
	t.Helper()
	ctx := t.Context()
	cfgText = strings.NewReplacer(
		"{hello}", testutil.GoPlugin(t, "plugins/hello"),
		"{faulty}", testutil.GoPlugin(t, "testdata/plugins/faulty"),
	).Replace(cfgText)
	h, logs := newHost(t, cfgText)
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := h.Server().Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return &started{host: h, session: cs, log: logs}
}

// newHost starts a host for cfgText (a config file's text) with its log at
// debug level in a buffer. When the test ends the host is closed, and the
// log is printed if the test failed.
func newHost(t testing.TB, cfgText string) (*host.Host, *syncBuffer) {
	t.Helper()
	return newHostFromFile(t, testutil.WriteConfig(t, cfgText))
}

// newHostFromFile is newHost for the config file at path (which a test may
// rewrite before a reload).
func newHostFromFile(t testing.TB, path string) (*host.Host, *syncBuffer) {
	t.Helper()
	cfg, err := host.LoadConfig(path)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("host.Close: %v", err)
		}
		if t.Failed() {
			t.Logf("host log:\n%s", logs.String())
		}
	})
	return h, logs
}

const helloConfig = `
[[plugin]]
name = "hello"
path = "{hello}"
timeout = "5s"
config = { greeting = "Howdy" }
`

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return res, strings.Join(texts, "\n")
}

func rpcCode(t *testing.T, err error) int64 {
	t.Helper()
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	return rpcErr.Code
}

func TestListAndCallEcho(t *testing.T) {
	s := start(t, helloConfig)
	tools, err := s.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"echo", "add", "fail", "greet"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("tools/list = %v, missing %q", names, want)
		}
	}
	res, text := callText(t, s.session, "echo", map[string]any{"text": "hello, wasm"})
	if res.IsError || text != "hello, wasm" {
		t.Errorf("echo = %q (isError %v), want %q", text, res.IsError, "hello, wasm")
	}
}

func TestStructuredOutput(t *testing.T) {
	s := start(t, helloConfig)
	res, _ := callText(t, s.session, "add", map[string]any{"a": 2, "b": 40.5})
	if res.IsError {
		t.Fatalf("add failed: %+v", res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got struct{ Sum float64 }
	if err := json.Unmarshal(b, &got); err != nil || got.Sum != 42.5 {
		t.Errorf("structuredContent = %s, want sum 42.5", b)
	}
}

func TestPluginConfigReachesPlugin(t *testing.T) {
	s := start(t, helloConfig)
	_, text := callText(t, s.session, "greet", map[string]any{"name": "Ada"})
	if text != "Howdy, Ada!" {
		t.Errorf("greet = %q, want %q", text, "Howdy, Ada!")
	}
}

func TestUnknownToolIsRPCError(t *testing.T) {
	s := start(t, helloConfig)
	_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("calling an unknown tool succeeded")
	}
	if code := rpcCode(t, err); code != jsonrpc.CodeInvalidParams {
		t.Errorf("code = %d, want %d", code, jsonrpc.CodeInvalidParams)
	}
}

func TestInvalidArgumentsAreRefusedBeforeThePlugin(t *testing.T) {
	s := start(t, helloConfig)
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{"text": 5}, "text"},                                   // wrong type
		{map[string]any{}, "missing required arguments"},                      // missing required
		{map[string]any{"text": "x", "extra": 1}, "extra"},                    // additionalProperties false
		{json.RawMessage(`["not", "an", "object"]`), "must be a JSON object"}, // not an object
	} {
		// A tool result with isError (MCP 2025-11-25, SEP-1303), naming
		// the problem: the model can correct its call. The plugin is not
		// called: hello's echo would have answered.
		res, text := callText(t, s.session, "echo", tc.args)
		if !res.IsError || !strings.Contains(text, "invalid arguments") && !strings.Contains(text, tc.want) {
			t.Errorf("echo(%v) = %q isError=%v, want an isError result about %q", tc.args, text, res.IsError, tc.want)
		}
		if !strings.Contains(text, tc.want) || !strings.Contains(text, `tool "echo"`) {
			t.Errorf("echo(%v): message %q does not name the tool and %q", tc.args, text, tc.want)
		}
	}
}

func TestToolFailureIsErrorResult(t *testing.T) {
	s := start(t, helloConfig)
	res, text := callText(t, s.session, "fail", map[string]any{})
	if !res.IsError || text == "" {
		t.Errorf("fail = %q isError=%v, want an isError result with a message", text, res.IsError)
	}
}

// faultyConfig serves the faulty plugin. Its timeout is long enough for a
// tool that ends to end even on a loaded machine under -race; a test of
// runaway calls shortens it with withTimeout.
const faultyConfig = `
[[plugin]]
name = "faulty"
path = "{faulty}"
timeout = "10s"
memory_mb = 48
max_instances = 2
`

// withTimeout returns faultyConfig with the plugin's timeout set to d.
func withTimeout(d string) string {
	return strings.Replace(faultyConfig, `timeout = "10s"`, `timeout = "`+d+`"`, 1)
}

// afterFault checks that the plugin still serves normal calls.
func afterFault(t *testing.T, s *started) {
	t.Helper()
	for i := range 3 {
		res, text := callText(t, s.session, "echo", map[string]any{"text": fmt.Sprint("still alive ", i)})
		if res.IsError || text != fmt.Sprint("still alive ", i) {
			t.Fatalf("echo after a fault = %q (isError %v)", text, res.IsError)
		}
	}
}

func TestTrapFailsOnlyThatCall(t *testing.T) {
	s := start(t, faultyConfig)
	_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "trap", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("trap succeeded")
	}
	if code := rpcCode(t, err); code != jsonrpc.CodeInternalError {
		t.Errorf("code = %d, want %d", code, jsonrpc.CodeInternalError)
	}
	if !strings.Contains(err.Error(), `plugin "faulty"`) {
		t.Errorf("error %q does not name the plugin", err)
	}
	afterFault(t, s)
}

func TestRunawayPluginIsInterrupted(t *testing.T) {
	s := start(t, withTimeout("300ms"))
	begin := time.Now()
	_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "spin", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("spin succeeded")
	}
	if !strings.Contains(err.Error(), "timeout") {
		t.Errorf("error %q does not say it timed out", err)
	}
	t.Logf("spin interrupted after %v (timeout 300ms)", time.Since(begin))
	afterFault(t, s)
}

func TestRunawayAllocationIsStoppedByTheMemoryCap(t *testing.T) {
	// A generous timeout, so that it is the memory cap that stops the plugin.
	s := start(t, withTimeout("30s"))
	_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "alloc", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("alloc succeeded")
	}
	if strings.Contains(err.Error(), "timeout") {
		t.Fatalf("alloc was stopped by the timeout, not the memory cap: %v", err)
	}
	t.Logf("alloc: %v", err)
	afterFault(t, s)
}

func TestGarbageOutputIsAnError(t *testing.T) {
	s := start(t, faultyConfig)
	_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "garbage", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("garbage succeeded")
	}
	if !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("error %q does not say the output was not JSON", err)
	}
	afterFault(t, s)
}

func TestPluginStdoutGoesToTheLog(t *testing.T) {
	s := start(t, faultyConfig)
	_, text := callText(t, s.session, "stdout", map[string]any{})
	if text != "wrote" {
		t.Errorf("stdout tool = %q, want %q", text, "wrote")
	}
	log := s.log.String()
	if !strings.Contains(log, "stream=stdout") || !strings.Contains(log, "stream=stderr") {
		t.Errorf("plugin stdout/stderr not in the host log:\n%s", log)
	}
}

func TestConcurrentCallsAcrossFaults(t *testing.T) {
	s := start(t, faultyConfig)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Go(func() {
			name := "echo"
			if i%5 == 0 {
				name = "trap"
			}
			res, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
			if name == "echo" && (err != nil || res.IsError) {
				errs <- fmt.Errorf("echo #%d: %v", i, err)
			}
			if name == "trap" && err == nil {
				errs <- fmt.Errorf("trap #%d succeeded", i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// badABIModule is a hand-assembled Wasm module that exports
// mcphost_abi_version returning 2 and a list_tools.
var badABIModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type: () -> i32
	0x03, 0x03, 0x02, 0x00, 0x00, // two functions of that type
	0x07, 0x24, 0x02, // exports
	0x13, 'm', 'c', 'p', 'h', 'o', 's', 't', '_', 'a', 'b', 'i', '_', 'v', 'e', 'r', 's', 'i', 'o', 'n', 0x00, 0x00,
	0x0a, 'l', 'i', 's', 't', '_', 't', 'o', 'o', 'l', 's', 0x00, 0x01,
	0x0a, 0x0b, 0x02, // code
	0x04, 0x00, 0x41, 0x02, 0x0b, // i32.const 2
	0x04, 0x00, 0x41, 0x00, 0x0b, // i32.const 0
}

func TestUnknownABIVersionIsRefused(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "future.wasm")
	if err := os.WriteFile(wasm, badABIModule, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, fmt.Sprintf("[[plugin]]\nname = \"future\"\npath = %q\n", wasm)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = host.New(t.Context(), cfg, host.Options{})
	if err == nil || !strings.Contains(err.Error(), "declares ABI version 2") || !strings.Contains(err.Error(), `"future"`) {
		t.Fatalf("New = %v, want a refusal naming the plugin and ABI version 2", err)
	}
}
