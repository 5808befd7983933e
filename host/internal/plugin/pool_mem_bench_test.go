package plugin

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

type nopNotifier struct{}

func (nopNotifier) ResourceUpdated(context.Context, string)     {}
func (nopNotifier) ListChanged(context.Context, string, string) {}

// BenchmarkIdleInstanceMemory measures what one more idle instance of a
// plugin costs, for plugins/everything (a 3.5 MB Go module, memory_mb =
// 128): 16 instances are taken from the pool, each serves one echo call (so
// the Go guest's runtime is initialised, as in any instance that has served
// a call), and all are handed back idle. Reported per extra instance:
//   - rss-KiB: resident memory (/proc/self/statm), the memory an instance
//     really occupies;
//   - heapinuse-MiB: the Go heap in use; on Linux the Wasm memories are
//     outside it (memory_linux.go), elsewhere it counts each at its
//     reserved capacity (WithMemoryCapacityFromMax), touched or not;
//
// Run with -benchtime 1x (or a few x): one iteration loads the plugin.
func BenchmarkIdleInstanceMemory(b *testing.B) {
	const instances = 16
	wasm, err := os.ReadFile(testutil.GoPlugin(b, "plugins/everything"))
	if err != nil {
		b.Fatal(err)
	}
	cacheDir := b.TempDir()
	ctx := context.Background()
	load := func() *Plugin {
		p, err := Load(ctx, Options{
			Name: "everything", Wasm: wasm, Timeout: 30 * time.Second, MemoryMB: 128,
			MaxInstances: instances, MaxOutputBytes: 4 << 20, CacheDir: cacheDir,
			HostFunctions: hostfn.Functions("everything", hclog.NewNullLogger(), nopNotifier{}, nil, nil),
		})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	load().Close(ctx) // fill the compilation cache
	input := []byte(`{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{}}`)
	var rssSum, heapSum float64
	for range b.N {
		p := load() // one instance, idle, from the load
		before, rssBefore := testutil.SettledMemStats(), testutil.RSS(b)
		held := make([]*instance, 0, instances)
		for range instances {
			inst, err := p.act.pool.get(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := inst.callExport(ctx, abi.ExportCallTool, input); err != nil {
				b.Fatal(err)
			}
			held = append(held, inst)
		}
		for _, inst := range held {
			p.act.pool.put(inst, true)
		}
		after, rssAfter := testutil.SettledMemStats(), testutil.RSS(b)
		extra := float64(instances - 1) // the load's instance was reused
		rssSum += float64(rssAfter-rssBefore) / extra
		heapSum += float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / extra
		p.Close(ctx)
	}
	n := float64(b.N)
	b.ReportMetric(rssSum/n/1024, "rss-KiB/instance")
	b.ReportMetric(heapSum/n/(1<<20), "heapinuse-MiB/instance")
}
