package interrupt

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/host/internal/wasmbin"
	"github.com/mcphost/mcphost/internal/testutil"
)

// outcome is what one call of an export did: its results, or the first
// line of its error, and then the state it left (memory and globals).
type outcome struct {
	results  []uint64
	err      string
	timedOut bool
	state    [32]byte
}

func (o outcome) String() string {
	return fmt.Sprintf("results %v, error %q, timed out %v, state %x", o.results, o.err, o.timedOut, o.state[:4])
}

// runExports instantiates b in rt and calls each export that takes no
// parameters, in order, each under deadline; it panics -- which a fuzzer
// records as a failing input -- when a call outlives its deadline by
// watchdog, since nothing can stop such a call.
func runExports(rt wazero.Runtime, b []byte, deadline, watchdog time.Duration) ([]outcome, error) {
	ctx := context.Background()
	compiled, err := rt.CompileModule(ctx, b)
	if err != nil {
		return nil, err
	}
	// Only the instrumented copy imports, and only the host's functions.
	for _, f := range compiled.ImportedFunctions() {
		if module, _, _ := f.Import(); module != ImportModule {
			return nil, errors.New("imports")
		}
	}
	if len(compiled.ImportedMemories()) > 0 {
		return nil, errors.New("imports")
	}
	var outcomes []outcome
	call := func(f func(context.Context) ([]uint64, error)) ([]uint64, error, bool) {
		ctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		timer := time.AfterFunc(watchdog, func() { panic(fmt.Sprintf("a call outlived its %v deadline by %v", deadline, watchdog)) })
		defer timer.Stop()
		res, err := f(ctx)
		return res, err, ctx.Err() != nil
	}
	var m api.Module
	_, err, timedOut := call(func(ctx context.Context) ([]uint64, error) {
		m, err = rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
		return nil, err
	})
	if err != nil {
		if timedOut {
			return []outcome{{timedOut: true}}, nil
		}
		return []outcome{{err: firstLine(err)}}, nil
	}
	// In the order of their names: wazero gives them as a map.
	exports := compiled.ExportedFunctions()
	for _, name := range slices.Sorted(maps.Keys(exports)) {
		if len(exports[name].ParamTypes()) > 0 {
			continue
		}
		fn := m.ExportedFunction(name)
		res, err, timedOut := call(func(ctx context.Context) ([]uint64, error) { return fn.Call(ctx) })
		o := outcome{results: res, timedOut: timedOut}
		if err != nil {
			o.err = firstLine(err)
			res = nil
		}
		h := sha256.New()
		if mem := m.Memory(); mem != nil {
			b, _ := mem.Read(0, mem.Size())
			h.Write(b)
		}
		if g := m.ExportedGlobal("g"); g != nil { // the seeds' global
			fmt.Fprint(h, g.Get())
		}
		copy(o.state[:], h.Sum(nil))
		outcomes = append(outcomes, o)
		if timedOut || err != nil {
			break // the instance is closed or in an unknown state
		}
	}
	return outcomes, nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	// The instrumented module traps in the check where the original
	// was closed by wazero; both are the deadline.
	return s
}

// FuzzInstrumentDifferential runs a module and its instrumented copy and
// compares what each export does. The instrumented copy runs without
// wazero's checks under a short deadline, and must end within a bounded
// margin of it whatever its bytes (if the rewrite missed a loop or a
// function entry that wazero executes, the call never ends and the
// watchdog fails the input); when it ends before the deadline, the
// original, run under wazero's own checks, must have done the same.
func FuzzInstrumentDifferential(f *testing.F) {
	for _, b := range [][]byte{semanticsModule(), spinModule(), fanOutModule(), fillModule(), hiddenLoopModule(), differentialModule()} {
		f.Add(b)
	}
	// Bulk operations at their bounds (bulk_test.go).
	for _, op := range []string{bulkOps[1], bulkOps[3], bulkOps[9], bulkOps[10], bulkOps[29], bulkOps[35], bulkOps[36]} {
		f.Add(testutil.WAT(f, bulkModule(op)))
	}
	f.Fuzz(func(t *testing.T, b []byte) { differential(t, b) })
}

// differential is FuzzInstrumentDifferential's check of one module b;
// it reports whether the comparison ran to the end (false: the module
// was refused, does not compile, or timed out instrumented, each export
// given 20 ms: a fuzzed module may never end).
func differential(t *testing.T, b []byte) bool {
	return differentialWithin(t, b, 20*time.Millisecond)
}

