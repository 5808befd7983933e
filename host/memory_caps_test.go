//go:build linux

package host_test

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestDiscardedInstancesReturnTheirMemory (Linux, where memories are
// reserved outside the Go heap): a plugin whose every call
// fills its memory cap and traps holds memory near its cap × instances, not
// a cap more for every discarded instance until the garbage collector runs.
// RSS is read without collecting garbage first: memory a discarded
// instance held must be back with the system as soon as the call has failed.
func TestDiscardedInstancesReturnTheirMemory(t *testing.T) {
	const capMiB, calls = 128, 50
	s := start(t, capsConfig("memory_mb = 128\n"))
	fill := func() {
		t.Helper()
		if _, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "alloc", Arguments: map[string]any{}}); err == nil {
			t.Fatal("alloc succeeded")
		}
	}
	fill() // reach the steady state: an instance made to replace a discarded one
	testutil.SettledMemStats()
	before := testutil.RSS(t)
	peak := before
	begin := time.Now()
	for range calls {
		fill()
		peak = max(peak, testutil.RSS(t))
	}
	after := testutil.RSS(t)
	t.Logf("RSS before %d MiB, after %d traps at the %d MiB cap %d MiB (peak %d MiB), %v per call",
		before>>20, calls, capMiB, after>>20, peak>>20, time.Since(begin)/calls)
	if growth := after - before; growth > 3*capMiB<<20 {
		t.Errorf("RSS grew by %d MiB over %d discarded instances, want under 3 × the %d MiB cap", growth>>20, calls, capMiB)
	}
	otherPluginAnswers(t, s.session)
}

// BenchmarkDiscardedInstancesRSS measures the host's RSS around 100 calls
// that each discard their instance (memory_mb = 128, two instances): the
// faulty plugin's alloc (fills the cap, then traps) and trap (traps at
// once). RSS is read before (garbage collected and returned to the
// system first), after the 100th call and at its highest after any call,
// with no collection in between. Run with -benchtime 1x.
func BenchmarkDiscardedInstancesRSS(b *testing.B) {
	for _, tool := range []string{"alloc", "trap"} {
		b.Run(tool, func(b *testing.B) {
			for range b.N {
				s := start(b, capsConfig("memory_mb = 128\n"))
				call := func() {
					if _, err := s.session.CallTool(b.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}); err == nil {
						b.Fatalf("%s succeeded", tool)
					}
				}
				call()
				testutil.SettledMemStats()
				before := testutil.RSS(b)
				peak := before
				for range 100 {
					call()
					peak = max(peak, testutil.RSS(b))
				}
				after := testutil.RSS(b)
				b.ReportMetric(float64(before>>20), "rss-before-MiB")
				b.ReportMetric(float64(after>>20), "rss-after-MiB")
				b.ReportMetric(float64(peak>>20), "rss-peak-MiB")
			}
		})
	}
}
