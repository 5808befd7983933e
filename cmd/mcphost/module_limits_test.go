package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// localsBomb is a 51-byte module whose one function, exported as
// call_tool, declares 2^32-1 locals: wazero allocates declared locals
// up front, and before issue #25 it ended the process with "fatal error:
// runtime: out of memory" in every command that loaded it.
var localsBomb = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type 0: () -> ()
	0x03, 0x02, 0x01, 0x00, // function 0 of type 0
	0x07, 0x0d, 0x01, 0x09, 'c', 'a', 'l', 'l', '_', 't', 'o', 'o', 'l', 0x00, 0x00, // export
	0x0a, 0x10, 0x01, 0x0e, // code: one body of 14 bytes
	0x02,                               // two groups of locals
	0xff, 0xff, 0xff, 0xff, 0x07, 0x7f, // 2^31-1 i32
	0x80, 0x80, 0x80, 0x80, 0x08, 0x7f, // 2^31 i32
	0x0b,
}

// TestCommandsRefuseAModuleBomb: validate, plugin inspect and plugin test
// each refuse the bomb with a non-zero exit, naming the limit, and live
// to say so.
func TestCommandsRefuseAModuleBomb(t *testing.T) {
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.wasm")
	if err := os.WriteFile(bomb, localsBomb, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(cfg, []byte("[server]\nlock_file = \"off\"\n[[plugin]]\nname = \"bomb\"\npath = \""+bomb+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"validate", "--config", cfg},
		{"plugin", "inspect", bomb},
		{"plugin", "test", bomb},
	} {
		out, stderr, err := runCLI(t, args...)
		if err == nil || exitCode(err) == 0 {
			t.Errorf("%v succeeded:\n%s\n%s", args, out, stderr)
			continue
		}
		all := err.Error() + out + stderr
		if !strings.Contains(all, "locals (parameters included), over the limit of 50000 (function locals)") {
			t.Errorf("%v: %v\n%s\n%s\nwant the function locals limit named", args, err, out, stderr)
		}
	}
}
