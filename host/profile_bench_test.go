package host_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// BenchmarkProfileToolsList lists the tools of a 30-tool profile (3 of
// the 100 plugins of hundredPluginsConfig, 1,000 tools in all) through a
// go-sdk client connected in memory to the profile's server; the whole
// host's list (/mcp, 10 pages of 100) runs in the same benchmark as the
// baseline. One op is one whole list. Goal (issue 31): p50 < 1 ms for the
// profile.
func BenchmarkProfileToolsList(b *testing.B) {
	cfg := hundredPluginsConfig(b, benchCacheDir(b)) + "[[profile]]\nname = \"thirty\"\ntools = [\"p0[0-2]_*\"]\n"
	h := newBenchHost(b, cfg)
	for _, tc := range []struct {
		name   string
		server *mcp.Server
		want   int
	}{{"profile-30", h.ProfileServer("thirty"), 30}, {"all-1000", h.Server(), 1000}} {
		b.Run(tc.name, func(b *testing.B) {
			cs := connectInMemory(b, tc.server, "2025-11-25")
			ctx := context.Background()
			var lists []time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t := time.Now()
				n, cursor := 0, ""
				for {
					res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
					if err != nil {
						b.Fatal(err)
					}
					n += len(res.Tools)
					if cursor = res.NextCursor; cursor == "" {
						break
					}
				}
				lists = append(lists, time.Since(t))
				if n != tc.want {
					b.Fatalf("listed %d tools, want %d", n, tc.want)
				}
			}
			b.StopTimer()
			testutil.ReportPercentiles(b, lists, time.Millisecond/1000, "list-µs")
		})
	}
}

// BenchmarkProfileMemory reports what one more profile costs: the Go heap
// in use after a reload that adds 100 profiles of 30 tools each (renamed:
// each holds its own copies of the tool definitions' top level) to the
// 100-plugin host, less before, over 100. A profile holds an mcp.Server,
// its registrations and its view of the catalog; sessions are not
// counted. Run with -benchtime 1x. Goal (issue 31): < 1 MiB.
func BenchmarkProfileMemory(b *testing.B) {
	const profiles = 100
	base := hundredPluginsConfig(b, benchCacheDir(b))
	path := testutil.WriteConfig(b, base)
	h := newBenchHostAt(b, path)
	heap := func() uint64 {
		var m runtime.MemStats
		for range 3 {
			runtime.GC()
		}
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	var more strings.Builder
	for i := range profiles {
		first := (i * 3) % 100
		fmt.Fprintf(&more, "[[profile]]\nname = \"prof%03d\"\ntools = [\"p%02d_*\", \"p%02d_*\", \"p%02d_*\"]\nprefix = \"x%d_\"\n", i, first, (first+1)%100, (first+2)%100, i)
	}
	for range b.N {
		if err := h.Reload(context.Background()); err != nil { // same config: settles the catalog
			b.Fatal(err)
		}
		before := heap()
		if err := os.WriteFile(path, []byte(base+more.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := h.Reload(context.Background()); err != nil {
			b.Fatal(err)
		}
		after := heap()
		if n := len(h.ProfileNames()); n != profiles {
			b.Fatalf("%d profiles served, want %d", n, profiles)
		}
		b.ReportMetric(float64(int64(after)-int64(before))/profiles/1024, "KiB/profile")
		if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := h.Reload(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
