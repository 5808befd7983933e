package bridge

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// manyTools is list_tools' output with n tools: identical minimal schemas
// ({"type":"object"}), or small schemas that differ from tool to tool.
func manyTools(n int, distinct bool) string {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		schema := `{"type":"object"}`
		if distinct {
			schema = fmt.Sprintf(`{"type":"object","properties":{"q%d":{"type":"string","description":"what to look for"},"limit":{"type":"integer","minimum":1}},"required":["q%d"]}`, i, i)
		}
		fmt.Fprintf(&b, `{"name":"tool%d","description":"does thing %d","inputSchema":%s}`, i, i, schema)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkListTools measures checking a listing of many tools, per tool:
// time, bytes allocated, and bytes still live once listed (what a tool
// costs for as long as the plugin is loaded). Run with -benchmem.
func BenchmarkListTools(b *testing.B) {
	const n = 10_000
	for _, distinct := range []bool{false, true} {
		name := "identical-schemas"
		if distinct {
			name = "distinct-schemas"
		}
		b.Run(name, func(b *testing.B) {
			out := fakeCaller{manyTools(n, distinct)}
			lim := Limits{MaxItems: n}
			var live uint64
			for i := 0; b.Loop(); i++ {
				var before, after runtime.MemStats
				if i == 0 {
					runtime.GC()
					runtime.ReadMemStats(&before)
				}
				tools, refused, err := ListTools(context.Background(), out, lim)
				if err != nil || len(refused) > 0 || len(tools) != n {
					b.Fatal(err, refused)
				}
				if i == 0 {
					runtime.GC()
					runtime.ReadMemStats(&after)
					live = after.HeapAlloc - before.HeapAlloc
					runtime.KeepAlive(tools)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/tool")
			b.ReportMetric(float64(live)/n, "live-B/tool")
		})
	}
}
