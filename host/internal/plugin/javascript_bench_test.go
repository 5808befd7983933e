package plugin

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

// The JavaScript engine (host/internal/jsengine, QuickJS) as plugins/js-hello runs
// on it, measured the way BenchmarkActivation and
// BenchmarkIdleInstanceMemory measure Go plugins (BENCHMARKS.md,
// "JavaScript plugins"):
//
//	go test -run '^$' -bench 'JS' -benchtime 20x ./host/internal/plugin/
//
// MCPHOST_JS_BENCH_WASM names another module to measure the same way in
// place of js-hello.wasm: one whose greet tool takes {"name"}, such as
// bench/plugins/gojajs (goja, the engine compared with QuickJS).

const jsGreetCall = `{"request":{"name":"greet","arguments":{"name":"you"}},"context":{"id":1,"_meta":{}}}`

func jsHelloWasm(b *testing.B) []byte {
	b.Helper()
	path := filepath.Join(testutil.RepoRoot(b), "plugins", "js-hello", "js-hello.wasm")
	if other := os.Getenv("MCPHOST_JS_BENCH_WASM"); other != "" {
		path = other
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("%v (build it with plugins/js-hello/build.sh)", err)
	}
	return wasm
}

func loadJS(b *testing.B, name string, wasm []byte, codes *CodeCache, instances int) *Plugin {
	b.Helper()
	p, err := Load(b.Context(), Options{
		Name: name, Wasm: wasm, Timeout: time.Minute, MemoryMB: 64, MaxInstances: instances,
		MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(b), Code: codes,
		HostFunctions: hostfn.Functions(name, hclog.NewNullLogger(), dropNotifier{}, nil, nil),
		IdleTimeout:   time.Hour,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// BenchmarkJSActivation is the first call to an idle JavaScript plugin:
// activation (the engine's code read from the on-disk cache, "alone", or
// kept through the release, "kept"), one instance (QuickJS's runtime and
// the plugin's module evaluated at its first call), one greet call.
func BenchmarkJSActivation(b *testing.B) {
	wasm := jsHelloWasm(b)
	for _, name := range []string{"alone", "kept"} {
		b.Run(name, func(b *testing.B) {
			var keep int64
			if name == "kept" {
				keep = 1 << 30
			}
			codes := NewCodeCache(keep)
			p := loadJS(b, "js", wasm, codes, 1)
			released := func(s CodeStats) bool {
				if name == "kept" {
					return s.Kept == 1
				}
				return s.Users == 0
			}
			for b.Loop() {
				b.StopTimer()
				p.Idle()
				for !released(codes.Stats()) {
					time.Sleep(100 * time.Microsecond)
				}
				b.StartTimer()
				if _, err := p.Call(b.Context(), abi.ExportCallTool, []byte(jsGreetCall)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(codes.Stats().Loads), "code-loads")
		})
	}
}

// BenchmarkJSWarmCall is a call of the trivial greet tool on a warm
// instance (QuickJS started, the plugin evaluated).
func BenchmarkJSWarmCall(b *testing.B) {
	p := loadJS(b, "js", jsHelloWasm(b), NewCodeCache(0), 1)
	in := []byte(jsGreetCall)
	if _, err := p.Call(b.Context(), abi.ExportCallTool, in); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := p.Call(b.Context(), abi.ExportCallTool, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSInstanceMemory is BenchmarkIdleInstanceMemory for
// plugins/js-hello: the resident memory and Go heap of each extra idle
// instance that has served a call (so its QuickJS runtime is started).
func BenchmarkJSInstanceMemory(b *testing.B) {
	const instances = 16
	wasm := jsHelloWasm(b)
	ctx := context.Background()
	input := []byte(jsGreetCall)
	var rssSum, heapSum float64
	for range b.N {
		p := loadJS(b, "js", wasm, NewCodeCache(0), instances)
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
		extra := float64(instances - 1)
		rssSum += float64(rssAfter-rssBefore) / extra
		heapSum += float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / extra
		p.Close(ctx)
	}
	n := float64(b.N)
	b.ReportMetric(rssSum/n/1024, "rss-KiB/instance")
	b.ReportMetric(heapSum/n/(1<<20), "heapinuse-MiB/instance")
}
