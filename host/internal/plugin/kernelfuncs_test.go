package plugin

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

// TestKernelFunctionsAreKeptPerInstance: the kernel functions a Go plugin
// imports (input_length; its output goes through output_write) and the
// host calls (alloc) reach the host's redirect and are built once per
// instance, not once per call (kernelfuncs.go); the next call on the same
// instance uses the same functions.
func TestKernelFunctionsAreKeptPerInstance(t *testing.T) {
	p, err := Load(t.Context(), Options{
		Name: "hello", Wasm: helloWasm(t), Timeout: 10 * time.Second, MemoryMB: 64, MaxInstances: 1,
		MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t), Logger: hclog.NewNullLogger(),
		HostFunctions: hostfn.Functions("hello", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(t.Context()) })
	kept := func() map[string]api.Function {
		t.Helper()
		if out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
			t.Fatalf("echo: %v (%s)", err, out)
		}
		pool := p.act.pool
		inst, err := pool.get(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer pool.put(inst, true)
		fns := map[string]api.Function{}
		for i, f := range inst.kernel.fns {
			if f != nil {
				fns[kernelImportList[i].name] = f
			}
		}
		return fns
	}
	first := kept()
	for _, name := range []string{"input_length", "alloc"} {
		if first[name] == nil {
			t.Errorf("%s was not kept after a call (kept: %v)", name, first)
		}
	}
	second := kept()
	for name, f := range first {
		if second[name] != f {
			t.Errorf("%s was built again for the second call", name)
		}
	}
}
