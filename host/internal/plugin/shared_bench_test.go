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

// BenchmarkActivation measures the first call to an idle plugins/hello:
// its activation (compile from the on-disk cache, or find the code held by
// another plugin of the same module), one instance, one call, then its
// release. "held": another plugin of the module is active throughout.
//
//	go test -run '^$' -bench Activation -benchtime 20x ./host/internal/plugin/
func BenchmarkActivation(b *testing.B) {
	wasm := helloWasmB(b)
	for _, held := range []bool{false, true} {
		name := "alone"
		if held {
			name = "held"
		}
		b.Run(name, func(b *testing.B) {
			codes := NewCodeCache()
			load := func(name string) *Plugin {
				p, err := Load(b.Context(), Options{
					Name: name, Wasm: wasm, Timeout: time.Minute, MemoryMB: 64, MaxInstances: 1,
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
			if held {
				load("keeper")
			}
			p := load("hello")
			users := 0
			if held {
				users = 1
			}
			for b.Loop() {
				b.StopTimer()
				p.Idle() // and wait for the release to end
				for codes.Stats().Users != users {
					time.Sleep(100 * time.Microsecond)
				}
				b.StartTimer()
				if _, err := p.Call(b.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(codes.Stats().Loads), "code-loads")
		})
	}
}

func helloWasmB(b *testing.B) []byte {
	b.Helper()
	wasm, err := os.ReadFile(testutil.GoPlugin(b, "plugins/hello"))
	if err != nil {
		b.Fatal(err)
	}
	return wasm
}
