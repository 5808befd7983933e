package interrupt

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/internal/testutil"
)

// bulkModule is a module with a 2-page memory (two chunks and more of
// memory.fill and memory.copy), tables of 3,000 elements (three chunks)
// and segments, whose export b_op runs op after a_pattern has filled the
// memory with a pattern, and whose c_tables sums what the tables hold into
// the exported global g (runExports compares memory and g, and runs the
// exports in the order of their names).
func bulkModule(op string) string {
	return `(module
  (memory (export "mem") 2)
  (global $g (export "g") (mut i32) (i32.const 0))
  (table $t 3000 funcref)
  (table $t2 1500 funcref)
  (table $u 3000 externref)
  (data $d "a passive data segment of forty bytes...")
  (elem $e func $a_pattern $b_op $c_tables)
  (table $f 2 funcref)
  (elem (table $f) (i32.const 0) func $a_pattern $b_op)
  (func $a_pattern (export "a_pattern") (local $i i32)
    (loop
      (i32.store8 (local.get $i) (i32.mul (local.get $i) (i32.const 7)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if 0 (i32.lt_u (local.get $i) (i32.const 131072)))))
  (func $b_op (export "b_op") (local $fa funcref) (local $fb funcref)
    (local.set $fa (table.get $f (i32.const 0))) (local.set $fb (table.get $f (i32.const 1)))
    ` + op + `)
  (func $c_tables (export "c_tables") (local $i i32)
    (loop
      (if (i32.eqz (ref.is_null (table.get $t (local.get $i))))
        (then (global.set $g (i32.add (global.get $g) (i32.add (local.get $i) (i32.const 1))))))
      (if (i32.lt_u (local.get $i) (i32.const 1500))
        (then (if (i32.eqz (ref.is_null (table.get $t2 (local.get $i))))
          (then (global.set $g (i32.add (global.get $g) (i32.mul (local.get $i) (i32.const 3))))))))
      (if (i32.eqz (ref.is_null (table.get $u (local.get $i))))
        (then (global.set $g (i32.add (global.get $g) (i32.const 1000000)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if 0 (i32.lt_u (local.get $i) (i32.const 3000))))
    (global.set $g (i32.add (global.get $g) (table.size $t))))
)`
}

// bulkOps are bulk operations at and past their bounds: in range, empty
// at the end, one past it, overflowing 32 bits, overlapping both ways.
var bulkOps = []string{
	// memory.fill
	`(memory.fill (i32.const 0) (i32.const 0xab) (i32.const 131072))`,
	`(memory.fill (i32.const 5) (i32.const 1) (i32.const 100000))`,
	`(memory.fill (i32.const 131062) (i32.const 2) (i32.const 10))`,
	`(memory.fill (i32.const 131062) (i32.const 2) (i32.const 11))`,
	`(memory.fill (i32.const 131072) (i32.const 3) (i32.const 0))`,
	`(memory.fill (i32.const 131073) (i32.const 3) (i32.const 0))`,
	`(memory.fill (i32.const -1) (i32.const 1) (i32.const 2))`,
	`(memory.fill (i32.const 1) (i32.const 1) (i32.const -1))`,
	`(memory.fill (i32.const 65536) (i32.const 9) (i32.const 65536))`,
	// memory.copy
	`(memory.copy (i32.const 1003) (i32.const 1000) (i32.const 100000))`,
	`(memory.copy (i32.const 1000) (i32.const 1003) (i32.const 100000))`,
	`(memory.copy (i32.const 70000) (i32.const 1) (i32.const 61072))`,
	`(memory.copy (i32.const 1) (i32.const 70000) (i32.const 61072))`,
	`(memory.copy (i32.const 0) (i32.const 65536) (i32.const 65536))`,
	`(memory.copy (i32.const 3) (i32.const 3) (i32.const 131069))`,
	`(memory.copy (i32.const 131072) (i32.const 0) (i32.const 0))`,
	`(memory.copy (i32.const 0) (i32.const 131072) (i32.const 0))`,
	`(memory.copy (i32.const 131073) (i32.const 0) (i32.const 0))`,
	`(memory.copy (i32.const 0) (i32.const 131073) (i32.const 0))`,
	`(memory.copy (i32.const 1) (i32.const 0) (i32.const 131072))`,
	`(memory.copy (i32.const 0) (i32.const 1) (i32.const 131072))`,
	`(memory.copy (i32.const -16) (i32.const 0) (i32.const 32))`,
	`(memory.copy (i32.const 0) (i32.const -16) (i32.const 32))`,
	// memory.init
	`(memory.init $d (i32.const 10) (i32.const 0) (i32.const 40))`,
	`(memory.init $d (i32.const 131067) (i32.const 0) (i32.const 10))`,
	`(memory.init $d (i32.const 10) (i32.const 1) (i32.const 40))`,
	`(memory.init $d (i32.const 131072) (i32.const 40) (i32.const 0))`,
	// table.fill
	`(table.fill $t (i32.const 0) (local.get $fa) (i32.const 3000))`,
	`(table.fill $t (i32.const 100) (local.get $fa) (i32.const 2500))`,
	`(table.fill $t (i32.const 3000) (ref.null func) (i32.const 0))`,
	`(table.fill $t (i32.const 3001) (ref.null func) (i32.const 0))`,
	`(table.fill $t (i32.const 2999) (local.get $fb) (i32.const 2))`,
	`(table.fill $t (i32.const -1) (local.get $fb) (i32.const 2))`,
	`(table.fill $u (i32.const 7) (ref.null extern) (i32.const 2000))`,
	// table.copy, after a fill of part of $t
	`(table.fill $t (i32.const 0) (local.get $fb) (i32.const 1500)) (table.copy $t $t (i32.const 1) (i32.const 0) (i32.const 2999))`,
	`(table.fill $t (i32.const 1500) (local.get $fb) (i32.const 1500)) (table.copy $t $t (i32.const 0) (i32.const 1) (i32.const 2999))`,
	`(table.fill $t (i32.const 0) (local.get $fb) (i32.const 1200)) (table.copy $t2 $t (i32.const 0) (i32.const 1000) (i32.const 1500))`,
	`(table.fill $t (i32.const 0) (local.get $fb) (i32.const 1200)) (table.copy $t2 $t (i32.const 1) (i32.const 1000) (i32.const 1500))`,
	`(table.copy $t $t (i32.const 3000) (i32.const 0) (i32.const 0))`,
	`(table.copy $t $t (i32.const 0) (i32.const 3001) (i32.const 0))`,
	`(table.copy $t $t2 (i32.const 0) (i32.const -2) (i32.const 4))`,
	// table.init
	`(table.init $t $e (i32.const 0) (i32.const 0) (i32.const 3))`,
	`(table.init $t $e (i32.const 2999) (i32.const 0) (i32.const 3))`,
	`(table.init $t $e (i32.const 3000) (i32.const 3) (i32.const 0))`,
}

