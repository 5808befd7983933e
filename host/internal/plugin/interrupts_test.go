package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/host/internal/interrupt"
	"github.com/mcphost/mcphost/internal/testutil"
)

// TestRunawayCallIsStoppedEitherWay runs the faulty plugin's spin tool,
// which loops forever, instrumented (what Load does) and on the fallback
// for modules the instrumentation refuses (wazero's own checks). Either
// way the call times out and the next call works.
func TestRunawayCallIsStoppedEitherWay(t *testing.T) {
	wasm, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	refuse := func([]byte, interrupt.Limits) ([]byte, error) { return nil, interrupt.ErrUnsupported }
	for _, tc := range []struct {
		name       string
		instrument func([]byte, interrupt.Limits) ([]byte, error)
		fallback   bool
	}{
		{"instrumented", nil, false},
		{"wazero checks", refuse, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			p, err := Load(t.Context(), Options{
				Name: "faulty", Wasm: wasm, Timeout: 300 * time.Millisecond, MemoryMB: 48,
				MaxInstances: 1, MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t),
				Logger:        hclog.New(&hclog.LoggerOptions{Output: &log}),
				HostFunctions: hostfn.Functions("faulty", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
				instrument:    tc.instrument,
				WazeroChecks:  tc.fallback,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close(t.Context()) })

			begin := time.Now()
			_, err = p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"spin","arguments":{}},"context":{}}`))
			var ce *CallError
			if !errors.As(err, &ce) || ce.Kind != KindTimeout {
				t.Fatalf("spin: %v, want a timeout", err)
			}
			t.Logf("spin stopped after %v (timeout 300ms)", time.Since(begin))
			out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"echo","arguments":{"text":"after"}},"context":{}}`))
			if err != nil || !strings.Contains(string(out), "after") {
				t.Fatalf("echo after the timeout: %s, %v", out, err)
			}
			// The same on a warm instance, which is called without Extism's
			// CallWithContext (directcall.go).
			_, err = p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"spin","arguments":{}},"context":{}}`))
			if !errors.As(err, &ce) || ce.Kind != KindTimeout {
				t.Fatalf("spin on a warm instance: %v, want a timeout", err)
			}
			out, err = p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"echo","arguments":{"text":"after"}},"context":{}}`))
			if err != nil || !strings.Contains(string(out), "after") {
				t.Fatalf("echo after the second timeout: %s, %v", out, err)
			}
			if said := strings.Contains(log.String(), "running it under wazero's"); said != tc.fallback {
				t.Errorf("log says it fell back to wazero's checks: %v, want %v:\n%s", said, tc.fallback, log.String())
			}
		})
	}
}

// TestUninstrumentableModuleIsRefused: a module the rewrite cannot handle
// completely is refused, naming the way to opt into wazero's checks,
// unless the plugin's config opts in.
func TestUninstrumentableModuleIsRefused(t *testing.T) {
	wasm, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	refuse := func([]byte, interrupt.Limits) ([]byte, error) {
		return nil, fmt.Errorf("opcode 0xfd 0x8c not followed by 0x01: %w", interrupt.ErrUnsupported)
	}
	_, err = Load(t.Context(), Options{
		Name: "faulty", Wasm: wasm, Timeout: time.Second, MemoryMB: 48, MaxOutputBytes: 1 << 20,
		HostFunctions: hostfn.Functions("faulty", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
		instrument:    refuse,
	})
	if err == nil || !strings.Contains(err.Error(), "0xfd 0x8c") || !strings.Contains(err.Error(), `interrupt_checks = "wazero"`) {
		t.Fatalf("load: %v, want a refusal naming the cause and the opt-in", err)
	}
}

// loopingStart is a module whose start function, which runs when an
// instance is made, loops forever; it exports list_tools.
var loopingStart = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
	0x03, 0x02, 0x01, 0x00, // one function of that type
	0x07, 0x0e, 0x01, 0x0a, 'l', 'i', 's', 't', '_', 't', 'o', 'o', 'l', 's', 0x00, 0x00,
	0x08, 0x01, 0x00, // start: function 0
	0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop br 0 end
}

