package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/host/internal/interrupt"
	"github.com/mcphost/mcphost/host/internal/plugin"
	"github.com/mcphost/mcphost/internal/testutil"
)

// Benchmarks of the Wasm hop: one call into plugins/everything's echo tool
// on a pooled (warm) instance, without any MCP transport.
//
//	go test -run '^$' -bench . ./host/internal/plugin/

// echoInput is the ABI envelope the host sends for tools/call echo
// {"text": "hello"} (what bridge.CallTool builds for that request).
var echoInput = []byte(`{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{}}`)

// loadEverything loads plugins/everything with up to instances instances,
// its compiled code in a per-test cache directory that one warm-up load has
// filled (so b's timer never includes compilation).
func loadEverything(b *testing.B, instances int) *plugin.Plugin {
	b.Helper()
	return loadPlugin(b, "everything", testutil.GoPlugin(b, "plugins/everything"), instances)
}

// loadPlugin loads the Wasm file at path as mcphost does, with up to
// instances instances, and closes it when b ends.
func loadPlugin(b *testing.B, name, path string, instances int) *plugin.Plugin {
	b.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	p, err := plugin.Load(b.Context(), plugin.Options{
		Name:           name,
		Wasm:           wasm,
		Timeout:        30 * time.Second,
		MemoryMB:       128,
		MaxInstances:   instances,
		MaxOutputBytes: 4 << 20,
		CacheDir:       benchCacheDir(b),
		HostFunctions:  hostfn.Functions(name, hclog.NewNullLogger(), nopNotifier{}, nil, nil),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// nopNotifier drops the notifications plugins send (echo sends none).
type nopNotifier struct{}

func (nopNotifier) ResourceUpdated(context.Context, string)     {}
func (nopNotifier) ListChanged(context.Context, string, string) {}

var (
	cacheOnce sync.Once
	cacheDir  string
)

// benchCacheDir is one compilation cache shared by this process's
// benchmarks (the first load compiles, the others read it).
func benchCacheDir(b *testing.B) string {
	cacheOnce.Do(func() {
		d, err := os.MkdirTemp("", "mcphost-bench-cache-")
		if err != nil {
			b.Fatal(err)
		}
		cacheDir = d
	})
	return cacheDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cacheDir != "" {
		os.RemoveAll(cacheDir)
	}
	os.Exit(code)
}

// Envelopes of tools/call echo as bridge.CallTool builds them (captured
// from go-sdk clients connected in memory): the plugin decodes all of it.
var (
	// stateful: a 2025-11-25 session; the client's capabilities come from
	// its initialize request.
	envelopeStateful = []byte(`{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{"id":7821721795495376,"_meta":{},"clientCapabilities":{"roots":{"listChanged":true}}}}`)
	// stateless: a 2026-07-28 request carries protocol version, client info
	// and capabilities in its _meta; the envelope has the _meta once, in
	// the context, and the capabilities once, in clientCapabilities (ABI
	// draft 6; until then it was 560 bytes: _meta twice, the capabilities
	// three times).
	envelopeStateless = []byte(`{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{"id":6229756520369256,"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"clientCapabilities":{"roots":{"listChanged":true}}}}`)
)

// BenchmarkWasmHop is one plugin.Call of call_tool (echo) on a warm pooled
// instance: the pool, the deadline, Extism's input/output copies, the
// guest's JSON decoding and dispatch. Goal (issue #9): p50 <= 20 µs.
//   - minimal: the smallest envelope (no _meta, no capabilities);
//   - stateful, stateless: the envelopes the host really sends (above);
//   - text=4KiB: a 4 KiB text in and out (the guest's JSON work grows
//     with the text, and with it the termination checks, see
//     BenchmarkExtismFloor);
//   - wat-ping: plugins/wat's ping tool, a guest with no runtime and no
//     JSON parser: what the hop costs the host (pool, deadline, Extism)
//     when the guest does almost nothing. Skipped when plugins/wat/wat.wasm
//     has not been built.
//
// With MCPHOST_HOP_BASELINE set to another build of plugins/everything
// (say, of an older commit), each echo case runs on it too, as
// <case>/baseline beside <case>/now, so that a change to the SDK is
// measured against its baseline in one run.
func BenchmarkWasmHop(b *testing.B) {
	p := loadEverything(b, 1)
	var base *plugin.Plugin
	if path := os.Getenv("MCPHOST_HOP_BASELINE"); path != "" {
		base = loadPlugin(b, "everything", path, 1)
	}
	ctx := context.Background()
	big := strings.Repeat("x", 4096)
	for _, tc := range []struct {
		name  string
		input []byte
		want  string
	}{
		{"minimal", echoInput, `"hello"`},
		{"stateful", envelopeStateful, `"hello"`},
		{"stateless", envelopeStateless, `"hello"`},
		{"text=4KiB", []byte(`{"request":{"name":"echo","arguments":{"text":"` + big + `"}},"context":{}}`), big},
		{"wat-ping", []byte(`{"request":{"name":"ping","arguments":{}},"context":{}}`), `pong`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := p
			if tc.name == "wat-ping" {
				wat := filepath.Join(testutil.RepoRoot(b), "plugins", "wat", "wat.wasm")
				if _, err := os.Stat(wat); err != nil {
					b.Skip("plugins/wat/wat.wasm not built")
				}
				p = loadPlugin(b, "wat", wat, 1)
			}
			check := func(out []byte) {
				if !strings.Contains(string(out), tc.want) {
					b.Fatalf("echo returned %.200s", out)
				}
			}
			run := func(b *testing.B, p *plugin.Plugin) {
				var out []byte
				testutil.TimeCalls(b, func() (err error) {
					out, err = p.Call(ctx, abi.ExportCallTool, tc.input)
					return err
				})
				check(out)
				b.ReportMetric(float64(len(tc.input)), "in-B")
			}
			if base == nil || tc.name == "wat-ping" {
				run(b, p)
				return
			}
			b.Run("baseline", func(b *testing.B) { run(b, base) })
			b.Run("now", func(b *testing.B) { run(b, p) })
		})
	}
}

// interruptMode is how a benchmark's instance can be stopped.
type interruptMode string

const (
	// instrumented: what plugin.Load does (package interrupt).
	instrumented interruptMode = "instrumented"
	// wazeroChecks: wazero's WithCloseOnContextDone, what mcphost did before.
	wazeroChecks interruptMode = "wazero-checks"
	// unstoppable: no checks at all. Not something mcphost does: the floor
	// the other two are compared against.
	unstoppable interruptMode = "unstoppable"
)

// extismInstance compiles wasm as mcphost does (plugin.Load's runtime
// config, the compilation cache of this process's benchmarks) with the
// interrupt checks of mode, and returns one instance, closed when b ends.
func extismInstance(b *testing.B, wasm []byte, mode interruptMode, funcs []extism.HostFunction) *extism.Plugin {
	b.Helper()
	ctx := context.Background()
	if mode == instrumented {
		var err error
		if wasm, err = interrupt.Instrument(wasm, interrupt.Limits{TableElements: 1 << 20}); err != nil {
			b.Fatal(err)
		}
		funcs = append(slices.Clip(funcs), plugin.InterruptCheck())
	}
	cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(benchCacheDir(b), string(mode)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cache.Close(ctx) })
	compiled, err := extism.NewCompiledPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
		extism.PluginConfig{
			RuntimeConfig: wazero.NewRuntimeConfig().WithCloseOnContextDone(mode == wazeroChecks).WithCompilationCache(cache).
				WithMemoryLimitPages(128 * 16).WithMemoryCapacityFromMax(true),
			EnableWasi: true,
		}, funcs)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { compiled.Close(ctx) })
	inst, err := compiled.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: wazero.NewModuleConfig()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { inst.Close(ctx) })
	return inst
}

