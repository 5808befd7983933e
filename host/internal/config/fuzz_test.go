package config

import (
	"strings"
	"testing"
)

// FuzzParse: no input makes Parse panic, and whatever it accepts is
// consistent. Seeds: testdata/fuzz/FuzzParse and the cases below.
func FuzzParse(f *testing.F) {
	f.Add("[server]\nname = \"x\"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\ntimeout = \"1s\"\n")
	f.Add("[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nallowed_hosts = [\"*.example.com\"]\nenv = [\"HOME\"]\n")
	f.Add("[server]\ntransport = \"http\"\nlisten = \"127.0.0.1:0\"\nstateless = true\nlist_ttl = \"5s\"\n")
	f.Add("[[plugin]]\nname = 1\n")
	f.Add("[[[")
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := Parse("fuzz.toml", []byte(text))
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.toml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, p := range cfg.Plugins {
			if p.Name == "" || p.Path == "" || p.Timeout <= 0 || seen[p.Name] {
				t.Errorf("accepted an inconsistent plugin: %+v", p)
			}
			seen[p.Name] = true
		}
	})
}