// TestLoopingStartFunctionIsStopped loads a module whose start function
// never returns: the load fails once the plugin's timeout has passed
// rather than hanging, instrumented and on wazero's checks.
func TestLoopingStartFunctionIsStopped(t *testing.T) {
	refuse := func([]byte, interrupt.Limits) ([]byte, error) { return nil, interrupt.ErrUnsupported }
	for name, instrument := range map[string]func([]byte, interrupt.Limits) ([]byte, error){"instrumented": nil, "wazero checks": refuse} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(t.Context(), Options{
				Name: "looping", Wasm: loopingStart, Timeout: 200 * time.Millisecond, MemoryMB: 16,
				MaxInstances: 1, MaxOutputBytes: 1 << 20, instrument: instrument, WazeroChecks: true,
			})
			if err == nil || !strings.Contains(err.Error(), "start function interrupted (timeout 200ms)") {
				t.Fatalf("load: %v, want the start function interrupted", err)
			}
		})
	}
}

// dropNotifier drops the notifications a plugin sends.
type dropNotifier struct{}

func (dropNotifier) ResourceUpdated(context.Context, string)     {}
func (dropNotifier) ListChanged(context.Context, string, string) {}

// wazeroCrasher makes wazero 1.12's validator panic (index out of range):
// function 0 calls function 2, whose type the module does not define.
// Found by FuzzInstrumentDifferential.
var wazeroCrasher = []byte("\x00asm\x01\x00\x00\x00\x01\b\x02`\x00\x01\x7f`\x00\x00\x03\x04\x03\x00\x010\x05\x03\x01\x000\x06\x06\x01\x7f\x01A0\v\a\x1f\x05\x03000\x00\x00\x040000\x00\x01\x040001\x00\x02\x03001\x03\x00\x010\x03\x00\nC\x03\x1d\x00\x03@A00\x000yA0C0000A0\x00A0xA0\x00\vA0\v\x1f\x00A0\xfd\f0000000000000000\xfdY\x01\xfd0\x04\x00\x10\x02\v\x03\x00X\v")

// TestModuleThatCrashesTheValidatorIsRefused: the rewrite refuses the
// module first, and were it to pass, the runtime's panic is an error.
func TestModuleThatCrashesTheValidatorIsRefused(t *testing.T) {
	identity := func(b []byte, _ interrupt.Limits) ([]byte, error) { return b, nil }
	for name, instrument := range map[string]func([]byte, interrupt.Limits) ([]byte, error){"rewrite": nil, "unchecked": identity} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(t.Context(), Options{Name: "crasher", Wasm: wazeroCrasher, Timeout: time.Second,
				MemoryMB: 16, MaxOutputBytes: 1 << 20, instrument: instrument})
			if err == nil {
				t.Fatal("loaded")
			}
			t.Log(err)
		})
	}
}

// nameBomb is a name section of 21 bytes whose local-name count made
// wazero 1.12 allocate 8 GiB while decoding it (found by
// FuzzInstrumentDifferential).
var nameBomb = []byte("\x00\x15\x04name0\x00\x020\xff\xff\xff\xff\x000\x0000000")

// TestNameSectionBombIsHarmless: a module carrying nameBomb loads, with
// the rewrite (which drops a name section it cannot read) and without it
// (custom sections are stripped), and the load allocates nothing near the
// 8 GiB wazero would have.
func TestNameSectionBombIsHarmless(t *testing.T) {
	wasm, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	wasm = append(slices.Clip(wasm), nameBomb...)
	refuse := func([]byte, interrupt.Limits) ([]byte, error) { return nil, interrupt.ErrUnsupported }
	for name, instrument := range map[string]func([]byte, interrupt.Limits) ([]byte, error){"rewrite": nil, "wazero checks": refuse} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			p, err := Load(t.Context(), Options{Name: "bomb", Wasm: wasm, Timeout: time.Second, MemoryMB: 48,
				MaxInstances: 1, MaxOutputBytes: 1 << 20, instrument: instrument, WazeroChecks: true,
				CacheDir:      testutil.CompilationCacheDir(t), // decoding, where the bomb is, happens on a cache hit too
				HostFunctions: hostfn.Functions("bomb", hclog.NewNullLogger(), dropNotifier{}, nil, nil)})
			if err != nil {
				t.Fatal(err)
			}
			p.Close(t.Context())
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<30 {
				t.Errorf("the load allocated %d MiB", alloc>>20)
			}
		})
	}
}
