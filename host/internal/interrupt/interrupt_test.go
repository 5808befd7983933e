package interrupt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/internal/testutil"

	"github.com/mcphost/mcphost/host/internal/wasmbin"
)

// A small assembler for the test modules: enough of the binary format to
// write each module's sections by hand.

func u32(v uint32) []byte { return wasmbin.AppendU32(nil, v) }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func vec(items ...[]byte) []byte { return cat(u32(uint32(len(items))), cat(items...)) }

func str(s string) []byte { return wasmbin.AppendName(nil, s) }

func sec(id byte, body []byte) []byte { return wasmbin.AppendSection(nil, id, body) }

func wasmModule(sections ...[]byte) []byte {
	return cat([]byte("\x00asm\x01\x00\x00\x00"), cat(sections...))
}

// code is one code section entry: local declarations, then instructions.
func code(locals []byte, instrs ...byte) []byte {
	body := cat(locals, instrs)
	return cat(u32(uint32(len(body))), body)
}

const (
	i32       = 0x7f
	opEnd     = 0x0b
	opCall    = 0x10
	opLocalGt = 0x20
)

var noLocals = []byte{0x00}

// semanticsModule exercises everything whose indices the rewrite moves: an
// imported function, a table filled by an element segment and used by
// call_indirect, ref.func, a start function, an exported global, and a
// name section.
//
//	(import "env" "twice" (func $twice (param i32) (result i32)))   ;; 0
//	(func $count (export "count") (param $n i32) (result i32)       ;; 1
//	  (local $i i32)
//	  (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1)))
//	    (br_if $l (i32.lt_s (local.get $i) (local.get $n))))
//	  (local.get $i))
//	(func (export "via_table") (result i32)                         ;; 2
//	  (call $twice (call_indirect (type 0) (i32.const 10) (i32.const 0))))
//	(func $start (global.set $g (i32.const 7)))                     ;; 3
//	(func (export "get_g") (result i32) (global.get $g))            ;; 4
//	(func (export "ref_func") (result i32) (ref.is_null (ref.func $count)))  ;; 5
//	(func $boom (export "boom") unreachable)                        ;; 6
func semanticsModule() []byte {
	return wasmModule(
		sec(secType, vec(
			[]byte{0x60, 0x01, i32, 0x01, i32}, // 0: (i32) -> i32
			[]byte{0x60, 0x00, 0x01, i32},      // 1: () -> i32
			[]byte{0x60, 0x00, 0x00},           // 2: () -> ()
		)),
		sec(secImport, vec(cat(str("env"), str("twice"), []byte{0x00}, u32(0)))),
		sec(secFunction, vec(u32(0), u32(1), u32(2), u32(1), u32(1), u32(2))),
		sec(secTable, vec([]byte{0x70, 0x00, 0x01})),              // funcref, min 1
		sec(secGlobal, vec([]byte{i32, 0x01, 0x41, 0x00, opEnd})), // mut i32 = 0
		sec(secExport, vec(
			cat(str("count"), []byte{0x00}, u32(1)),
			cat(str("via_table"), []byte{0x00}, u32(2)),
			cat(str("get_g"), []byte{0x00}, u32(4)),
			cat(str("ref_func"), []byte{0x00}, u32(5)),
			cat(str("boom"), []byte{0x00}, u32(6)),
			cat(str("g"), []byte{0x03}, u32(0)),
		)),
		sec(secStart, u32(3)),
		sec(secElement, vec(
			cat(u32(0), []byte{0x41, 0x00, opEnd}, vec(u32(1))), // active, table 0, offset 0: $count
			cat(u32(3), []byte{0x00}, vec(u32(1))),              // declarative: $count, for ref.func
		)),
		sec(secCode, vec(
			code([]byte{0x01, 0x01, i32},
				0x03, 0x40, // loop
				opLocalGt, 1, 0x41, 1, 0x6a, 0x21, 1, // i = i + 1
				opLocalGt, 1, opLocalGt, 0, 0x48, 0x0d, 0, // br_if 0 (i < n)
				opEnd, opLocalGt, 1, opEnd),
			code(noLocals, 0x41, 10, 0x41, 0, 0x11, 0, 0, opCall, 0, opEnd),
			code(noLocals, 0x41, 7, 0x24, 0, opEnd),
			code(noLocals, 0x23, 0, opEnd),
			code(noLocals, 0xd2, 1, 0xd1, opEnd),
			code(noLocals, 0x00, opEnd),
		)),
		sec(secCustom, cat(str("name"), []byte{0x01}, func() []byte {
			names := vec(cat(u32(1), str("count")), cat(u32(6), str("boom")))
			return cat(u32(uint32(len(names))), names)
		}())),
	)
}

