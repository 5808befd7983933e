package config

import (
	"strconv"
	"strings"
	"testing"
)

// TestMaxIdleCodeMB: [server] max_idle_code_mb defaults to
// DefaultMaxIdleCodeMB, may be 0 (released plugins keep no compiled
// code), and a value out of range is refused naming the key, the line and
// the range.
func TestMaxIdleCodeMB(t *testing.T) {
	const plugin = "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"
	cfg, err := Parse("x.toml", []byte(plugin))
	if err != nil || cfg.Server.MaxIdleCodeMB != DefaultMaxIdleCodeMB {
		t.Fatalf("default: %v, %+v", err, cfg.Server)
	}
	for _, v := range []int{0, 1, 4096} {
		cfg, err := Parse("x.toml", []byte("[server]\nmax_idle_code_mb = "+strconv.Itoa(v)+"\n"+plugin))
		if err != nil || cfg.Server.MaxIdleCodeMB != v {
			t.Errorf("max_idle_code_mb = %d: %v, %+v", v, err, cfg)
		}
	}
	for _, v := range []string{"-1", "1048577"} {
		_, err := Parse("x.toml", []byte("[server]\nmax_idle_code_mb = "+v+"\n"))
		if err == nil || !strings.Contains(err.Error(), "x.toml:2: [server] max_idle_code_mb: "+v+" is out of range (expected 0 to keep no compiled code for released plugins, up to 1048576)") {
			t.Errorf("max_idle_code_mb = %s: %v", v, err)
		}
	}
	if got := ChangedServerKeys(Server{MaxIdleCodeMB: 1}, Server{MaxIdleCodeMB: 2}); len(got) != 1 || got[0] != "max_idle_code_mb" {
		t.Errorf("ChangedServerKeys = %q, want [max_idle_code_mb]", got)
	}
}