// BenchmarkExtismFloor decomposes the hop: the same plugin called through
// Extism directly, without mcphost's pool or deadline, under each way of
// stopping a call (interruptMode).
//   - abi_version: an export with no input, no output and no JSON (Extism's
//     fixed cost per call: reset, input_set, output and error lookups, plus
//     entering the Go guest's runtime);
//   - call_tool: the echo call (adds the guest's JSON work and the output
//     copied through Extism's kernel).
//
// wazero-checks is what wazero 1.12 costs (it calls into Go at every loop
// back-edge of the guest, wazero issue #2466), instrumented what mcphost
// does instead, unstoppable the floor.
//
// The plugin is built with -tags mcphost_kernel_io: input_read and
// output_write need the host's call state, which Extism alone does not
// keep, so the guest moves its input and output through the kernel here.
func BenchmarkExtismFloor(b *testing.B) {
	wasm, err := os.ReadFile(testutil.GoPlugin(b, "plugins/everything", "mcphost_kernel_io"))
	if err != nil {
		b.Fatal(err)
	}
	funcs := hostfn.Functions("everything", hclog.NewNullLogger(), nopNotifier{}, nil, nil)
	for _, mode := range []interruptMode{instrumented, wazeroChecks, unstoppable} {
		inst := extismInstance(b, wasm, mode, funcs)
		for _, tc := range []struct {
			name, export string
			input        []byte
		}{
			{"abi_version", abi.VersionExport, nil},
			{"call_tool", abi.ExportCallTool, echoInput},
		} {
			b.Run(tc.name+"/"+string(mode), func(b *testing.B) {
				benchExtismCall(b, inst, tc.export, tc.input)
			})
		}
	}
}

