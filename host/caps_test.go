package host_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

// capsConfig serves the faulty plugin (with extra settings) beside the
// hello plugin, whose tools are prefixed "hello_": the tool of another
// plugin that must keep answering after faulty misbehaves.
func capsConfig(settings string) string {
	return `
[[plugin]]
name = "faulty"
path = "{faulty}"
timeout = "30s"
max_instances = 2
` + settings + `

[[plugin]]
name = "hello"
path = "{hello}"
timeout = "5s"
prefix = "hello_"
`
}

// otherPluginAnswers checks that the hello plugin still answers.
func otherPluginAnswers(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	res, text := callText(t, cs, "hello_echo", map[string]any{"text": "other plugin"})
	if res.IsError || text != "other plugin" {
		t.Fatalf("hello_echo after the fault = %q (isError %v)", text, res.IsError)
	}
}

// TestErrorTextIsCappedLikeOutput: an error a plugin sets with Extism's
// error_set is output like any, capped at max_output_kb: 16 MiB of it is
// refused with an error naming the cap, not sent to the client; one under
// the cap reaches the client cut short. Both over a stateful session and
// over stateless HTTP.
func TestErrorTextIsCappedLikeOutput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		connect func(t *testing.T) *mcp.ClientSession
	}{
		{"stateful", func(t *testing.T) *mcp.ClientSession { return start(t, capsConfig("")).session }},
		{"stateless", func(t *testing.T) *mcp.ClientSession {
			endpoint, _ := httpHost(t, "[server]\nstateless = true\n"+capsConfig(""))
			return connectHTTP(t, endpoint, "2026-07-28")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := tc.connect(t)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "error_flood", Arguments: map[string]any{}})
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "max_output_kb") || !strings.Contains(err.Error(), "error text of 16777216 bytes") {
				t.Fatalf("16 MiB error text: %.200v, want it refused naming max_output_kb", err)
			}
			if len(err.Error()) > 1024 {
				t.Errorf("the client got an error of %d bytes", len(err.Error()))
			}
			t.Logf("16 MiB error_set: client got %q; the host allocated %d MiB for the call", err, (after.TotalAlloc-before.TotalAlloc)>>20)

			// Under the cap (4 MiB by default): the client gets it cut short.
			for _, asJSON := range []bool{false, true} {
				_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "error_flood", Arguments: map[string]any{"bytes": 1 << 20, "json": asJSON}})
				if err == nil || len(err.Error()) > 9<<10 || !strings.Contains(err.Error(), "truncated; 1048") {
					t.Errorf("1 MiB error text (json %v): %d bytes reached the client, want it cut under 9 KiB: %.200v", asJSON, len(err.Error()), err)
				}
				if asJSON && rpcCode(t, err) != jsonrpc.CodeInvalidParams {
					t.Errorf("1 MiB JSON error: code %d, want the plugin's %d", rpcCode(t, err), jsonrpc.CodeInvalidParams)
				}
			}

			res, text := callText(t, cs, "echo", map[string]any{"text": "after"})
			if res.IsError || text != "after" {
				t.Errorf("echo after error floods = %q (isError %v)", text, res.IsError)
			}
			otherPluginAnswers(t, cs)
		})
	}
}

// TestLogFloodKeepsTheLogBounded: 100,000 calls of Extism's log_info reach
// the host log as a bounded number of lines (the plugin's budget of 50 a
// second, bursts of 100, as for its stdout), the drop is logged, a 1 MiB
// message is cut, and a message cannot pass for a line of the host's own.
func TestLogFloodKeepsTheLogBounded(t *testing.T) {
	s := start(t, capsConfig(""))
	begin := time.Now()
	if _, text := callText(t, s.session, "log_flood", map[string]any{}); text != "flooded log" {
		t.Fatalf("log_flood = %q", text)
	}
	elapsed := time.Since(begin)
	log := s.log.String()
	lines := strings.Count(log, "log flood line ")
	if lines == 0 || lines > 100+int(50*elapsed.Seconds())+10 {
		t.Errorf("%d of 100,000 flood lines reached the host log in %v, want a bounded number", lines, elapsed)
	}
	if !strings.Contains(log, "dropping lines: stream=log") {
		t.Error("the drop is not logged")
	}
	longest := 0
	for line := range strings.Lines(log) {
		longest = max(longest, len(line))
	}
	if longest > 4<<10 {
		t.Errorf("longest log line: %d bytes, want plugin text cut at 2 KiB", longest)
	}
	if regexp.MustCompile(`(?m)^\S*\s*\[ERROR\] host: forged`).MatchString(log) {
		t.Error("a plugin's log message passed for a line of the host's own")
	}
	t.Logf("%d of 100,000 flood lines logged in %v; longest line %d bytes", lines, elapsed, longest)
	afterFault(t, s)
	otherPluginAnswers(t, s.session)
}