// differentialWithin is differential with perCall for each export of the
// instrumented copy, for modules known to end (a loaded machine can take
// more than 20 ms over a large bulk operation).
func differentialWithin(t *testing.T, b []byte, perCall time.Duration) bool {
	out, err := Instrument(b, testLimits)
	if err != nil {
		return false
	}
	ctx := context.Background()
	plain := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCoreFeatures(api.CoreFeaturesV2).WithCloseOnContextDone(true).WithMemoryLimitPages(64))
	defer plain.Close(ctx)
	// The original is compiled without its name section, which can
	// make wazero allocate gigabytes (see StripCustomSections) and
	// which the rewrite may drop; it is run without any custom
	// section, as the host runs a module it does not rewrite.
	if !compiles(plain, withoutNames(b)) {
		return false
	}
	if b, err = StripCustomSections(b); err != nil || !compiles(plain, b) {
		t.Fatalf("the module compiles, but not without its custom sections: %v", err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCoreFeatures(api.CoreFeaturesV2).WithMemoryLimitPages(64))
	defer rt.Close(ctx)
	var checks atomic.Int64
	instantiateCheck(t, rt, &checks)
	got, err := runExports(rt, out, perCall, max(2*time.Second, 4*perCall))
	if err != nil {
		// A name section wazero finds invalid (not UTF-8) makes it
		// refuse the original as much as the copy, which keeps it.
		if err.Error() == "imports" || strings.HasPrefix(err.Error(), "section custom:") {
			return false
		}
		t.Fatalf("wazero accepts the module but not its instrumented copy: %v", err)
	}
	for _, o := range got {
		if o.timedOut {
			return false // the original may never end (a call tree without loops)
		}
	}
	want, err := runExports(plain, b, time.Second, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%d calls originally (%v), %d instrumented (%v)", len(want), want, len(got), got)
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.timedOut || fmt.Sprint(w.results) != fmt.Sprint(g.results) || w.state != g.state || (w.err == "") != (g.err == "") {
			t.Fatalf("export %d: originally %v, instrumented %v", i, w, g)
		}
	}
	return true
}

// hiddenLoopModule exports a function whose bytes wazero runs as an
// endless loop while the standard encoding shows none (see
// host/hostile_test.go): the rewrite must refuse it.
func hiddenLoopModule() []byte {
	body := []byte{0x41, 0x00, 0x04, 0x40, 0xfd, 0x0c}
	body = append(body, make([]byte, 16)...)
	body = append(body, 0x41, 0x00, 0xfd, 0x8c, 0x00,
		0x0b, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x41, 0x00, 0x04, 0x40, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
		0x0b, opEnd)
	return wasmModule(
		sec(secType, vec([]byte{0x60, 0x00, 0x00})),
		sec(secFunction, vec(u32(0))),
		sec(secExport, vec(cat(str("hidden"), []byte{0x00}, u32(0)))),
		sec(secCode, vec(code(noLocals, body...))),
	)
}

// differentialModule is a seed with state to compare: an exported memory
// and global that its exports change, a loop, calls, a trap and SIMD.
func differentialModule() []byte {
	return wasmModule(
		sec(secType, vec([]byte{0x60, 0x00, 0x01, i32}, []byte{0x60, 0x00, 0x00})),
		sec(secFunction, vec(u32(0), u32(1), u32(1))),
		sec(secMemory, vec([]byte{0x00, 0x01})),
		sec(secGlobal, vec([]byte{i32, 0x01, 0x41, 0x00, opEnd})),
		sec(secExport, vec(
			cat(str("sum"), []byte{0x00}, u32(0)),
			cat(str("simd"), []byte{0x00}, u32(1)),
			cat(str("boom"), []byte{0x00}, u32(2)),
			cat(str("mem"), []byte{0x02}, u32(0)),
			cat(str("g"), []byte{0x03}, u32(0)),
		)),
		sec(secCode, vec(
			// sum: g = 0; loop { mem[g] = g; g += 1; br_if g < 200 }; g
			code(noLocals,
				0x03, 0x40,
				0x23, 0, 0x23, 0, 0x3a, 0x00, 0x00, // i32.store8 (g) g
				0x23, 0, 0x41, 1, 0x6a, 0x24, 0, // g = g + 1
				0x23, 0, 0x41, 0xc8, 0x01, 0x48, 0x0d, 0, // br_if g < 200
				opEnd, 0x23, 0, opEnd),
			// simd: mem[16:32] = abs(v128.const -1 ...) via i16x8.abs (0xfd 0x80 0x01)
			code(noLocals, append(append([]byte{0x41, 16, 0xfd, 0x0c}, bytesOf(0xff, 16)...),
				0xfd, 0x80, 0x01, 0xfd, 0x0b, 0x04, 0x00, opCall, 2, opEnd)...),
			code(noLocals, 0x00, opEnd),
		)),
	)
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// TestHiddenLoopIsRefused: the seed the rewrite once read otherwise than
// wazero is refused now.
func TestHiddenLoopIsRefused(t *testing.T) {
	if _, err := Instrument(hiddenLoopModule(), testLimits); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Instrument: %v, want ErrUnsupported", err)
	}
	// wazero itself accepts it: the rewrite must not.
	rt := wazero.NewRuntime(t.Context())
	defer rt.Close(t.Context())
	if _, err := rt.CompileModule(t.Context(), hiddenLoopModule()); err != nil {
		t.Fatalf("wazero refuses the seed, which tests nothing: %v", err)
	}
}

// compiles reports whether rt compiles b. wazero has panicked on malformed
// modules the rewrite let through (the host recovers such a panic, see
// plugin.compile); that counts as not compiling.
func compiles(rt wazero.Runtime, b []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, err := rt.CompileModule(context.Background(), b)
	return err == nil
}

// withoutNames returns b without its name sections.
func withoutNames(b []byte) []byte {
	sections, err := readSections(b[8:])
	if err != nil {
		return b
	}
	out := append([]byte(nil), b[:8]...)
	for _, s := range sections {
		r := newReader(s.Body)
		if s.ID == secCustom && string(r.Name()) == "name" {
			continue
		}
		out = wasmbin.AppendSection(out, s.ID, s.Body)
	}
	return out
}
