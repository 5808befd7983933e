package host_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

const keptConfig = `
[server]
max_idle_code_mb = 1024

[server.metrics]
enabled = true

[[plugin]]
name = "faulty"
path = "{faulty}"
prefix = "f_"
idle_timeout = "0"
`

const keptHello = `
[[plugin]]
name = "hello"
path = "{hello}"
timeout = "30s"
max_instances = 1
idle_timeout = "10ms"
`

// TestReleasedPluginKeepsItsCodeUntilReload: through a go-sdk client, a
// plugin released after its idle timeout keeps its compiled module
// (mcphost_code_kept_modules), and its next call loads no code; a reload
// that removes it frees what it kept.
func TestReleasedPluginKeepsItsCodeUntilReload(t *testing.T) {
	paths := strings.NewReplacer("{hello}", testutil.GoPlugin(t, "plugins/hello"), "{faulty}", testutil.GoPlugin(t, "testdata/plugins/faulty"))
	path := testutil.WriteConfig(t, paths.Replace(keptConfig+keptHello))
	h, _ := newHostFromFile(t, path)
	cs, _ := connectRecording(t, h, nil, "")
	waitMetric := func(name string, want float64) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); metric(t, h, name) != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) { // a hang guard only
				t.Fatalf("%s = %v, want %v", name, metric(t, h, name), want)
			}
		}
	}
	if _, text := callText(t, cs, "echo", map[string]any{"text": "one"}); text != "one" {
		t.Fatalf("echo = %q", text)
	}
	waitMetric("mcphost_code_kept_modules", 1) // released after 10ms, code kept
	loads := metric(t, h, "mcphost_code_loads_total")
	activations := metric(t, h, `mcphost_plugin_activations_total{plugin="hello"}`)
	if v := metric(t, h, "mcphost_code_kept_bytes"); v < 1<<20 {
		t.Errorf("mcphost_code_kept_bytes = %v for a kept Go module", v)
	}
	if v := metric(t, h, "mcphost_code_kept_limit_bytes"); v != 1024<<20 {
		t.Errorf("mcphost_code_kept_limit_bytes = %v, want max_idle_code_mb in bytes", v)
	}
	if _, text := callText(t, cs, "echo", map[string]any{"text": "two"}); text != "two" {
		t.Fatalf("echo after the release = %q", text)
	}
	if v := metric(t, h, "mcphost_code_loads_total"); v != loads {
		t.Errorf("mcphost_code_loads_total = %v after a call to a plugin that kept its code, want still %v", v, loads)
	}
	if v := metric(t, h, `mcphost_plugin_activations_total{plugin="hello"}`); v != activations+1 {
		t.Errorf("activations = %v, want %v", v, activations+1)
	}
	waitMetric("mcphost_code_kept_modules", 1)

	if err := os.WriteFile(path, []byte(paths.Replace(keptConfig)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.WaitRetired()
	if v := metric(t, h, "mcphost_code_kept_modules"); v != 0 {
		t.Errorf("mcphost_code_kept_modules = %v after the plugin was removed, want 0", v)
	}
	if v := metric(t, h, "mcphost_code_kept_bytes"); v != 0 {
		t.Errorf("mcphost_code_kept_bytes = %v after the plugin was removed, want 0", v)
	}
	if v := metric(t, h, "mcphost_code_modules"); v != 1 {
		t.Errorf("mcphost_code_modules = %v, want faulty's only", v)
	}
}