// benchExtismCall calls export with input on inst b.N times and reports
// the latencies.
func benchExtismCall(b *testing.B, inst *extism.Plugin, export string, input []byte) {
	testutil.TimeCalls(b, func() error {
		_, _, err := inst.CallWithContext(context.Background(), export, input)
		return err
	})
}

// BenchmarkBridgeCallTool is what the host does for one tools/call beyond
// go-sdk: validate the arguments against the tool's schema, build the
// envelope, the Wasm hop, decode the result as untrusted JSON.
func BenchmarkBridgeCallTool(b *testing.B) {
	p := loadEverything(b, 1)
	ctx := context.Background()
	tools, _, err := bridge.ListTools(ctx, p, bridge.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(t bridge.Tool) bool { return t.MCP.Name == "echo" })
	if i < 0 {
		b.Fatal("no echo tool")
	}
	tool := tools[i]
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}}
	testutil.TimeCalls(b, func() error {
		res, err := bridge.CallTool(ctx, p, tool, req)
		if err == nil && res.IsError {
			err = fmt.Errorf("CallTool = %v", res)
		}
		return err
	})
}

// BenchmarkCallers runs b.N echo calls split between N goroutines on one
// plugin with two instances. calls/s for callers=2 over callers=1 is the
// speed-up from the pool (goal: >= 1.8x on 2 cores); callers=4 shows
// callers queueing for the 2 instances. cores is the CPU time the process
// used over the wall time (how many cores it got: on a shared machine,
// fewer than callers), cpu-µs/call the CPU time of one call: if it does
// not grow with callers, nothing serializes them and the speed-up is
// bounded only by the cores the machine gives.
func BenchmarkCallers(b *testing.B) {
	for _, callers := range []int{1, 2, 4} {
		b.Run("callers="+strconv.Itoa(callers), func(b *testing.B) {
			p := loadEverything(b, 2)
			ctx := context.Background()
			// Warm both instances.
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					for range 50 {
						if _, err := p.Call(ctx, abi.ExportCallTool, echoInput); err != nil {
							b.Error(err)
						}
					}
				})
			}
			wg.Wait()
			b.ResetTimer()
			cpuBefore := testutil.CPUTime()
			begin := time.Now()
			for c := range callers {
				n := b.N / callers
				if c < b.N%callers {
					n++
				}
				wg.Go(func() {
					for range n {
						if _, err := p.Call(ctx, abi.ExportCallTool, echoInput); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			wall, cpu := time.Since(begin), testutil.CPUTime()-cpuBefore
			b.ReportMetric(float64(b.N)/wall.Seconds(), "calls/s")
			if cpu > 0 {
				b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/call")
			}
		})
	}
}

// BenchmarkHopFloor decomposes the hop with bench/plugins/hopfloor, whose
// exports each do one more step of what the Go SDK's call_tool does, called
// through Extism directly (no pool, no deadline), for a 5-byte and a
// 4 KiB text. Every step runs instrumented, as mcphost runs it; the last,
// decode_encode, also under wazero's checks and unstoppable (see
// BenchmarkExtismFloor).
func BenchmarkHopFloor(b *testing.B) {
	wasm, err := os.ReadFile(testutil.GoPlugin(b, "bench/plugins/hopfloor"))
	if err != nil {
		b.Fatal(err)
	}
	insts := map[interruptMode]*extism.Plugin{}
	for _, mode := range []interruptMode{instrumented, wazeroChecks, unstoppable} {
		insts[mode] = extismInstance(b, wasm, mode, nil)
	}
	for _, size := range []struct {
		name  string
		input []byte
	}{
		{"hello", echoInput},
		{"4KiB", []byte(`{"request":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 4096) + `"}},"context":{}}`)},
	} {
		for _, step := range []string{"nothing", "input_only", "raw", "decode", "decode_encode"} {
			modes := []interruptMode{instrumented}
			if step == "decode_encode" {
				modes = append(modes, wazeroChecks, unstoppable)
			}
			for _, mode := range modes {
				b.Run(size.name+"/"+step+"/"+string(mode), func(b *testing.B) {
					benchExtismCall(b, insts[mode], step, size.input)
				})
			}
		}
	}
}
