package testutil

import (
	"slices"
	"testing"
	"time"
)

// ReportPercentiles reports the 50th and 99th percentiles of lat, in units
// of unit, as the metrics p50-suffix and p99-suffix. It sorts lat.
func ReportPercentiles(b *testing.B, lat []time.Duration, unit time.Duration, suffix string) {
	b.Helper()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(unit) }
	b.ReportMetric(pct(0.50), "p50-"+suffix)
	b.ReportMetric(pct(0.99), "p99-"+suffix)
}

// TimeCalls makes one call to warm up, then b.N timed calls, and reports
// their allocations and latency percentiles in µs (p50-µs, p99-µs). A call
// that fails ends the benchmark.
func TimeCalls(b *testing.B, call func() error) {
	b.Helper()
	if err := call(); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		begin := time.Now()
		err := call()
		lat = append(lat, time.Since(begin))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	ReportPercentiles(b, lat, time.Microsecond, "µs")
}
