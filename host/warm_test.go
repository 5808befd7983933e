package host_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestMinInstancesAreMadeAtLoad: the instances min_instances keeps warm
// exist once the host is ready, before any call.
func TestMinInstancesAreMadeAtLoad(t *testing.T) {
	cfg := strings.Replace(fmt.Sprintf(lazyConfig, "1h"), "max_instances = 1", "max_instances = 3\nmin_instances = 2", 1)
	s := start(t, cfg)
	if v := metric(t, s.host, `mcphost_plugin_instances{plugin="hello",state="idle"}`); v != 2 {
		t.Errorf("%v idle instances after start with min_instances = 2, want 2", v)
	}
	if v := metric(t, s.host, `mcphost_plugin_active{plugin="hello"}`); v != 1 {
		t.Errorf("mcphost_plugin_active = %v with min_instances, want 1", v)
	}
}

// TestIdleTimeoutZeroKeepsThePluginWarm: idle_timeout = "0" never releases
// the plugin, not even once its lists are read at start.
func TestIdleTimeoutZeroKeepsThePluginWarm(t *testing.T) {
	s := start(t, fmt.Sprintf(lazyConfig, "0"))
	if v := metric(t, s.host, `mcphost_plugin_active{plugin="hello"}`); v != 1 {
		t.Fatalf("mcphost_plugin_active = %v after start with idle_timeout = \"0\", want 1 (never released)", v)
	}
	if v := metric(t, s.host, `mcphost_plugin_releases_total{plugin="hello"}`); v != 0 {
		t.Errorf("released %v times with idle_timeout = \"0\", want never", v)
	}
	if _, text := callText(t, s.session, "echo", map[string]any{"text": "warm"}); text != "warm" {
		t.Errorf("echo = %q", text)
	}
	if v := metric(t, s.host, `mcphost_plugin_activations_total{plugin="hello"}`); v != 1 {
		t.Errorf("%v activations, want 1 (the load's)", v)
	}
}
