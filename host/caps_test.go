package host_test

import (
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
