package config

import (
	"strings"
	"testing"
)

// TestStateKeys: state_kb defaults to DefaultStateKB and may be 0 (state
// off); [server] max_state_mb defaults to DefaultMaxStateMB; a value out
// of range is refused naming the key, the line and the range.
func TestStateKeys(t *testing.T) {
	const plugin = "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"
	cfg, err := Parse("x.toml", []byte(plugin))
	if err != nil || cfg.Plugins[0].StateKB != DefaultStateKB || cfg.Server.MaxStateMB != DefaultMaxStateMB {
		t.Fatalf("defaults: %v, %+v", err, cfg)
	}
	cfg, err = Parse("x.toml", []byte("[server]\nmax_state_mb = 2\n"+plugin+"state_kb = 0\n"))
	if err != nil || cfg.Plugins[0].StateKB != 0 || cfg.Server.MaxStateMB != 2 {
		t.Fatalf("state_kb = 0, max_state_mb = 2: %v, %+v", err, cfg)
	}
	for _, v := range []string{"-1", "1048577"} {
		_, err := Parse("x.toml", []byte(plugin+"state_kb = "+v+"\n"))
		if err == nil || !strings.Contains(err.Error(), "x.toml:4: plugin \"a\": state_kb: "+v+" is out of range (expected 0 to 1048576; 0 turns the plugin's state off)") {
			t.Errorf("state_kb = %s: %v", v, err)
		}
	}
	for _, v := range []string{"0", "1048577"} {
		_, err := Parse("x.toml", []byte("[server]\nmax_state_mb = "+v+"\n"))
		if err == nil || !strings.Contains(err.Error(), "x.toml:2: [server] max_state_mb: "+v+" is out of range (expected 1 to 1048576") {
			t.Errorf("max_state_mb = %s: %v", v, err)
		}
	}
	if _, err := Parse("x.toml", []byte(plugin+"state_kb = \"big\"\n")); err == nil || !strings.Contains(err.Error(), "want a whole number") {
		t.Errorf("state_kb = \"big\": %v", err)
	}
}
