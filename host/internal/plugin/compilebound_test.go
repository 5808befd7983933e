package plugin

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/internal/wasmgen"
)

// TestModuleBombsAreRefusedBeforeCompiling: modules that would end the
// process (2^32-1 locals: an out-of-memory crash in wazero) or hold a
// core for minutes (100,000 nested blocks, a million types, 50,000 locals
// read after 10,000 branches) are refused by Load, naming the limit,
// without the host's heap growing.
func TestModuleBombsAreRefusedBeforeCompiling(t *testing.T) {
	for _, tc := range []struct {
		name, limit string
		m           wasmgen.Module
	}{
		{"2^32-1 locals", "function locals", wasmgen.Module{Funcs: []wasmgen.Func{{Locals: 1<<32 - 1, LocalGroups: 2}}}},
		{"2^27 locals", "function locals", wasmgen.Module{Funcs: []wasmgen.Func{{Locals: 1 << 27}}}},
		{"100,000 nested blocks", "nesting depth", wasmgen.Module{Funcs: []wasmgen.Func{{Body: wasmgen.Nested(100_000)}}}},
		{"1,000,000 types", "types", wasmgen.Module{Types: 1_000_000, Funcs: []wasmgen.Func{{}}}},
		{"50,000 locals after 10,000 branches", "branch cost", wasmgen.Module{Funcs: []wasmgen.Func{{Locals: 50_000, Body: wasmgen.BranchesThenReads(10_000, 50_000)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Load(t.Context(), Options{Name: "bomb", Wasm: tc.m.Bytes(), Timeout: time.Second, MemoryMB: 16, MaxOutputBytes: 1 << 20})
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "refused before compiling") || !strings.Contains(err.Error(), "("+tc.limit+")") {
				t.Fatalf("Load: %v, want a refusal naming the %s limit", err, tc.limit)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("refusing it allocated %d MiB", grew>>20)
			}
		})
	}
}

// slowModule is within every limit but takes wazero seconds to compile:
// 150,000 small functions.
func slowModule() []byte {
	return wasmgen.Module{Funcs: make([]wasmgen.Func, 150_000)}.Bytes()
}

// TestCompileEndsWithItsContext: a compile under way stops when the
// load's context ends (SIGTERM at start, a reload given up), and the
// error says the compile was cut short, not that the module is broken.
// Before, wazero compiled to the end, and the load failed later, at the
// first instance.
func TestCompileEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	begin := time.Now()
	_, err := Load(ctx, Options{Name: "slow", Wasm: slowModule(), Timeout: time.Second, MemoryMB: 16, MaxOutputBytes: 1 << 20})
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "compile:") {
		t.Fatalf("Load: %v, want the compile cancelled", err)
	}
	t.Logf("the load ended %v after it began (cancelled after 50ms): %v", time.Since(begin), err)
}

// TestCompileTimeoutRefusesTheModule: a compile that outlasts the
// plugin's compile timeout is stopped, and the module refused, naming the
// timeout.
func TestCompileTimeoutRefusesTheModule(t *testing.T) {
	_, err := Load(t.Context(), Options{Name: "slow", Wasm: slowModule(), Timeout: time.Second, MemoryMB: 16, MaxOutputBytes: 1 << 20,
		CompileTimeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "compile not done within 50ms") {
		t.Fatalf("Load: %v, want the compile timeout named", err)
	}
}
