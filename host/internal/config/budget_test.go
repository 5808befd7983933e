package config

import (
	"strings"
	"testing"
)

func TestMaxMemoryMB(t *testing.T) {
	cfg, err := Parse("x.toml", []byte("[server]\nmax_memory_mb = 512\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nmemory_mb = 64\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.MaxMemoryMB != 512 {
		t.Errorf("max_memory_mb = %d, want 512", cfg.Server.MaxMemoryMB)
	}
	cfg, err = Parse("x.toml", []byte("[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"))
	if err != nil || cfg.Server.MaxMemoryMB != 0 {
		t.Errorf("absent max_memory_mb: %v, %d, want no budget (0)", err, cfg.Server.MaxMemoryMB)
	}
	for _, tc := range []struct{ text, want string }{
		{"[server]\nmax_memory_mb = -1\n", "x.toml:2: [server] max_memory_mb: -1 is out of range (expected 0 for no budget, or 2 to 1048576)"},
		{"[server]\nmax_memory_mb = 1\n", "max_memory_mb: 1 is out of range"},
		{"[server]\nmax_memory_mb = 2000000\n", "max_memory_mb: 2000000 is out of range"},
		{"[server]\nmax_memory_mb = 32\n[[plugin]]\nname = \"big\"\npath = \"a.wasm\"\nmemory_mb = 64\n",
			`plugin "big": memory_mb = 64 is more than [server] max_memory_mb = 32: no instance of it could run`},
	} {
		_, err := Parse("x.toml", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to say %q", tc.text, err, tc.want)
		}
	}
}
