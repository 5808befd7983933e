package host_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

// BenchmarkReloadLatency measures the time from a new plugin file being
// renamed into place to the client receiving tools/list_changed, through
// the file watcher (50 ms debounce included). It reports p50 and p99 over
// at least 50 reloads. Run: go test -run '^$' -bench ReloadLatency ./host/
func BenchmarkReloadLatency(b *testing.B) {
	f := newReloadFixture(b, true)
	wasm := filepath.Join(f.dir, "versioned.wasm")
	builds := []string{
		testutil.GoPlugin(b, "testdata/plugins/versioned", "v2"),
		testutil.GoPlugin(b, "testdata/plugins/versioned"),
	}
	reloads := max(b.N, 50)
	latencies := make([]time.Duration, 0, reloads)
	b.ResetTimer()
	for i := range reloads {
		begin := time.Now()
		copyFile(b, builds[i%2], wasm) // v1 <-> v2 adds or removes a tool
		select {
		case <-f.toolsChg:
			latencies = append(latencies, time.Since(begin))
		case <-time.After(30 * time.Second):
			b.Fatalf("reload %d: no tools/list_changed", i)
		}
		// Let the watcher settle so each reload is measured alone.
		time.Sleep(20 * time.Millisecond)
	}
	b.StopTimer()
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	b.ReportMetric(float64(pct(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(len(latencies)), "reloads")
}
