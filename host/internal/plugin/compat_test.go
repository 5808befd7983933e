package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

// TestHyperMCPPluginsGetOneInstance: a hyper-mcp plugin runs on one
// instance, which keeps its state from call to call as under hyper-mcp,
// unless max_instances says otherwise; mcphost's own plugins get a pool.
func TestHyperMCPPluginsGetOneInstance(t *testing.T) {
	root := testutil.RepoRoot(t)
	for _, tc := range []struct {
		name, file   string
		maxInstances int
		want         int
	}{
		{"hyper-mcp v1, default", "testdata/hyper-mcp/tool_list_changed.wasm", 0, 1},
		{"hyper-mcp v2, default", "testdata/hyper-mcp/rstime.wasm", 0, 1},
		{"hyper-mcp, configured", "testdata/hyper-mcp/tool_list_changed.wasm", 3, 3},
		{"mcphost, default", "plugins/wat/wat.wasm", 0, max(2, runtime.NumCPU())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wasm, err := os.ReadFile(filepath.Join(root, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Load(t.Context(), Options{
				Name: "p", Wasm: wasm, Timeout: 10 * time.Second, MemoryMB: 64,
				MaxInstances: tc.maxInstances, MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t),
				Logger:        hclog.NewNullLogger(),
				HostFunctions: hostfn.Functions("p", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close(t.Context()) })
			if _, _, capacity := p.InstanceStats(); capacity != tc.want {
				t.Errorf("%s (%s): %d instances at most, want %d", tc.file, p.Flavor(), capacity, tc.want)
			}
		})
	}
}

// TestExtismHTTPRequestIsRedirected: a module's import of Extism's
// http_request is renamed to the host's, and nothing else changes; a
// module without it is left as it is. (The kernel functions' redirect is
// left out here: TestKernelFunctionsAreKeptPerInstance.)
func TestExtismHTTPRequestIsRedirected(t *testing.T) {
	root := testutil.RepoRoot(t)
	httpOnly := map[importName]importName{{extismEnv, "http_request"}: redirectedImports[importName{extismEnv, "http_request"}]}
	rstime, err := os.ReadFile(filepath.Join(root, "testdata/hyper-mcp/rstime.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := renameImports(rstime, httpOnly)
	if err != nil {
		t.Fatal(err)
	}
	from := append([]byte("\x0fextism:host/env\x0chttp_request"), 0)
	to := append([]byte("\x0emcphost:extism\x0chttp_request"), 0)
	if bytes.Contains(out, from) || !bytes.Contains(out, to) || len(out) != len(rstime)-1 {
		t.Errorf("http_request not redirected (len %d -> %d)", len(rstime), len(out))
	}
	before, _ := exportedFunctions(rstime)
	after, _ := exportedFunctions(out)
	if len(before) == 0 || len(before) != len(after) {
		t.Errorf("exports %v -> %v", before, after)
	}

	timeWasm, err := os.ReadFile(filepath.Join(root, "testdata/hyper-mcp/time.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := renameImports(timeWasm, httpOnly); err != nil || !bytes.Equal(out, timeWasm) {
		t.Errorf("a module without http_request was changed (%v)", err)
	}
	if _, err := renameImports(rstime[:len(rstime)/2], httpOnly); err == nil {
		t.Error("a truncated module was read without an error")
	}
}

// FuzzRenameImports: reading a module's imports and exports never panics,
// whatever the bytes, and a module it renames still reads the same.
func FuzzRenameImports(f *testing.F) {
	root := testutil.RepoRoot(f)
	for _, file := range []string{"testdata/hyper-mcp/rstime.wasm", "testdata/hyper-mcp/tool_list_changed.wasm", "plugins/wat/wat.wasm"} {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x02\x05\x01\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = exportedFunctions(b)
		out, err := renameImports(b, redirectedImports)
		if err != nil {
			return
		}
		again, err := renameImports(out, redirectedImports)
		if err != nil || !bytes.Equal(again, out) {
			t.Errorf("renaming twice differs (%v)", err)
		}
	})
}

// TestHyperMCPv1ParamsKeepTheirMeta: hyper-mcp v1's call takes the request
// params whole; the envelope carries their _meta in its context only (ABI
// draft 6), so the adapter puts it back, and leaves params without one
// when the request had none.
func TestHyperMCPv1ParamsKeepTheirMeta(t *testing.T) {
	p := &Plugin{flavor: FlavorHyperMCPv1}
	for _, tc := range []struct{ in, want string }{
		{`{"request":{"name":"t","arguments":{"a":1}},"context":{"id":1,"_meta":{"progressToken":"x"}}}`,
			`{"params":{"_meta":{"progressToken":"x"},"arguments":{"a":1},"name":"t"}}`},
		{`{"request":{"name":"t","arguments":{}},"context":{"id":1,"_meta":{}}}`,
			`{"params":{"arguments":{},"name":"t"}}`},
	} {
		fn, out, err := p.adapt(abi.ExportCallTool, []byte(tc.in))
		if err != nil || fn != v1Call || string(out) != tc.want {
			t.Errorf("adapt(%s) = %s, %s, %v; want call, %s", tc.in, fn, out, err, tc.want)
		}
	}
}
