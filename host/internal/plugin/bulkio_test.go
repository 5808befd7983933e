package plugin

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testutil"
)

// bulkIOPlugin is a WAT plugin whose call_tool does what the first byte of
// its input says with input_read and output_write: honest moves, and every
// range a hostile plugin could pass.
var bulkIOPlugin = testutil.WATPlugin{
	Tools:    `{"tools":[]}`,
	CallTool: `(call $dispatch)`,
	Imports: `
  (import "extism:host/user" "input_read" (func $input_read (param i32 i64 i32)))
  (import "extism:host/user" "output_write" (func $output_write (param i32 i32)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))`,
	Fields: `
  (func $is (param $c i32) (result i32) (i32.eq (i32.load8_u (global.get $FREE)) (local.get $c)))
  (func $dispatch (result i32)
    (local $n i32) (local $end i32)
    (local.set $n (i32.wrap_i64 (call $input_length)))
    (local.set $end (i32.mul (memory.size) (i32.const 65536)))
    (call $input_read (global.get $FREE) (i64.const 0) (i32.const 1)) ;; the mode byte
    ;; e: echo
    (if (call $is (i32.const 0x65)) (then
      (call $input_read (global.get $FREE) (i64.const 0) (local.get $n))
      (call $output_write (global.get $FREE) (local.get $n))))
    ;; P: ranges that end exactly at the end of memory and of the input
    (if (call $is (i32.const 0x50)) (then
      (call $input_read (local.get $end) (i64.extend_i32_u (local.get $n)) (i32.const 0))
      (call $input_read (i32.sub (local.get $end) (i32.const 1)) (i64.extend_i32_u (i32.sub (local.get $n) (i32.const 1))) (i32.const 1))
      (call $output_write (local.get $end) (i32.const 0))
      (call $output_write (i32.sub (local.get $end) (i32.const 1)) (i32.const 1))))
    ;; p: a destination one byte past the end of memory
    (if (call $is (i32.const 0x70)) (then
      (call $input_read (i32.sub (local.get $end) (i32.const 1)) (i64.const 0) (i32.const 2))))
    ;; N: a destination at 0xffffffff (a negative i32)
    (if (call $is (i32.const 0x4e)) (then
      (call $input_read (i32.const -1) (i64.const 0) (i32.const 1))))
    ;; l: a length of 0xffffffff
    (if (call $is (i32.const 0x6c)) (then
      (call $input_read (global.get $FREE) (i64.const 0) (i32.const -1))))
    ;; o: an offset past the input
    (if (call $is (i32.const 0x6f)) (then
      (call $input_read (global.get $FREE) (i64.extend_i32_u (i32.add (local.get $n) (i32.const 1))) (i32.const 0))))
    ;; n: an offset of -1 (2^64-1): offset+length wraps to 0
    (if (call $is (i32.const 0x6e)) (then
      (call $input_read (global.get $FREE) (i64.const -1) (i32.const 1))))
    ;; w: a source past the end of memory
    (if (call $is (i32.const 0x77)) (then
      (call $output_write (i32.sub (local.get $end) (i32.const 4)) (i32.const 8))))
    ;; W: a source at 0xffffffff
    (if (call $is (i32.const 0x57)) (then
      (call $output_write (i32.const -1) (i32.const 2))))
    ;; c: an output over the cap (2048 bytes; the test's cap is 1 KiB)
    (if (call $is (i32.const 0x63)) (then
      (call $output_write (i32.const 0) (i32.const 2048))))
    ;; t: an output, then a trap
    (if (call $is (i32.const 0x74)) (then
      (call $input_read (global.get $FREE) (i64.const 0) (local.get $n))
      (call $output_write (global.get $FREE) (local.get $n))
      (unreachable)))
    ;; r: an output, then an error the plugin reports (the input's text)
    (if (call $is (i32.const 0x72)) (then
      (call $input_read (global.get $FREE) (i64.const 0) (local.get $n))
      (call $output_write (global.get $FREE) (local.get $n))
      (call $err (global.get $FREE) (local.get $n))
      (return (i32.const 1))))
    ;; 2: two outputs, the second wins
    (if (call $is (i32.const 0x32)) (then
      (call $input_read (global.get $FREE) (i64.const 0) (local.get $n))
      (call $output_write (global.get $FREE) (local.get $n))
      (call $output_write (global.get $FREE) (i32.const 1))))
    ;; s: output_set, then output_write, which wins
    (if (call $is (i32.const 0x73)) (then
      (call $input_read (global.get $FREE) (i64.const 0) (local.get $n))
      (call $out (global.get $FREE) (local.get $n))
      (call $output_write (global.get $FREE) (i32.const 1))))
    ;; S: output_write, then output_set, which wins
    (if (call $is (i32.const 0x53)) (then
      (call $input_read (global.get $FREE) (i64.const 0) (local.get $n))
      (call $output_write (global.get $FREE) (i32.const 1))
      (call $out (global.get $FREE) (local.get $n))))
    ;; anything else (z): no output
    (i32.const 0))`,
}

// loadBulkIO loads plugin with one instance and an output cap of 1 KiB.
func loadBulkIO(t *testing.T, plugin testutil.WATPlugin) (*Plugin, error) {
	t.Helper()
	p, err := Load(t.Context(), Options{
		Name: "bulkio", Wasm: testutil.WAT(t, plugin.Text()), Timeout: 5 * time.Second, MemoryMB: 16,
		MaxInstances: 1, MaxOutputBytes: 1 << 10, CacheDir: testutil.CompilationCacheDir(t),
		Logger: hclog.NewNullLogger(),
	})
	if err == nil {
		t.Cleanup(func() { p.Close(t.Context()) })
	}
	return p, err
}

