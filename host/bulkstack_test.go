package host_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestWholeMemoryBulkOpsEndAtDeadline (issue 25, item 3): a tool that
// fills or copies its whole 1 GiB memory in one instruction, 256 times a
// loop iteration, ends at its 1 s timeout, and the other plugin answers
// meanwhile. Before, a bulk operation took a fixed 64 from the budget
// whatever its length: the loop checked its deadline once every 256 GiB
// moved, and a call ran on for many seconds, outside the Go scheduler.
func TestWholeMemoryBulkOpsEndAtDeadline(t *testing.T) {
	const pages = 16384 - 64 // 1 GiB less what the plugin starts with
	for name, op := range map[string]string{
		"memory.fill": `(memory.fill (i32.const 0) (i32.const 1) (i32.mul (memory.size) (i32.const 65536)))`,
		"memory.copy": `(memory.copy (i32.const 1) (i32.const 0) (i32.sub (i32.mul (memory.size) (i32.const 65536)) (i32.const 1)))`,
	} {
		t.Run(name, func(t *testing.T) {
			p := testutil.WATPlugin{Tools: oneTool,
				CallTool: fmt.Sprintf(`(drop (memory.grow (i32.const %d))) (loop %s (br 0)) (i32.const 0)`, pages, strings.Repeat(op, 256))}
			cfg := strings.Replace(hostileConfig(t, p, "memory_mb = 1024"), `timeout = "500ms"`, `timeout = "1s"`, 1)
			s := start(t, cfg)
			callText(t, s.session, "echo", map[string]any{"text": "warm"})
			done := make(chan time.Duration, 1)
			var attackErr error
			go func() {
				err, took := attack(t, s)
				attackErr = err
				done <- took
			}()
			// The other plugin answers while the bulk operations run.
			for i := range 3 {
				res, text := callText(t, s.session, "echo", map[string]any{"text": fmt.Sprint("meanwhile ", i)})
				if res.IsError || text != fmt.Sprint("meanwhile ", i) {
					t.Fatalf("echo during the attack = %q", text)
				}
			}
			took := <-done
			if attackErr == nil || !strings.Contains(attackErr.Error(), "timeout") {
				t.Fatalf("attack: %v, want the timeout", attackErr)
			}
			// Generous: the call ends within milliseconds of its deadline
			// now; before it ran on for 256 whole-memory operations.
			if took > 6*time.Second {
				t.Errorf("the call ended %v after it began (timeout 1s)", took)
			}
			t.Logf("%s of the whole memory in a loop: the call ended after %v (timeout 1s)", name, took)
			afterFault(t, s)
		})
	}
}

// recursion is a WAT function $r that recurses n deep with 300 locals
// live across each call (about 10 KB of wazero stack a frame), returning
// early through return at the bottom.
func recursion() string {
	var b strings.Builder
	b.WriteString(`(func $r (param $n i32) (result i32)`)
	for i := range 300 {
		fmt.Fprintf(&b, " (local $a%d i32)", i)
	}
	b.WriteString("\n (if (i32.eqz (local.get $n)) (then (return (i32.const 0))))\n")
	for i := range 300 {
		fmt.Fprintf(&b, " (local.set $a%d (i32.add (local.get $n) (i32.const %d)))", i, i)
	}
	b.WriteString("\n (call $r (i32.sub (local.get $n) (i32.const 1)))\n")
	for i := range 300 {
		fmt.Fprintf(&b, " (local.get $a%d) i32.add", i)
	}
	b.WriteString(")")
	return b.String()
}

// heapSampler records the largest Go heap in use while it runs.
func heapSampler() (stop func() uint64) {
	var peak atomic.Uint64
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-quit:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	return func() uint64 { close(quit); wg.Wait(); return peak.Load() }
}

// TestDeepRecursionHitsTheStackLimit (issue 25, item 4): 16 concurrent
// calls of a plugin with memory_mb = 4 recursing 2,500 frames deep each
// fail with the stack limit, and the host's heap stays bounded; a call 20
// deep still works. Before, wazero grew each call's stack on the Go heap
// to what it needed (here ~25 MB an instance, doubled as it grew) and the
// idle instances kept it.
func TestDeepRecursionHitsTheStackLimit(t *testing.T) {
	deep := testutil.WATPlugin{Tools: oneTool, Fields: recursion(),
		CallTool: `(drop (call $r (i32.const 2500)))` + outputEmpty}
	shallow := testutil.WATPlugin{Tools: `{"tools":[{"name":"shallow","inputSchema":{"type":"object"}}]}`,
		Fields: recursion(), CallTool: `(drop (call $r (i32.const 20)))` + outputEmpty}
	cfg := `
[[plugin]]
name = "deep"
path = "` + deep.Build(t) + `"
timeout = "20s"
memory_mb = 4
max_instances = 16

[[plugin]]
name = "shallow"
path = "` + shallow.Build(t) + `"
memory_mb = 4

[[plugin]]
name = "hello"
path = "{hello}"
`
	s := start(t, cfg)
	if res, _ := callText(t, s.session, "shallow", map[string]any{}); res.IsError {
		t.Fatalf("a call 20 deep failed: %v", res.Content)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	stop := heapSampler()
	errs := make(chan error, 16)
	for range 16 {
		go func() { err, _ := attack(t, s); errs <- err }()
	}
	for range 16 {
		err := <-errs
		if err == nil || !strings.Contains(err.Error(), "call stack exceeds 8192 KiB (stack_kb)") {
			t.Errorf("a call 2,500 deep: %v, want the stack limit", err)
		}
	}
	peak := stop()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("Go heap in use: %d MiB before, %d MiB at most during 16 calls 2,500 deep, %d MiB after",
		before>>20, peak>>20, ms.HeapInuse>>20)
	// Bounded: each instance's stack stays near its 8 MiB estimate (the
	// instances themselves take a few MiB each). Before: ~25 MB of stack
	// an instance, grown by doubling, kept by the idle instances.
	if peak > before+256<<20 {
		t.Errorf("the Go heap grew by %d MiB during the calls", (peak-before)>>20)
	}
	if res, _ := callText(t, s.session, "shallow", map[string]any{}); res.IsError {
		t.Fatalf("a call 20 deep after the attack failed: %v", res.Content)
	}
	afterFault(t, s)
}
