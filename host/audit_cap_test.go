package host_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/internal/audit"
	"github.com/mcphost/mcphost/internal/testutil"
)

// TestAuditedToolErrorIsCapped: a tool's error text, which the plugin
// chooses and which may be as long as its output cap, is cut in the audit
// log at audit.MaxErrorBytes, saying it was cut and how long it was; the
// client still gets the whole result.
func TestAuditedToolErrorIsCapped(t *testing.T) {
	const textLen = 20_000
	result := fmt.Sprintf(`{"isError":true,"content":[{"type":"text","text":"%s"}]}`, strings.Repeat("e", textLen))
	path := testutil.WATPlugin{
		Tools:    `{"tools":[{"name":"fail","inputSchema":{"type":"object"}}]}`,
		CallTool: fmt.Sprintf(`(call $out (i32.const 65536) (i32.const %d)) (i32.const 0)`, len(result)),
		Fields:   fmt.Sprintf(`(data (i32.const 65536) %q)`, result),
	}.Build(t)
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	s := start(t, fmt.Sprintf(`
[server]
watch = false
[server.audit]
file = %q
[[plugin]]
name = "loud"
path = %q
`, auditFile, path))
	res, text := callText(t, s.session, "fail", map[string]any{})
	if !res.IsError || len(text) != textLen {
		t.Fatalf("the client got isError=%v and %d bytes, want the whole %d", res.IsError, len(text), textLen)
	}
	entries := readAudit(t, auditFile)
	if len(entries) != 1 || entries[0].Outcome != "tool_error" {
		t.Fatalf("audit entries: %+v", entries)
	}
	e := entries[0].Error
	if len(e) > audit.MaxErrorBytes || !strings.Contains(e, "truncated") || !strings.Contains(e, fmt.Sprint(textLen)) {
		t.Fatalf("audited error of %d bytes (cap %d), want it cut with a note of its %d bytes: %.200q…", len(e), audit.MaxErrorBytes, textLen, e)
	}
}
