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
// its activation, one instance, one call, then its release. "alone": the
// code is read from the on-disk cache (no code kept for released
// plugins); "held": another plugin of the module is active throughout and
// holds the code; "kept": the plugin kept its compiled module through
// its release (kept.go), so that its activation only instantiates.
//
//	go test -run '^$' -bench Activation -benchtime 20x ./host/internal/plugin/
func BenchmarkActivation(b *testing.B) {
	wasm := helloWasmB(b)
	for _, name := range []string{"alone", "held", "kept"} {
		b.Run(name, func(b *testing.B) {
			var keep int64
			if name == "kept" {
				keep = 1 << 30
			}
			codes := NewCodeCache(keep)
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
			if name == "held" {
				load("keeper")
			}
			p := load("hello")
			// released: the release has ended.
			released := func(s CodeStats) bool {
				switch name {
				case "held":
					return s.Users == 1
				case "kept":
					return s.Kept == 1
				}
				return s.Users == 0
			}
			for b.Loop() {
				b.StopTimer()
				p.Idle() // and wait for the release to end
				for !released(codes.Stats()) {
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
