package interrupt

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/internal/testutil"
)

// frameShapes are recursive functions whose wazero frames
// TestFrameCostCoversWazero measures: each exports "run", which recurses
// until the stack overflows, and the global "depth", how deep it got.
var frameShapes = map[string]string{
	"empty": `(func $f (export "run") (global.set $d (i32.add (global.get $d) (i32.const 1))) (call $f))`,
	"params10": `(func $f (export "run") (call $g (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0)))
	  (func $g (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (global.set $d (i32.add (global.get $d) (i32.const 1))) (call $g (local.get 1) (local.get 2) (local.get 3) (local.get 4) (local.get 5) (local.get 6) (local.get 7) (local.get 8) (local.get 9) (local.get 0)))`,
	"locals100live":  localsLive(100),
	"locals1000live": localsLive(1000),
	"addchain1000":   chain(1000, "i32", "i32.add"),
	"v128chain300":   chain(300, "v128", "v128.and"),
	"v128computed":   v128Computed(300),
	"i32computed":    i32Computed(1000),
}

// knownGaps are shapes built to spill, whose frames frameCost
// underestimates (RATIONALE.md, "Call stacks"): logged, not failed.
var knownGaps = map[string]bool{"i32computed": true}

// i32Computed: n i32 values computed from a local (i32.eqz), live across
// the recursive call, then summed: 4 bytes of body a value.
func i32Computed(n int) string {
	var b strings.Builder
	b.WriteString(`(func $f (export "run") (result i32) (local i32) (global.set $d (i32.add (global.get $d) (i32.const 1)))` + "\n")
	b.WriteString("(local.set 0 (global.get $d))\n")
	for range n {
		b.WriteString("(i32.eqz (local.get 0))\n")
	}
	b.WriteString("(call $f)\n")
	for range n {
		b.WriteString("i32.add\n")
	}
	b.WriteString(")")
	return b.String()
}

// localsLive: n locals set from the depth, live across the recursive
// call, then summed.
func localsLive(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `(func $f (export "run") (result i32) (local`)
	for range n {
		b.WriteString(" i32")
	}
	b.WriteString(") (global.set $d (i32.add (global.get $d) (i32.const 1)))\n")
	for i := range n {
		fmt.Fprintf(&b, "(local.set %d (i32.add (global.get $d) (i32.const %d)))\n", i, i)
	}
	b.WriteString("(call $f)\n")
	for i := range n {
		fmt.Fprintf(&b, "(local.get %d) i32.add\n", i)
	}
	b.WriteString(")")
	return b.String()
}

// chain: a call with n results of type t, live across the recursive call,
// then combined with op: about one byte of body per value.
func chain(n int, t, op string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(func $many (result")
	for range n {
		b.WriteString(" " + t)
	}
	b.WriteString(")")
	for i := range n {
		if t == "v128" {
			fmt.Fprintf(&b, " (v128.const i32x4 %d 0 0 0)", i)
		} else {
			fmt.Fprintf(&b, " (i32.add (global.get $d) (i32.const %d))", i)
		}
	}
	b.WriteString(")\n")
	fmt.Fprintf(&b, `(func $f (export "run") (result %s) (global.set $d (i32.add (global.get $d) (i32.const 1))) (call $many) (call $f)`, t)
	for range n {
		b.WriteString(" " + op)
	}
	b.WriteString(")")
	return b.String()
}

// v128Computed: n v128 values computed from a local (i8x16.abs), live
// across the recursive call, then combined.
func v128Computed(n int) string {
	var b strings.Builder
	b.WriteString(`(func $f (export "run") (result v128) (local v128) (global.set $d (i32.add (global.get $d) (i32.const 1)))` + "\n")
	b.WriteString("(local.set 0 (i32x4.splat (global.get $d)))\n")
	for range n {
		b.WriteString("(i8x16.abs (local.get 0))\n")
	}
	b.WriteString("(call $f)\n")
	for range n {
		b.WriteString("v128.and\n")
	}
	b.WriteString(")")
	return b.String()
}

// TestFrameCostCoversWazero measures the size of wazero's frames for a
// few shapes -- how deep each recursed before wazero's stack (which
// doubles from 10 KiB and overflows past ~400 MB, so its last size is ~671
// MB) ran out -- and checks that frameCost's estimate is at least that.
// Set MCPHOST_MEASURE_FRAMES=1 to run it: it allocates ~1 GB per shape.
func TestFrameCostCoversWazero(t *testing.T) {
	if os.Getenv("MCPHOST_MEASURE_FRAMES") == "" {
		t.Skip("set MCPHOST_MEASURE_FRAMES=1 to measure wazero's frames")
	}
	const lastStack = 10240 << 16 // 10 KiB doubled 16 times, ~671 MB
	for name, fn := range frameShapes {
		wat := `(module (global $d (export "depth") (mut i32) (i32.const 0)) ` + fn + `)`
		b := testutil.WAT(t, wat)
		depth := func(rt wazero.Runtime, b []byte) uint32 {
			defer rt.Close(t.Context())
			m, err := rt.Instantiate(t.Context(), b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err = m.ExportedFunction("run").Call(t.Context()); err == nil {
				t.Fatalf("%s: the recursion ended", name)
			}
			return api.DecodeU32(m.ExportedGlobal("depth").Get())
		}
		real := lastStack / depth(wazero.NewRuntimeWithConfig(t.Context(), wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2)), b)

		// The estimate: the instrumented copy, to a limit of 16 MiB.
		const limit = 16 << 20
		out, err := Instrument(b, Limits{StackBytes: limit, StackReport: limit})
		if err != nil {
			t.Fatal(err)
		}
		rt := wazero.NewRuntimeWithConfig(t.Context(), wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2))
		var checks atomic.Int64
		instantiateHost(t, rt, &checks, limit, nil)
		est := limit / depth(rt, out)
		t.Logf("%-16s module %6d bytes: real frame ~%6d bytes, estimate ~%6d", name, len(b), real, est)
		if est < real && !knownGaps[name] {
			t.Errorf("%s: estimate %d bytes, below the real frame of ~%d", name, est, real)
		}
	}
}
