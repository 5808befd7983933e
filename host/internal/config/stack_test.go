package config

import (
	"strings"
	"testing"
)

// TestStackKB: stack_kb defaults to DefaultStackKB, and a value out of
// range is refused naming the key and the range.
func TestStackKB(t *testing.T) {
	const plugin = "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"
	cfg, err := Parse("x.toml", []byte(plugin))
	if err != nil || cfg.Plugins[0].StackKB != DefaultStackKB {
		t.Fatalf("default stack_kb: %v, %+v", err, cfg)
	}
	cfg, err = Parse("x.toml", []byte(plugin+"stack_kb = 1024\n"))
	if err != nil || cfg.Plugins[0].StackKB != 1024 {
		t.Fatalf("stack_kb = 1024: %v", err)
	}
	for _, v := range []string{"0", "63", "1048577"} {
		_, err := Parse("x.toml", []byte(plugin+"stack_kb = "+v+"\n"))
		if err == nil || !strings.Contains(err.Error(), "stack_kb: "+v+" is out of range (expected 64 to 1048576)") {
			t.Errorf("stack_kb = %s: %v", v, err)
		}
	}
}
