package plugin

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/egress"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

// costImports are the functions the plugins of TestHostFunctionsEndAtTheDeadline
// call besides the kernel's (testutil.WATPlugin imports those).
const costImports = `
  (import "extism:host/env" "config_get" (func $config_get (param i64) (result i64)))
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (import "extism:host/user" "http_request" (func $http (param i64) (result i64)))
  (import "extism:host/user" "output_write" (func $output_write (param i32 i32)))`

// costFields: $toKernel copies len bytes (a multiple of 8) of the plugin's
// memory from ptr into a new Extism block, with store_u64.
const costFields = `
  (func $toKernel (param $ptr i32) (param $len i32) (result i64)
    (local $b i64) (local $i i32)
    (local.set $b (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (call $store_u64 (i64.add (local.get $b) (i64.extend_i32_u (local.get $i)))
        (i64.load (i32.add (local.get $ptr) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 8)))
      (br $copy)))
    (local.get $b))`

// httpRequestLoop builds, at 64 KiB of the plugin's memory, a 1 MiB
// request of the host's http_request to a host no policy allows (its body
// 1 MiB of base64), copies it into a block, and asks for it forever.
func httpRequestLoop() (fields, body string) {
	const prefix = `{"url":"http://denied.example/","method":"POST","body":"`
	const suffix = `"}`
	total := (1<<20 - 64) &^ 7 // within hostfn's 1 MiB payload cap, a multiple of 8
	bodyLen := total - len(prefix) - len(suffix)
	for bodyLen%4 != 0 { // whole base64 quanta; the rest is spaces before the prefix
		bodyLen--
	}
	pad := total - len(prefix) - len(suffix) - bodyLen
	head := strings.Repeat(" ", pad) + prefix
	fields = fmt.Sprintf(`(data (i32.const 1024) %q)`, head)
	body = fmt.Sprintf(`
    (local $b i64)
    (drop (memory.grow (i32.const 40)))
    (memory.copy (i32.const 65536) (i32.const 1024) (i32.const %d))
    (memory.fill (i32.const %d) (i32.const 0x41) (i32.const %d))
    (i32.store16 (i32.const %d) (i32.const 0x7d22))
    (local.set $b (call $toKernel (i32.const 65536) (i32.const %d)))
    (loop $l (drop (call $http (local.get $b))) (br $l))
    (i32.const 0)`, len(head), 65536+len(head), bodyLen, 65536+len(head)+bodyLen, total)
	return fields, body
}