// hostFunctionFlood is a WAT plugin whose "attack" tool calls
// notify_logging_message 2,000 times with a 60 KB payload whose level is
// not one (each call a warning naming it, before the fix), then with a
// valid message of 100 KB (over what a notification may carry) and one of
// 1 KB.
var hostFunctionFlood = testutil.WATPlugin{
	Tools:   oneTool,
	Imports: `(import "extism:host/user" "notify_logging_message" (func $notify (param i64)))`,
	Fields: `
  (data (i32.const 65536) "{\"level\":\"")
  (data (i32.const 125636) "{\"level\":\"error\",\"data\":\"")
  ;; fill writes n bytes c at at, then "} after them.
  (func $fill (param $at i32) (param $n i32) (param $c i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $at) (local.get $n)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
      (i32.store8 (local.get $at) (local.get $c))
      (local.set $at (i32.add (local.get $at) (i32.const 1)))
      (br $next)))
    (i32.store8 (local.get $end) (i32.const 34))
    (i32.store8 (i32.add (local.get $end) (i32.const 1)) (i32.const 125)))`,
	CallTool: `(local $bad i64) (local $i i32)
    (drop (memory.grow (i32.const 2)))
    (call $fill (i32.const 65546) (i32.const 60000) (i32.const 120))
    (local.set $bad (call $block (i32.const 65536) (i32.const 60012)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (i32.const 2000)))
      (call $notify (local.get $bad))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (call $fill (i32.const 125661) (i32.const 100000) (i32.const 121))
    (call $notify (call $block (i32.const 125636) (i32.const 100027)))
    (call $fill (i32.const 125661) (i32.const 1000) (i32.const 122))
    (call $notify (call $block (i32.const 125636) (i32.const 1027)))
    (call $out (global.get $EMPTY) (i32.const 14))
    (i32.const 0)`,
}