// spinModule exports spin(n), a loop of n iterations that do nothing.
func spinModule() []byte {
	return wasmModule(
		sec(secType, vec([]byte{0x60, 0x01, i32, 0x00})),
		sec(secFunction, vec(u32(0))),
		sec(secExport, vec(cat(str("spin"), []byte{0x00}, u32(0)))),
		sec(secCode, vec(code(noLocals,
			0x03, 0x40,
			opLocalGt, 0, 0x41, 1, 0x6b, 0x22, 0, // n = n - 1
			0x0d, 0x00, // br_if 0 (n != 0)
			opEnd, opEnd))),
	)
}

// fanOutModule exports fan(n), which calls itself twice with n-1 until n
// is 0: 2^n calls and not one loop, which wazero's own checks never see.
func fanOutModule() []byte {
	return wasmModule(
		sec(secType, vec([]byte{0x60, 0x01, i32, 0x00})),
		sec(secFunction, vec(u32(0))),
		sec(secExport, vec(cat(str("fan"), []byte{0x00}, u32(0)))),
		sec(secCode, vec(code(noLocals,
			opLocalGt, 0, 0x45, 0x04, 0x40, 0x0f, opEnd, // if n == 0: return
			opLocalGt, 0, 0x41, 1, 0x6b, opCall, 0, // fan(n-1)
			opLocalGt, 0, 0x41, 1, 0x6b, opCall, 0, // fan(n-1)
			opEnd))),
	)
}

// fillModule exports fill(n), a loop of n memory.fill calls over the whole
// 1-page memory.
func fillModule() []byte {
	return wasmModule(
		sec(secType, vec([]byte{0x60, 0x01, i32, 0x00})),
		sec(secFunction, vec(u32(0))),
		sec(secMemory, vec([]byte{0x00, 0x01})),
		sec(secExport, vec(cat(str("fill"), []byte{0x00}, u32(0)))),
		sec(secCode, vec(code(noLocals,
			0x03, 0x40,
			0x41, 0x00, 0x41, 0x00, 0x41, 0x80, 0x80, 0x04, 0xfc, 11, 0x00, // memory.fill(0, 0, 65536)
			opLocalGt, 0, 0x41, 1, 0x6b, 0x22, 0, // n = n - 1
			0x0d, 0x00, // br_if 0 (n != 0)
			opEnd, opEnd))),
	)
}

// instance instantiates b in a runtime without wazero's own checks, with
// env.twice and the interrupt check, which counts its calls into checks.
func instance(t *testing.T, b []byte, checks *atomic.Int64) api.Module {
	t.Helper()
	ctx := t.Context()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(false))
	t.Cleanup(func() { rt.Close(context.Background()) })
	instantiateCheck(t, rt, checks)
	_, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) { stack[0] *= 2 }),
			[]api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).
		Export("twice").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// instantiateCheck gives rt the interrupt check, which counts its calls
// into checks, traps once the call's context has ended, and otherwise
// hands out the next budget; and the stack function, which traps past
// testLimits.StackBytes.
func instantiateCheck(t testing.TB, rt wazero.Runtime, checks *atomic.Int64) {
	t.Helper()
	instantiateHost(t, rt, checks, testLimits.StackBytes, nil)
}

// instantiateHost is instantiateCheck with the stack limit given; the
// stack function records the deepest use it was told of in deepest.
func instantiateHost(t testing.TB, rt wazero.Runtime, checks *atomic.Int64, stackLimit uint32, deepest *atomic.Uint32) {
	t.Helper()
	_, err := rt.NewHostModuleBuilder(ImportModule).NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			checks.Add(1)
			if err := ctx.Err(); err != nil {
				panic(err)
			}
			stack[0] = Budget
		}), nil, []api.ValueType{api.ValueTypeI32}).
		Export(ImportName).
		NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			used := api.DecodeU32(stack[0])
			if deepest != nil && used > deepest.Load() {
				deepest.Store(used)
			}
			if used > stackLimit {
				panic(fmt.Errorf("call stack exceeds %d bytes", stackLimit))
			}
			stack[0] = api.EncodeU32(min(stackLimit, used+stackLimit/8))
		}), []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).
		Export(StackImportName).
		Instantiate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
}