// TestHostFunctionsEndAtTheDeadline: a plugin calling a host function in a
// loop with a huge argument -- a 120 MiB config key, a 100 MiB log
// message or var name, a 1 MiB request to a denied host, 64 MiB outputs
// -- or looping inside Extism's kernel ends at its 1 s deadline with a
// timeout, on a fresh instance (Extism's CallWithContext) and a warm one
// (callDirect), and the host allocates little meanwhile: no host function
// copies more of a block than its answer needs. Before, a host function
// was one tick of the guest's budget however long it took: config_get's
// loop ran ~30 s and allocated 120 MiB a call; the kernel's loop ended on
// its fuel, as a trap, not at the deadline.
func TestHostFunctionsEndAtTheDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("each case runs two calls of 1 s")
	}
	httpFields, httpBody := httpRequestLoop()
	cases := []struct {
		name, fields, body string
		maxOutput          int
	}{
		{name: "config_get with a 120 MiB key", body: `
    (local $k i64)
    (local.set $k (call $alloc (i64.const 125829120)))
    (loop $l (drop (call $config_get (local.get $k))) (br $l))
    (i32.const 0)`},
		{name: "log_info with a 100 MiB message", body: `
    (loop $l (call $log_info (call $alloc (i64.const 104857600))) (br $l))
    (i32.const 0)`},
		{name: "var_get with a 100 MiB name", body: `
    (loop $l (drop (call $var_get (call $alloc (i64.const 104857600)))) (br $l))
    (i32.const 0)`},
		{name: "http_request of 1 MiB to a denied host", fields: httpFields, body: httpBody},
		{name: "output_write of 64 MiB", maxOutput: 64 << 20, body: `
    (drop (memory.grow (i32.const 1025)))
    (loop $l (call $output_write (i32.const 0) (i32.const 67108864)) (br $l))
    (i32.const 0)`},
		{name: "a loop in Extism's kernel", body: `
    (drop (call $alloc (i64.const 40000)))
    (call $store_u64 (i64.const 69) (i64.const 0xfffffff4))
    (drop (call $alloc (i64.const 30000)))
    (i32.const 0)`},
	}
	const timeout = time.Second
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			maxOutput := c.maxOutput
			if maxOutput == 0 {
				maxOutput = 1 << 20
			}
			plugin := testutil.WATPlugin{Tools: `{"tools":[]}`, Imports: costImports,
				Fields: costFields + c.fields, CallTool: c.body}
			p, err := Load(t.Context(), Options{
				Name: "costly", Wasm: testutil.WAT(t, plugin.Text()), Timeout: timeout, MemoryMB: 512,
				MaxInstances: 1, MaxOutputBytes: maxOutput, CacheDir: testutil.CompilationCacheDir(t),
				Config: map[string]string{"greeting": "hello"}, Logger: hclog.NewNullLogger(),
				HostFunctions: hostfn.Functions("costly", hclog.NewNullLogger(), dropNotifier{}, &egress.Policy{}, nil),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close(t.Context()) })
			// Two calls: the first on a fresh instance, the second (the first
			// discarded it) on a fresh one again, warmed by a call that ends.
			for _, round := range []string{"fresh instance", "after a timeout"} {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				start := time.Now()
				_, err := p.Call(t.Context(), abi.ExportCallTool, []byte(`{}`))
				took := time.Since(start)
				runtime.ReadMemStats(&after)
				allocated := after.TotalAlloc - before.TotalAlloc
				t.Logf("%s: ended %v after the %v deadline, %d MiB allocated on the Go heap (heap in use %d MiB), %v",
					round, took-timeout, timeout, allocated>>20, after.HeapInuse>>20, err)
				var ce *CallError
				if !errors.As(err, &ce) || ce.Kind != KindTimeout || !strings.Contains(err.Error(), "timeout") {
					t.Fatalf("%s: call = %v, want a timeout", round, err)
				}
				if took > 10*timeout { // it ended at all, not within a margin
					t.Errorf("%s: the call took %v with a timeout of %v", round, took, timeout)
				}
				// The output cap's buffer, allocated once, and the call's own
				// allocations, a few bytes per host call (the denied
				// requests' 1 MiB each); not a copy of each argument. (Before:
				// config_get's 120 MiB a call, output_write's 64 MiB.)
				if limit := uint64(maxOutput) + 512<<20; allocated > limit {
					t.Errorf("%s: %d MiB allocated on the Go heap during the call, want at most %d MiB", round, allocated>>20, limit>>20)
				}
			}
		})
	}
}

// TestKernelMovesMoreThanItsFuelWithinTheDeadline: a plugin that fills
// 384 MiB of Extism's memory in a call leaves the kernel that much to
// clear at the next call's reset, more than its fuel (interrupt.KernelFuel)
// covers; within the call's deadline the kernel spends no fuel, so every
// call succeeds. Before, the second call failed in the kernel's reset.
func TestKernelMovesMoreThanItsFuelWithinTheDeadline(t *testing.T) {
	plugin := testutil.WATPlugin{Tools: `{"tools":[]}`, CallTool: `
    (drop (call $alloc (i64.const 402653184)))
    (call $out (global.get $EMPTY) (i32.const 14))
    (i32.const 0)`}
	p, err := Load(t.Context(), Options{
		Name: "big", Wasm: testutil.WAT(t, plugin.Text()), Timeout: time.Minute, MemoryMB: 512,
		MaxInstances: 1, MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t),
		Logger: hclog.NewNullLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(t.Context()) })
	for i := range 3 {
		start := time.Now()
		out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(`{}`))
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		t.Logf("call %d: %s in %v", i+1, out, time.Since(start))
	}
}