// TestInputReadOutputWrite: input_read and output_write move a call's
// input and output in one host call each; every range outside the input
// or the plugin's memory traps with an error naming the function and the
// range, an output over the cap ends the call as KindOutputTooLarge, the
// last of output_write and output_set sets the output, and nothing one
// call wrote reaches the next; on a fresh instance (Extism's
// CallWithContext) and a warm one (callDirect) alike.
func TestInputReadOutputWrite(t *testing.T) {
	p, err := loadBulkIO(t, bulkIOPlugin)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		input, out string
		kind       Kind
		errHas     []string
	}{
		{input: "echo: a call's input, back as its output", out: "echo: a call's input, back as its output"},
		{input: "e" + strings.Repeat("x", 1023), out: "e" + strings.Repeat("x", 1023)}, // exactly the cap
		{input: "Pend", out: "d"},
		{input: "z", out: ""},
		{input: "2nd wins", out: "2"},
		{input: "set then write", out: "s"},
		{input: "Set: write then set", out: "Set: write then set"},
		{input: "past memory", kind: KindTrap, errHas: []string{"input_read: destination [131071, 131071+2) is outside the plugin's memory of 131072 bytes"}},
		{input: "Negative pointer", kind: KindTrap, errHas: []string{"input_read: destination [4294967295, 4294967295+1) is outside the plugin's memory"}},
		{input: "length", kind: KindTrap, errHas: []string{"input_read: input bytes [0, 0+4294967295) are out of range: the input is 6 bytes"}},
		{input: "offset", kind: KindTrap, errHas: []string{"input_read: input bytes [7, 7+0) are out of range: the input is 6 bytes"}},
		{input: "negative offset", kind: KindTrap, errHas: []string{"input_read: input bytes [18446744073709551615, 18446744073709551615+1) are out of range"}},
		{input: "write past memory", kind: KindTrap, errHas: []string{"output_write: source [131068, 131068+8) is outside the plugin's memory of 131072 bytes"}},
		{input: "Write at -1", kind: KindTrap, errHas: []string{"output_write: source [4294967295, 4294967295+2) is outside"}},
		{input: "cap", kind: KindOutputTooLarge, errHas: []string{"output of 2048 bytes exceeds the cap of 1024 bytes (max_output_kb)"}},
		{input: "trap after output_write", kind: KindTrap, errHas: []string{"unreachable"}},
		{input: "reported error after output_write", kind: KindPluginError, errHas: []string{"reported error after output_write"}},
		{input: "e" + strings.Repeat("x", 1024), kind: KindOutputTooLarge, errHas: []string{"output of 1025 bytes exceeds the cap of 1024 bytes"}},
	} {
		for _, fresh := range []bool{true, false} {
			name := tc.input[:min(len(tc.input), 24)] + map[bool]string{true: "/fresh", false: "/warm"}[fresh]
			t.Run(name, func(t *testing.T) {
				checkBulkIO(t, p, fresh, tc.input, tc.out, tc.kind, tc.errHas)
			})
		}
	}
}

// checkBulkIO calls p (one instance) with input on a fresh instance (its
// first call, through Extism's CallWithContext) or a warm one (through
// callDirect), and checks the output, or the error's kind and text; then
// that the next call sees nothing of it.
func checkBulkIO(t *testing.T, p *Plugin, fresh bool, input, wantOut string, kind Kind, errHas []string) {
	t.Helper()
	call := func(input string) (string, error) {
		out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(input))
		return string(out), err
	}
	pool := p.act.pool
	inst, err := pool.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if fresh {
		pool.put(inst, false) // replaced: the next get makes a new one
	} else if !inst.direct.ready() {
		pool.put(inst, true)
		if _, err := call("z"); err != nil {
			t.Fatal(err)
		}
	} else {
		pool.put(inst, true)
	}
	inst, err = pool.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	direct := inst.direct.ready()
	pool.put(inst, true)
	if direct == fresh {
		t.Fatalf("the instance is called directly: %v, want %v", direct, !fresh)
	}

	out, err := call(input)
	if kind == "" {
		if err != nil || out != wantOut {
			t.Fatalf("= %q, %v; want %q", out, err, wantOut)
		}
	} else {
		var ce *CallError
		if !errors.As(err, &ce) || ce.Kind != kind || out != "" {
			t.Fatalf("= %q, %v; want a %s error", out, err, kind)
		}
		t.Log(err)
		for _, s := range errHas {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not say %q", err, s)
			}
		}
	}
	// The next call on the (same or replacement) instance sets no output:
	// nothing of this one's reaches it.
	if out, err := call("z"); err != nil || out != "" {
		t.Fatalf("next call: %q, %v; want no output", out, err)
	}
}

// TestInputReadOutsideACall: called while the module is instantiated (its
// start function), input_read has no call to read from: the instance
// fails to start, and the error says why.
func TestInputReadOutsideACall(t *testing.T) {
	plugin := bulkIOPlugin
	plugin.Fields += `
  (func $early (call $input_read (i32.const 0) (i64.const 0) (i32.const 0)))
  (start $early)`
	_, err := loadBulkIO(t, plugin)
	if err == nil || !strings.Contains(err.Error(), "input_read: called outside an export call of the host") {
		t.Fatalf("load: %v; want input_read refused outside a call", err)
	}
	t.Log(err)
}