func mustInstrument(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := Instrument(b, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func call(t *testing.T, m api.Module, name string, params ...uint64) uint64 {
	t.Helper()
	res, err := m.ExportedFunction(name).Call(t.Context(), params...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res) == 0 {
		return 0
	}
	return res[0]
}

func TestInstrumentedModuleComputesTheSame(t *testing.T) {
	var origChecks, checks atomic.Int64
	orig := instance(t, semanticsModule(), &origChecks)
	inst := instance(t, mustInstrument(t, semanticsModule()), &checks)
	for _, tc := range []struct {
		name   string
		params []uint64
	}{
		{"count", []uint64{100_000}}, {"via_table", nil}, {"get_g", nil}, {"ref_func", nil},
	} {
		want, got := call(t, orig, tc.name, tc.params...), call(t, inst, tc.name, tc.params...)
		if got != want {
			t.Errorf("%s = %d instrumented, %d originally", tc.name, got, want)
		}
	}
	if got := api.DecodeI32(inst.ExportedGlobal("g").Get()); got != 7 {
		t.Errorf("global g = %d after the start function, want 7", got)
	}
	// count(100000) takes 100,000 loop iterations and a few entries: about
	// 100,000/Budget checks.
	if n := checks.Load(); n < 100_000/Budget || n > 100_000/Budget+2 {
		t.Errorf("%d checks for ~100,000 ticks, want %d", n, 100_000/Budget)
	}
	if origChecks.Load() != 0 {
		t.Errorf("the original module called the check")
	}
	// The name section still names the right function.
	_, err := inst.ExportedFunction("boom").Call(t.Context())
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("trap in boom: %v, want a stack trace naming boom", err)
	}
}

// stops calls export on an instrumented b under a short deadline and
// checks that the call ends with the deadline's error. The calls the tests
// make take seconds when nothing stops them, so a broken check fails the
// test instead of hanging it.
func stops(t *testing.T, b []byte, export string, params ...uint64) {
	t.Helper()
	var checks atomic.Int64
	m := instance(t, mustInstrument(t, b), &checks)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := m.ExportedFunction(export).Call(ctx, params...)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s: %v, want the deadline's error", export, err)
	}
	t.Logf("%s stopped after %v and %d checks", export, time.Since(begin), checks.Load())
}

func TestLoopIsStopped(t *testing.T) { stops(t, spinModule(), "spin", 1<<31-1) }

func TestCallTreeWithoutLoopsIsStopped(t *testing.T) { stops(t, fanOutModule(), "fan", 30) }

func TestBulkMemoryCountsMore(t *testing.T) {
	var checks atomic.Int64
	m := instance(t, mustInstrument(t, fillModule()), &checks)
	// Each iteration takes 1 for the loop and 1+16 for the fill of 64 KiB
	// (one unit, and one per 4 KiB): a check every ~57 fills rather than
	// every ~1,000. (A check comes when the budget is at or below 0, so a
	// period can take up to Budget+17.)
	const fills, fillCost = 1600, 1 + memChunk>>memUnitShift
	call(t, m, "fill", fills)
	if want := int64(fills * (1 + fillCost) / (Budget + fillCost)); checks.Load() < want {
		t.Errorf("%d checks for %d fills, want at least %d", checks.Load(), fills, want)
	}
}