// TestHostFunctionFloodKeepsTheLogBounded: what a plugin's calls of host
// functions put in the host log is held to a budget of lines and cut
// short, and a notification larger than 64 KiB does not reach the client.
func TestHostFunctionFloodKeepsTheLogBounded(t *testing.T) {
	// The timeout is a hang guard: the flood takes ~7 s under -race on an
	// idle machine, and passed 30 s at load 8.
	cfg := strings.NewReplacer(`timeout = "500ms"`, `timeout = "2m"`, "{hello}", testutil.GoPlugin(t, "plugins/hello")).
		Replace(hostileConfig(t, hostFunctionFlood, ""))
	h, logs := newHost(t, cfg)
	var got, gotBytes atomic.Int64
	small := make(chan struct{}) // closed when the message of 1 KB arrives
	var smallOnce sync.Once
	cs := connect(t, h, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
		got.Add(1)
		b, _ := json.Marshal(r.Params.Data)
		gotBytes.Add(int64(len(b)))
		if len(b) > 1000 && len(b) < 2000 {
			smallOnce.Do(func() { close(small) })
		}
	}}, "2025-11-25")
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if res, _ := callText(t, cs, "attack", map[string]any{}); res.IsError {
		t.Fatalf("attack: %+v", res)
	}
	elapsed := time.Since(begin)
	log := logs.String()
	lines, size := 0, 0
	for line := range strings.Lines(log) {
		if strings.Contains(line, "plugin.hostile") {
			lines++
			size += len(line)
		}
	}
	if limit := 100 + int(hostfn.LogLinesPerSecond*elapsed.Seconds()) + 20; lines > limit || size > limit*(3<<10) {
		t.Errorf("the hostile plugin's 2,001 host-function calls put %d lines (%d bytes) in the log in %v, want at most %d lines of 3 KiB", lines, size, elapsed, limit)
	}
	if !strings.Contains(log, "host function calls log too much; dropping lines") {
		t.Error("the drop is not logged")
	}
	// The plugin sends its 2,000 bad notifications, then the one of 100 KB,
	// then the one of 1 KB, each synchronously on the session; a client
	// handles notifications one at a time in the order they came (only
	// requests run concurrently). So once the 1 KB one has been handled,
	// any earlier one that reached the client has been counted: wait for it
	// rather than for a while.
	select {
	case <-small:
	case <-time.After(time.Minute): // a hang guard only
		t.Fatalf("the log message of 1 KB never reached the client (%d others did)", got.Load())
	}
	if got.Load() != 1 || gotBytes.Load() > 2000 {
		t.Errorf("the client got %d log messages (%d bytes), want only the one of 1 KB, not the one of 100 KB", got.Load(), gotBytes.Load())
	}
	t.Logf("%d log lines (%d bytes) in %v", lines, size, elapsed)
	if res, text := callText(t, cs, "greet", map[string]any{"name": "you"}); res.IsError || !strings.Contains(text, "you") {
		t.Errorf("the other plugin's greet after the flood = %q (isError %v)", text, res.IsError)
	}
}

// withFunctionNames appends a "name" custom section to a module naming its
// functions first to last.
func withFunctionNames(wasm []byte, first, last uint32, name string) []byte {
	var names []byte
	names = binary.AppendUvarint(names, uint64(last-first+1))
	for i := first; i <= last; i++ {
		names = binary.AppendUvarint(names, uint64(i))
		names = binary.AppendUvarint(names, uint64(len(name)))
		names = append(names, name...)
	}
	var body []byte
	body = binary.AppendUvarint(body, uint64(len("name")))
	body = append(body, "name"...)
	body = append(body, 1) // function names
	body = binary.AppendUvarint(body, uint64(len(names)))
	body = append(body, names...)
	wasm = append(slices.Clip(wasm), 0) // a custom section
	wasm = binary.AppendUvarint(wasm, uint64(len(body)))
	return append(wasm, body...)
}

// TestTrapTextIsNotTakenForErrorText: a trap's text can be longer than a
// small max_output_kb (wazero lists up to 30 frames by the names the module
// gives its functions): the call still fails as a trap, not as an
// oversized error, and client and log get it cut short.
func TestTrapTextIsNotTakenForErrorText(t *testing.T) {
	plugin := testutil.WATPlugin{Tools: oneTool, CallTool: "unreachable"}
	// Functions 9 to 14 are the ones WATPlugin defines after Extism's nine
	// imports; call_tool is the last. Name them all, as an instrumented
	// module's indices may shift.
	wasm := withFunctionNames(testutil.WAT(t, plugin.Text()), 9, 15, strings.Repeat("n", 10_000))
	path := filepath.Join(t.TempDir(), "named.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, `
[[plugin]]
name = "named"
path = "`+path+`"
max_output_kb = 1
`)
	_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "attack", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "wasm error: unreachable") || len(err.Error()) > 1024 {
		t.Fatalf("attack: %.300v (%d bytes), want a short trap error", err, len(err.Error()))
	}
	log := s.log.String()
	if !strings.Contains(log, "nnnn…(truncated;") {
		t.Error("the trap text in the log does not hold the module's long function names cut short: this test no longer makes a long trap text")
	}
	if !strings.Contains(log, "kind=trap") {
		t.Errorf("the call was not logged as a trap:\n%.2000s", log)
	}
	for line := range strings.Lines(log) {
		if len(line) > 10<<10 {
			t.Errorf("a log line of %d bytes", len(line))
		}
	}
}
