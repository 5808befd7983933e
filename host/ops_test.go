package host_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/audit"
	"github.com/mcphost/mcphost/internal/testutil"
)

// get fetches url and returns the status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

// readAudit returns the audit log's entries.
func readAudit(t *testing.T, path string) []audit.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries []audit.Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e audit.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q is not JSON: %v", sc.Text(), err)
		}
		entries = append(entries, e)
	}
	return entries
}

func TestMetricsAndAuditLogCountEveryOutcome(t *testing.T) {
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	endpoint, _ := httpHost(t, `
[server]
watch = false
[server.metrics]
enabled = true
[server.audit]
file = "`+auditFile+`"
[[plugin]]
name = "hello"
path = "{hello}"
`)
	base := strings.TrimSuffix(endpoint, "/mcp")
	cs := connectHTTP(t, endpoint, "")

	if _, text := callText(t, cs, "echo", map[string]any{"text": "secret-argument"}); text != "secret-argument" {
		t.Fatalf("echo = %q", text)
	}
	if res, _ := callText(t, cs, "fail", map[string]any{}); !res.IsError {
		t.Fatal("fail: want an isError result")
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Fatal("unknown tool: want an error")
	}

	status, body := get(t, base+"/metrics")
	if status != http.StatusOK {
		t.Fatalf("/metrics: status %d", status)
	}
	for _, want := range []string{
		`mcphost_calls_total{method="tools/call",name="echo",outcome="ok",plugin="hello",profile=""} 1`,
		`mcphost_calls_total{method="tools/call",name="fail",outcome="tool_error",plugin="hello",profile=""} 1`,
		`mcphost_calls_total{method="tools/call",name="nope",outcome="error",plugin="",profile=""} 1`,
		`mcphost_call_duration_seconds_count{method="tools/call",name="echo",plugin="hello",profile=""} 1`,
		`mcphost_sessions_open 1`,
		`mcphost_sessions_started_total 1`,
		`mcphost_plugins_loaded 1`,
		`mcphost_plugin_instances{plugin="hello",state="in_use"} 0`,
		`mcphost_plugin_instances_max{plugin="hello"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}

	entries := readAudit(t, auditFile)
	if len(entries) != 3 {
		t.Fatalf("audit log has %d entries, want 3: %+v", len(entries), entries)
	}
	want := []struct{ name, outcome, plugin string }{{"echo", "ok", "hello"}, {"fail", "tool_error", "hello"}, {"nope", "error", ""}}
	for i, w := range want {
		e := entries[i]
		if e.Name != w.name || e.Outcome != w.outcome || e.Plugin != w.plugin || e.Method != "tools/call" {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
		if e.Session == "" || e.Client != "http-test" || e.Time.IsZero() || e.DurationMS <= 0 {
			t.Errorf("entry %d lacks who/when/how long: %+v", i, e)
		}
		if e.Arguments != nil {
			t.Errorf("entry %d has arguments, which were not asked for: %s", i, e.Arguments)
		}
	}
	if raw, _ := os.ReadFile(auditFile); strings.Contains(string(raw), "secret-argument") {
		t.Error("the audit log holds an argument value")
	}
}

func TestAuditLogArgumentsOnlyWhenAsked(t *testing.T) {
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	endpoint, _ := httpHost(t, `
[server]
watch = false
[server.audit]
file = "`+auditFile+`"
arguments = true
[[plugin]]
name = "hello"
path = "{hello}"
`)
	cs := connectHTTP(t, endpoint, "")
	callText(t, cs, "echo", map[string]any{"text": "hi"})
	entries := readAudit(t, auditFile)
	if len(entries) != 1 || string(entries[0].Arguments) != `{"text":"hi"}` {
		t.Fatalf("entries = %+v, want one with arguments {\"text\":\"hi\"}", entries)
	}
	// Metrics were not enabled: no /metrics.
	if status, _ := get(t, strings.TrimSuffix(endpoint, "/mcp")+"/metrics"); status != http.StatusNotFound {
		t.Errorf("/metrics without [server.metrics] enabled: status %d, want 404", status)
	}
}

func TestReadyzTurnsUnreadyWhileDraining(t *testing.T) {
	endpoint, stop := httpHost(t, `
[server]
watch = false
drain_delay = "1s"
[[plugin]]
name = "hello"
path = "{hello}"
`)
	base := strings.TrimSuffix(endpoint, "/mcp")
	if status, body := get(t, base+"/healthz"); status != http.StatusOK {
		t.Fatalf("/healthz: %d %s", status, body)
	}
	if status, body := get(t, base+"/readyz"); status != http.StatusOK || !strings.Contains(body, "1 plugins") {
		t.Fatalf("/readyz: %d %q", status, body)
	}
	cs := connectHTTP(t, endpoint, "")
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()

	// While draining, /readyz says so and calls are still served.
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _ := get(t, base+"/readyz")
		if status == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d after shutdown began", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, text := callText(t, cs, "echo", map[string]any{"text": "still here"}); text != "still here" {
		t.Fatalf("call while draining = %q", text)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func TestMetricsCountReloads(t *testing.T) {
	h, _ := newHost(t, `
[server]
watch = false
[server.metrics]
enabled = true
[[plugin]]
name = "hello"
path = "`+testutil.GoPlugin(t, "plugins/hello")+`"
`)
	if err := h.Reload(t.Context()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	rec := httptest.NewRecorder()
	h.OpsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`mcphost_reloads_total{result="ok"} 1`,
		`mcphost_plugin_instances{plugin="hello",state="idle"}`,
		`mcphost_sessions_open 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
