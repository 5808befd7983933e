package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// WAT assembles WebAssembly text with wabt's wat2wasm and returns the
// module's bytes. `make test` installs wabt (plugins/wat/build.sh); without
// it the test fails as root (as in CI, where it must be there) and is
// skipped otherwise.
func WAT(t testing.TB, text string) []byte {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		if os.Geteuid() == 0 {
			t.Fatal("wat2wasm not installed (Debian package wabt; make test installs it)")
		}
		t.Skip("wat2wasm not installed (Debian package wabt; as root, make test installs it)")
	}
	dir := t.TempDir()
	src, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("wat2wasm", "--enable-all", src, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// WATPlugin describes a minimal mcphost plugin (ABI v1) written in
// WebAssembly text, for tests that need control of every byte a plugin
// holds or returns: hostile plugins above all.
//
// The module it makes imports Extism's kernel functions alloc, length,
// load_u8, load_u64, store_u8, store_u64, output_set, error_set and log_info
// (as $alloc, $length, …), exports one page-aligned memory that begins with
// Tools, and defines
//
//	(func $out (param $ptr i32) (param $len i32))    ;; output = memory[ptr:ptr+len]
//	(func $err (param $ptr i32) (param $len i32))    ;; error  = memory[ptr:ptr+len]
//	(func $block (param $ptr i32) (param $len i32) (result i64)) ;; a kernel block holding those bytes
//	(global $FREE i32)                               ;; first free byte of memory, after Tools
//	(global $TOOLS_LEN i32)
type WATPlugin struct {
	// Tools is list_tools' output, a ListToolsResult as JSON.
	Tools string
	// CallTool is the body of call_tool, which returns an i32 (0: success).
	// Empty: it outputs {"content":[]} and returns 0.
	CallTool string
	// OnList are instructions run at the start of list_tools (empty: none).
	OnList string
	// Fields are more module fields (imports, functions, tables, exports);
	// imports must come first in a module, and are put before the kernel's.
	Imports, Fields string
}

// Text returns the plugin's WebAssembly text.
func (p WATPlugin) Text() string {
	tools := p.Tools
	empty := `{"content":[]}`
	callTool := p.CallTool
	if callTool == "" {
		callTool = fmt.Sprintf("(call $out (global.get $EMPTY) (i32.const %d)) (i32.const 0)", len(empty))
	}
	free := (len(tools) + len(empty) + 7) &^ 7
	pages := free/65536 + 2
	return fmt.Sprintf(`(module
  %s
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "load_u64" (func $load_u64 (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  (memory (export "memory") %d)
  (data (i32.const 0) "%s%s")
  (global $TOOLS_LEN i32 (i32.const %d))
  (global $EMPTY i32 (i32.const %d))
  (global $FREE i32 (i32.const %d))
  (func $block (param $ptr i32) (param $len i32) (result i64)
    (local $b i64) (local $i i32)
    (local.set $b (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (call $store_u8 (i64.add (local.get $b) (i64.extend_i32_u (local.get $i)))
        (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $copy)))
    (local.get $b))
  (func $out (param $ptr i32) (param $len i32)
    (call $output_set (call $block (local.get $ptr) (local.get $len)) (i64.extend_i32_u (local.get $len))))
  (func $err (param $ptr i32) (param $len i32)
    (call $error_set (call $block (local.get $ptr) (local.get $len))))
  (func (export "mcphost_abi_version") (result i32) (i32.const 1))
  (func (export "list_tools") (result i32)
    %s
    (call $out (i32.const 0) (global.get $TOOLS_LEN)) (i32.const 0))
  (func (export "call_tool") (result i32) %s)
  %s
)
`, p.Imports, pages, watString(tools), watString(empty), len(tools), len(tools), free, p.OnList, callTool, p.Fields)
}

// Build assembles the plugin into a .wasm file in a temporary directory and
// returns its path.
func (p WATPlugin) Build(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plugin.wasm")
	if err := os.WriteFile(path, WAT(t, p.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// watString escapes s for a WebAssembly text string literal.
func watString(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, `\%02x`, c)
	}
	return b.String()
}
