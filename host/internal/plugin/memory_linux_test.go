package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/host/internal/interrupt"
	"github.com/mcphost/mcphost/internal/testutil"
)

// mapped reports whether addr is in a mapping of this process.
func mapped(t *testing.T, addr uintptr) bool {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps:", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var start, end uintptr
		if _, err := fmt.Sscanf(sc.Text(), "%x-%x", &start, &end); err == nil && start <= addr && addr < end {
			return true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return false
}

func TestRegionCommitsAsItGrows(t *testing.T) {
	const page = 64 << 10
	r, err := reserve(4 * page)
	if err != nil {
		t.Fatal(err)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(r.mem)))
	if b := r.Reallocate(0); b == nil || len(b) != 0 || unsafe.SliceData(b) != unsafe.SliceData(r.mem) {
		t.Fatalf("Reallocate(0) = %p len %d, want an empty slice at the reservation", b, len(b))
	}
	b := r.Reallocate(page)
	b[page-1] = 7
	grown := r.Reallocate(4 * page)
	if len(grown) != 4*page || cap(grown) != 4*page || unsafe.SliceData(grown) != unsafe.SliceData(b) || grown[page-1] != 7 {
		t.Fatalf("grown to 4 pages: len %d cap %d, moved %v, kept %d", len(grown), cap(grown), unsafe.SliceData(grown) != unsafe.SliceData(b), grown[page-1])
	}
	grown[4*page-1] = 1
	if r.Reallocate(5*page) != nil {
		t.Error("grew past the reservation")
	}
	if !mapped(t, base) {
		t.Fatal("the reservation is not in /proc/self/maps")
	}
	if err := r.unmap(); err != nil {
		t.Fatal(err)
	}
	if mapped(t, base) || r.Reallocate(page) != nil || r.unmap() != nil {
		t.Error("after unmap: still mapped, still growing, or a second unmap failed")
	}
}

// TestDiscardedInstanceIsUnmappedAtOnce: the memories of an instance that
// a call discards (trap, exit, panic, timeout, oversized error) are
// unmapped when the call returns, with no garbage collection, in both
// interrupt modes; the one wazero closes itself in the middle of a call
// (exit; the kernel on a timeout with wazero's checks) stays mapped until
// then, so nothing reads unmapped memory; and the plugin keeps serving.
func TestDiscardedInstanceIsUnmappedAtOnce(t *testing.T) {
	wasm, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	refuse := func([]byte, interrupt.Limits) ([]byte, error) { return nil, interrupt.ErrUnsupported }
	for _, mode := range []struct {
		name       string
		instrument func([]byte, interrupt.Limits) ([]byte, error)
	}{{"instrumented", nil}, {"wazero checks", refuse}} {
		t.Run(mode.name, func(t *testing.T) {
			const memoryMB = 64
			p, err := Load(t.Context(), Options{
				Name: "faulty", Wasm: wasm, Timeout: 500 * time.Millisecond, MemoryMB: memoryMB,
				MaxInstances: 1, MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t),
				HostFunctions: hostfn.Functions("faulty", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
				instrument:    mode.instrument,
				WazeroChecks:  true,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close(t.Context()) })
			for _, tool := range []string{"trap", "exit", "panic", "spin", "error_flood", "log_flood"} {
				// The only instance, lent and handed back: the next call runs on it.
				inst, err := p.act.pool.get(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				reserved, committed := inst.mem.reserved()
				regions := inst.mem.regions
				p.act.pool.put(inst, true)
				if len(regions) != 2 || reserved != 2*memoryMB<<20 {
					t.Fatalf("%d memories reserving %d bytes, want Extism's kernel's and the plugin's at the %d MiB cap", len(regions), reserved, memoryMB)
				}

				_, err = p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"`+tool+`","arguments":{"bytes":2097152}},"context":{}}`))
				var ce *CallError
				if !errors.As(err, &ce) || ce.Kind == KindPluginError {
					t.Fatalf("%s: %v, want a failure that discards the instance", tool, err)
				}
				// The replacement may be mapped where these were: ask the regions.
				for _, r := range regions {
					r.mu.Lock()
					if r.mem != nil {
						t.Errorf("%s (%s): a memory of the discarded instance is still mapped", tool, ce.Kind)
					}
					r.mu.Unlock()
				}
				t.Logf("%s: %s; %d MiB reserved, %d KiB committed before the call, unmapped after it", tool, ce.Kind, reserved>>20, committed>>10)
				out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"echo","arguments":{"text":"after"}},"context":{}}`))
				if err != nil || !strings.Contains(string(out), "after") {
					t.Fatalf("echo after %s: %s, %v", tool, out, err)
				}
			}
		})
	}
}

// TestClosingThePluginDuringACallKeepsItsMemory: Plugin.Close that gives up
// waiting for a running call closes the runtime, and wazero then closes
// (and frees) every module, the running one included. Its memory must stay
// mapped until the call has returned: the call still writes to it.
func TestClosingThePluginDuringACallKeepsItsMemory(t *testing.T) {
	wasm, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(t.Context(), Options{
		Name: "faulty", Wasm: wasm, Timeout: time.Second, MemoryMB: 32,
		MaxInstances: 1, MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t),
		HostFunctions: hostfn.Functions("faulty", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := p.act.pool.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	regions := inst.mem.regions
	p.act.pool.put(inst, true)

	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), abi.ExportCallTool, []byte(`{"request":{"name":"spin","arguments":{}},"context":{}}`))
		done <- err
	}()
	for inUse, _, _ := p.InstanceStats(); inUse == 0; inUse, _, _ = p.InstanceStats() {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // spinning, writing its memory
	closeCtx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := p.Close(closeCtx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close during a call: %v, want it to give up waiting", err)
	}
	for _, r := range regions {
		r.mu.Lock()
		if r.mem == nil {
			t.Error("the running instance's memory was unmapped before its call returned")
		}
		r.mu.Unlock()
	}
	if err := <-done; err == nil {
		t.Fatal("spin returned without an error")
	}
	for _, r := range regions {
		r.mu.Lock()
		if r.mem != nil {
			t.Error("the instance's memory is still mapped after its call returned on a closed plugin")
		}
		r.mu.Unlock()
	}
}