// envPlugin does what the first byte of its input says with Extism's env
// functions, which the host answers itself (envfuncs.go).
var envPlugin = testutil.WATPlugin{Tools: `{"tools":[]}`, Imports: costImports + `
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))`,
	Fields: costFields + `
  (data (i32.const 1024) "greeting")
  (data (i32.const 1040) "nope")
  (data (i32.const 1056) "k")
  (data (i32.const 1064) "v1")
  (data (i32.const 1072) "hi")
  (func $is (param $c i32) (result i32) (i32.eq (call $input_load_u8 (i64.const 0)) (local.get $c)))
  (func $outBlock (param $b i64)
    (if (i64.ne (local.get $b) (i64.const 0)) (then
      (call $output_set (local.get $b) (call $length (local.get $b))))))
  (func $dispatch (result i32)
    ;; c: the value of config key "greeting"; m: of "nope" (none)
    (if (call $is (i32.const 0x63)) (then
      (call $outBlock (call $config_get (call $block (i32.const 1024) (i32.const 8))))))
    (if (call $is (i32.const 0x6d)) (then
      (call $outBlock (call $config_get (call $block (i32.const 1040) (i32.const 4))))))
    ;; s: set var k to v1 and read it; d: delete it and read it
    (if (call $is (i32.const 0x73)) (then
      (call $var_set (call $block (i32.const 1056) (i32.const 1)) (call $block (i32.const 1064) (i32.const 2)))
      (call $outBlock (call $var_get (call $block (i32.const 1056) (i32.const 1))))))
    (if (call $is (i32.const 0x64)) (then
      (call $var_set (call $block (i32.const 1056) (i32.const 1)) (i64.const 0))
      (call $outBlock (call $var_get (call $block (i32.const 1056) (i32.const 1))))))
    ;; V: a var of a 100 MiB name
    (if (call $is (i32.const 0x56)) (then
      (call $var_set (call $alloc (i64.const 104857600)) (call $block (i32.const 1064) (i32.const 2)))))
    ;; L: log "hi" and a 100 MiB message
    (if (call $is (i32.const 0x4c)) (then
      (call $log_info (call $block (i32.const 1072) (i32.const 2)))
      (call $log_info (call $alloc (i64.const 104857600)))))
    ;; e: an error text of 100 MiB; o: an output of 100 MiB
    (if (call $is (i32.const 0x65)) (then
      (call $error_set (call $alloc (i64.const 104857600)))
      (return (i32.const 1))))
    (if (call $is (i32.const 0x6f)) (then
      (call $output_set (call $alloc (i64.const 104857600)) (i64.const 104857600))))
    (i32.const 0))`,
	CallTool: `(call $dispatch)`,
}

// TestEnvFunctionsReadOnlyWhatTheyNeed: the host's config_get, var_get,
// var_set and log_info answer as Extism's do, and a 100 MiB block costs
// the host no copy of it: a var name that cannot fit traps at once, a log
// message is read up to the 2 KiB the log keeps (and says how long it
// was), and an error text or output over the cap fails the call without
// being read, on a fresh instance (Extism's CallWithContext, which copied
// them whole) and a warm one (callDirect).
func TestEnvFunctionsReadOnlyWhatTheyNeed(t *testing.T) {
	var log strings.Builder
	logger := hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Info})
	p, err := Load(t.Context(), Options{
		Name: "env", Wasm: testutil.WAT(t, envPlugin.Text()), Timeout: 20 * time.Second, MemoryMB: 512,
		MaxInstances: 1, MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t),
		Config: map[string]string{"greeting": "hello"}, Logger: logger,
		HostFunctions: hostfn.Functions("env", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(t.Context()) })
	call := func(mode string) (string, error, uint64) {
		t.Helper()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(mode))
		runtime.ReadMemStats(&after)
		return string(out), err, after.TotalAlloc - before.TotalAlloc
	}
	for _, c := range []struct{ mode, want string }{
		{"c", "hello"}, {"m", ""}, {"s", "v1"}, {"d", ""}, {"s", "v1"},
	} {
		if out, err, _ := call(c.mode); err != nil || out != c.want {
			t.Errorf("mode %s = %q, %v; want %q", c.mode, out, err, c.want)
		}
	}
	const small = 16 << 20 // far below one copy of the 100 MiB block
	if _, err, alloc := call("L"); err != nil || alloc > small {
		t.Errorf("log_info of 100 MiB: %v, %d MiB allocated", err, alloc>>20)
	}
	if !strings.Contains(log.String(), "line=hi") || !strings.Contains(log.String(), "truncated; 104857600 bytes") {
		t.Errorf("the log lacks the two lines:\n%s", log.String())
	}
	if _, err, alloc := call("V"); err == nil || !strings.Contains(err.Error(), "variable store is full") || alloc > small {
		t.Errorf("var_set of a 100 MiB name: %v, %d MiB allocated; want a trap naming the full store", err, alloc>>20)
	}
	// e and o, each on a fresh instance (the last call trapped or was
	// refused) and on a warm one (after an ordinary call).
	for _, c := range []struct{ mode, what string }{{"e", "error text"}, {"o", "output"}} {
		for _, round := range []string{"fresh", "warm"} {
			if round == "warm" {
				if _, err, _ := call("c"); err != nil {
					t.Fatal(err)
				}
			}
			_, err, alloc := call(c.mode)
			var ce *CallError
			if !errors.As(err, &ce) || ce.Kind != KindOutputTooLarge || !strings.Contains(err.Error(), c.what+" of 104857600 bytes exceeds the cap") {
				t.Errorf("%s of 100 MiB, %s instance: %v; want it refused as over the cap", c.what, round, err)
			}
			if alloc > small {
				t.Errorf("%s of 100 MiB, %s instance: %d MiB allocated on the Go heap", c.what, round, alloc>>20)
			}
		}
	}
}
