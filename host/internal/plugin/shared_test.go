package plugin

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

// loadShared loads wasm as a plugin named name with config, sharing codes.
func loadShared(t *testing.T, codes *CodeCache, name string, wasm []byte, config map[string]string) *Plugin {
	t.Helper()
	return loadForSharing(t, Options{Name: name, Wasm: wasm, Config: config, Code: codes, Timeout: time.Minute})
}

// loadForSharing loads the plugin of opts (Name, Wasm, Code and the rest
// the test cares about) with the limits these tests share: 64 MiB, one
// instance, the test compilation cache, the host functions, an hour's
// idle timeout; it is closed when the test ends.
func loadForSharing(t *testing.T, opts Options) *Plugin {
	t.Helper()
	opts.MemoryMB, opts.MaxInstances, opts.MaxOutputBytes = 64, 1, 1<<20
	opts.CacheDir = testutil.CompilationCacheDir(t)
	opts.HostFunctions = hostfn.Functions(opts.Name, hclog.NewNullLogger(), dropNotifier{}, nil, nil)
	opts.IdleTimeout = time.Hour
	p, err := Load(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// executableBytes sums the anonymous executable mappings of the process:
// where wazero keeps machine code.
func executableBytes(t *testing.T) int64 {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	var total int64
	for line := range strings.Lines(string(maps)) {
		f := strings.Fields(line)
		if len(f) != 5 || !strings.HasPrefix(f[1], "r-x") { // no path: anonymous
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("maps line %q", line)
		}
		total += int64(b - a)
	}
	return total
}

// settledExecutableBytes is executableBytes once earlier tests' machine
// code is gone: wazero unmaps a compiled module from a finalizer, which
// runs after a GC on the finalizer goroutine, so an unmapping could
// otherwise land inside the measurement and hide the code it measures.
// It waits for two equal readings 50 ms apart, at most 2 s.
func settledExecutableBytes(t *testing.T) int64 {
	t.Helper()
	runtime.GC()
	last := executableBytes(t)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		runtime.GC()
		now := executableBytes(t)
		if now == last {
			return now
		}
		last = now
	}
	return last
}

// TestPluginsOfOneModuleShareCompiledCode: four plugins of one file are
// compiled once (one load of code, one copy of the machine code mapped),
// yet each sees its own config, and a trap in one leaves the others (and
// itself, on a fresh instance) serving.
func TestPluginsOfOneModuleShareCompiledCode(t *testing.T) {
	codes := NewCodeCache(0)
	hello := helloWasm(t)
	before := settledExecutableBytes(t)
	first := loadShared(t, codes, "hello0", hello, map[string]string{"greeting": "Greeting 0"})
	one := executableBytes(t) - before
	plugins := []*Plugin{first}
	for i := 1; i < 4; i++ {
		plugins = append(plugins, loadShared(t, codes, fmt.Sprintf("hello%d", i), hello, map[string]string{"greeting": fmt.Sprintf("Greeting %d", i)}))
	}
	three := executableBytes(t) - before - one
	if s := codes.Stats(); s.Loads != 1 || s.Modules != 1 || s.Users != 4 {
		t.Errorf("4 plugins of one module: %+v, want 1 load of code, 1 module, 4 users", s)
	}
	if runtime.GOOS == "linux" && (one < 1<<20 || three > one/2) {
		t.Errorf("machine code mapped: %d bytes for the first plugin, %d more for three more of the same file; want them to share it", one, three)
	}
	for i, p := range plugins {
		out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"greet","arguments":{"name":"you"}},"context":{}}`))
		if want := fmt.Sprintf("Greeting %d, you!", i); err != nil || !strings.Contains(string(out), want) {
			t.Errorf("plugin %d greets %s (%v), want its own config: %q", i, out, err, want)
		}
	}

	// A trap in one plugin of a shared module.
	faultyWasm, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	a := loadShared(t, codes, "faultyA", faultyWasm, nil)
	b := loadShared(t, codes, "faultyB", faultyWasm, nil)
	if s := codes.Stats(); s.Loads != 2 || s.Modules != 2 {
		t.Errorf("after two plugins of a second module: %+v, want 2 loads, 2 modules", s)
	}
	if _, err := a.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"trap","arguments":{}},"context":{}}`)); err == nil {
		t.Fatal("trap returned no error")
	}
	for _, p := range []*Plugin{b, a} {
		out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"echo","arguments":{"text":"still here"}},"context":{}}`))
		if err != nil || !strings.Contains(string(out), "still here") {
			t.Errorf("%s after a trap in faultyA: %s, %v", p.Name(), out, err)
		}
	}

	// The code lives while a plugin holds it: releasing all but one keeps
	// it, releasing the last drops it.
	for _, p := range plugins[1:] {
		p.Idle()
	}
	waitUsers(t, codes, 3) // hello0, faultyA, faultyB
	if s := codes.Stats(); s.Modules != 2 || s.Loads != 2 {
		t.Errorf("three of four hello plugins released: %+v, want the module kept", s)
	}
	// An activation while the code is held finds it in memory.
	if _, err := plugins[1].Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
		t.Fatal(err)
	}
	if s := codes.Stats(); s.Loads != 2 {
		t.Errorf("a reactivation while the code is held loaded it again: %+v", s)
	}
	plugins[0].Idle()
	plugins[1].Idle()
	a.Idle()
	b.Idle()
	waitUsers(t, codes, 0)
	if s := codes.Stats(); s.Modules != 0 || s.Users != 0 {
		t.Errorf("every plugin released: %+v, want no module held", s)
	}
}

// waitUsers waits (a hang guard only) until codes has users users: the
// releases under way have closed their activations.
func waitUsers(t *testing.T, codes *CodeCache, users int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); codes.Stats().Users != users; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("code users: %+v, want %d", codes.Stats(), users)
		}
	}
}