func TestUndefinedIndicesAreRefused(t *testing.T) {
	for name, instrs := range map[string][]byte{
		// Without the rewrite these are invalid; with it they would reach
		// the budget global (setting it to never be checked) or tick.
		"global.set of the next global": {0x41, 0x7f, 0x24, 0x00, opEnd},
		"call of the next function":     {opCall, 0x01, opEnd},
	} {
		b := wasmModule(
			sec(secType, vec([]byte{0x60, 0x00, 0x00})),
			sec(secFunction, vec(u32(0))),
			sec(secCode, vec(code(noLocals, instrs...))),
		)
		if _, err := Instrument(b, testLimits); err == nil || !strings.Contains(err.Error(), "does not define") {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
}

func TestUnknownEncodingsAreRefused(t *testing.T) {
	for name, b := range map[string][]byte{
		"legacy try": wasmModule(
			sec(secType, vec([]byte{0x60, 0x00, 0x00})),
			sec(secFunction, vec(u32(0))),
			sec(secCode, vec(code(noLocals, 0x06, 0x40, opEnd, opEnd))),
		),
		"GC rec type": wasmModule(sec(secType, vec([]byte{0x4e, 0x00}))),
		"version 2":   []byte("\x00asm\x02\x00\x00\x00"),
	} {
		if _, err := Instrument(b, testLimits); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
	for name, b := range map[string][]byte{
		"not wasm":          []byte("hello, world"),
		"truncated section": wasmModule([]byte{secType, 0x10, 0x01}),
		"truncated body":    wasmModule(sec(secCode, vec(code(noLocals, 0x41)))),
	} {
		if _, err := Instrument(b, testLimits); err == nil {
			t.Errorf("%s: instrumented", name)
		}
	}
}

// TestExamplePluginsCompile instruments every committed example plugin
// and has wazero validate the result, through its interpreter: validation
// is the same for both engines, and the compiler under -race took ~30 s a
// Go plugin. The host's tests then run them compiled.
func TestExamplePluginsCompile(t *testing.T) {
	files, err := filepath.Glob("../../../plugins/*/*.wasm")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example plugins: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out := mustInstrument(t, b)
		rt := wazero.NewRuntimeWithConfig(t.Context(), wazero.NewRuntimeConfigInterpreter())
		if _, err := rt.CompileModule(t.Context(), out); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
		rt.Close(t.Context())
	}
}

// FuzzInstrument checks, for any input, that Instrument does not panic, and
// that when wazero accepts the input it also accepts the instrumented
// module.
func FuzzInstrument(f *testing.F) {
	for _, b := range [][]byte{semanticsModule(), spinModule(), fanOutModule(), fillModule()} {
		f.Add(b)
	}
	for _, name := range []string{"wat/wat.wasm", "c/c.wasm", "zig/zig.wasm"} {
		if b, err := os.ReadFile("../../../plugins/" + name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := Instrument(b, testLimits)
		if err != nil {
			return
		}
		ctx := context.Background()
		rt := wazero.NewRuntime(ctx)
		defer rt.Close(ctx)
		if _, err := rt.CompileModule(ctx, b); err != nil {
			return
		}
		if _, err := rt.CompileModule(ctx, out); err != nil {
			t.Fatalf("wazero accepts the module but not its instrumented copy: %v", err)
		}
	})
}

// BenchmarkInstrument rewrites the largest example plugin (the Go SDK's
// everything, 3.8 MB), which the host does once per load.
func BenchmarkInstrument(b *testing.B) {
	wasm, err := os.ReadFile("../../../plugins/everything/everything.wasm")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(wasm)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Instrument(wasm, testLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDebugSectionsAreDropped checks what ABI.md promises of custom
// sections: DWARF (.debug_*), whose code offsets the rewrite moves, is
// dropped, and so are the sections the host reads from the module as
// given (mcphost.description, mcphost.js, mcphost.skills); others are kept.
func TestDebugSectionsAreDropped(t *testing.T) {
	b := cat(semanticsModule(),
		sec(secCustom, cat(str(".debug_info"), []byte{1, 2, 3})),
		sec(secCustom, cat(str("mcphost.skills"), []byte("{}"))),
		sec(secCustom, cat(str("producers"), []byte{0})))
	out := mustInstrument(t, b)
	for _, dropped := range []string{".debug_info", "mcphost.skills"} {
		if bytes.Contains(out, []byte(dropped)) {
			t.Errorf("the %s section was kept", dropped)
		}
	}
	for _, kept := range []string{"producers", "name"} {
		if !bytes.Contains(out, []byte(kept)) {
			t.Errorf("the %s section was dropped", kept)
		}
	}
}

// testLimits are the limits of a plugin with the default memory cap.
// testLimits turns the stack accounting on, at a limit past which wazero
// itself would overflow (~400 MB of real stack), so that the instrumented
// copy of a module calls as deep as the original.
var testLimits = Limits{TableElements: 128 << 20 / 8, StackBytes: MaxStackBytes, StackReport: MaxStackBytes}

// deepTailModule exports deep(n), which calls itself n deep and, after
// each call returns, adds to a global 5,000 times: code that runs while
// the stack unwinds, after every function entry has been counted.
func deepTailModule() []byte {
	body := []byte{opLocalGt, 0, 0x45, 0x04, 0x40, 0x0f, opEnd, // if n == 0: return
		opLocalGt, 0, 0x41, 1, 0x6b, opCall, 0} // deep(n-1)
	for range 5000 {
		body = append(body, 0x23, 0, 0x41, 0x01, 0x6a, 0x24, 0) // g = g + 1
	}
	return wasmModule(
		sec(secType, vec([]byte{0x60, 0x01, i32, 0x00})),
		sec(secFunction, vec(u32(0))),
		sec(secGlobal, vec([]byte{i32, 0x01, 0x41, 0x00, opEnd})),
		sec(secExport, vec(cat(str("deep"), []byte{0x00}, u32(0)))),
		sec(secCode, vec(code(noLocals, append(body, opEnd)...))),
	)
}

// TestUnwindingIsChecked: the code that runs as a deep stack returns is
// counted too, at least once every straightRun instructions, so such a
// call is stopped while it unwinds. (Before, deep(10000) made 10 checks
// and ran 14 ms past a 1 ms deadline.)
func TestUnwindingIsChecked(t *testing.T) {
	// 10,000 frames of 35 KB bodies are over the stack limit (frameCost
	// counts their size), which is not what this tests.
	defer func(l Limits) { testLimits = l }(testLimits)
	testLimits.StackBytes = 0
	var checks atomic.Int64
	m := instance(t, mustInstrument(t, deepTailModule()), &checks)
	const depth, tail = 10_000, 5000 * 4
	call(t, m, "deep", depth)
	if want := int64(depth * tail / 256 / Budget); checks.Load() < want { // a tick at least every 256 instructions
		t.Errorf("%d checks, want at least %d", checks.Load(), want)
	}
	// 100,000 frames: down in a few milliseconds, then ~2e9 instructions
	// to run on the way up, far past the deadline; and a stack of tens of
	// MB. (At 1,000,000 frames an unloaded machine reached wazero's stack
	// ceiling, 400 MB, before the 50 ms deadline.)
	stops(t, deepTailModule(), "deep", 100_000)
}

// TestTableMaximumFollowsTableElementsOnlyWhenTheCodeGrowsATable: a module
// whose code holds no table.grow is rewritten to the same bytes whatever
// Limits.TableElements is (its tables keep their minimum as maximum), so
// that plugins of one file with different memory caps share compiled
// code; with a table.grow the maximum is the cap's share, and a table.grow
// past it fails.
func TestTableMaximumFollowsTableElementsOnlyWhenTheCodeGrowsATable(t *testing.T) {
	const fixed = `(module (table 4 funcref) (func (export "run") (result i32) (table.size 0)))`
	const grows = `(module (table 4 funcref) (func (export "run") (result i32) (table.grow 0 (ref.null func) (i32.const 100))))`
	small, large := Limits{TableElements: 64}, Limits{TableElements: 1 << 20}
	rewrite := func(src string, l Limits) []byte {
		out, err := Instrument(testutil.WAT(t, src), l)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if !bytes.Equal(rewrite(fixed, small), rewrite(fixed, large)) {
		t.Error("a module that grows no table is rewritten differently for different TableElements")
	}
	if bytes.Equal(rewrite(grows, small), rewrite(grows, large)) {
		t.Error("a module that grows a table is rewritten the same for different TableElements")
	}
	for _, c := range []struct {
		src  string
		l    Limits
		want uint64
	}{
		{fixed, small, 4},
		{grows, small, ^uint64(0) & 0xffffffff}, // -1: 4+100 is past the share of 64
		{grows, large, 4},                       // the old size
	} {
		rt := wazero.NewRuntime(t.Context())
		var checks atomic.Int64
		instantiateHost(t, rt, &checks, 0, nil)
		m, err := rt.Instantiate(t.Context(), rewrite(c.src, c.l))
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.ExportedFunction("run").Call(t.Context())
		if err != nil || res[0] != c.want {
			t.Errorf("run = %v, %v; want %d", res, err, c.want)
		}
		rt.Close(t.Context())
	}
}
