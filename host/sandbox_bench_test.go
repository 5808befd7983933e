package host_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkRunawayOvershoot measures how long after its deadline a plugin
// stuck in a loop is stopped: each iteration calls the faulty plugin's spin
// (an endless loop) under a 50 ms timeout through an in-memory client, and
// reports how far past 50 ms the error came back, p50 and p99 over at least
// 100 calls. Run: go test -run '^$' -bench RunawayOvershoot ./host/
func BenchmarkRunawayOvershoot(b *testing.B) {
	const timeout = 50 * time.Millisecond
	s := start(b, withTimeout("50ms")+"breaker_failures = 0\n")
	calls := max(b.N, 100)
	overshoots := make([]time.Duration, 0, calls)
	b.ResetTimer()
	for range calls {
		begin := time.Now()
		_, err := s.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "spin", Arguments: map[string]any{}})
		took := time.Since(begin)
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			b.Fatalf("spin: %v", err)
		}
		overshoots = append(overshoots, took-timeout)
	}
	b.StopTimer()
	slices.Sort(overshoots)
	pct := func(p float64) float64 {
		return float64(overshoots[int(p*float64(len(overshoots)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "overshoot-p50-ms")
	b.ReportMetric(pct(0.99), "overshoot-p99-ms")
	b.ReportMetric(float64(len(overshoots)), "calls")
}