// TestBulkOperationsAsOriginal: every bulk operation, rewritten into
// chunks, does what the instruction does -- the same memory and tables
// after it, a trap where it traps.
func TestBulkOperationsAsOriginal(t *testing.T) {
	for _, op := range bulkOps {
		// Every operation ends: a generous budget, so that a loaded
		// machine is not taken for a module that never ends.
		if !differentialWithin(t, testutil.WAT(t, bulkModule(op)), 10*time.Second) {
			t.Errorf("%s: not compared", op)
		}
	}
}

// TestBulkOperationsTrapAsOriginal: an operation out of bounds traps
// before it writes anything, with the instruction's own error.
func TestBulkOperationsTrapAsOriginal(t *testing.T) {
	for _, op := range []string{bulkOps[3], bulkOps[5], bulkOps[6], bulkOps[19], bulkOps[21]} {
		b := testutil.WAT(t, bulkModule(op))
		var checks atomic.Int64
		m := instance(t, mustInstrument(t, b), &checks)
		call(t, m, "a_pattern")
		_, err := m.ExportedFunction("b_op").Call(t.Context())
		if err == nil || !errorsContain(err, "out of bounds memory access") {
			t.Errorf("%s: %v, want the out of bounds trap", op, err)
		}
	}
}

func errorsContain(err error, s string) bool {
	return err != nil && len(err.Error()) >= len(s) && contains(err.Error(), s)
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestWholeMemoryFillChecksTheHost: one memory.fill, memory.copy or
// table.fill over all of a large memory or table, which ran without ever
// leaving compiled code (for seconds over 2 GiB, freezing the host's
// garbage collector), now checks the host every few MiB and ends at its
// deadline.
func TestWholeMemoryFillChecksTheHost(t *testing.T) {
	const pages, elems = 4096, 1 << 22 // 256 MiB, 4 Mi elements
	for _, tc := range []struct {
		op        string
		minChecks int64
	}{
		{fmt.Sprintf(`(memory.fill (i32.const 0) (i32.const 1) (i32.const %d))`, pages<<16), 32},
		{fmt.Sprintf(`(memory.copy (i32.const 0) (i32.const 1) (i32.const %d))`, pages<<16-1), 32},
		{fmt.Sprintf(`(memory.copy (i32.const 1) (i32.const 0) (i32.const %d))`, pages<<16-1), 32},
		{fmt.Sprintf(`(table.fill $t (i32.const 0) (ref.null func) (i32.const %d))`, elems), 32},
	} {
		wat := fmt.Sprintf(`(module (memory %d) (table $t %d funcref) (func (export "once") %s) (func (export "loop") (loop %s (br 0))))`, pages, elems, tc.op, tc.op)
		b := testutil.WAT(t, wat)
		ctx := t.Context()
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2).WithMemoryLimitPages(pages))
		var checks atomic.Int64
		instantiateCheck(t, rt, &checks)
		m, err := rt.Instantiate(ctx, mustInstrument(t, b))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.ExportedFunction("once").Call(ctx); err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		once := checks.Load()
		if once < tc.minChecks {
			t.Errorf("%s: %d checks of the host, want at least %d", tc.op, once, tc.minChecks)
		}
		callCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		begin := time.Now()
		_, err = m.ExportedFunction("loop").Call(callCtx)
		cancel()
		took := time.Since(begin)
		rt.Close(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: %v, want the deadline's error", tc.op, err)
		}
		if took > 10*time.Second { // an "it ended" bound
			t.Errorf("%s: ended %v after a 100 ms deadline", tc.op, took)
		}
		t.Logf("%.45s...: %d checks in one operation; the loop ended %v after its start", tc.op, once, took)
	}
}
