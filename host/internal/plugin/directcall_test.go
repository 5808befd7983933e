package plugin

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

// TestWarmCallsMatchExtismsCall: an instance's first call goes through
// Extism's CallWithContext, which hands its main module to the host's
// listener; its later calls run through callDirect with the export's and
// the kernel's functions kept (directcall.go). For each of the faulty
// plugin's ways to end a call, the call on a warm instance (callDirect)
// ends exactly as on a fresh one (CallWithContext): same output, same
// error, same kind; and after a failure the instance is replaced, so its
// kept functions are never used again.
func TestWarmCallsMatchExtismsCall(t *testing.T) {
	wasm, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(t.Context(), Options{
		Name: "faulty", Wasm: wasm, Timeout: 500 * time.Millisecond, MemoryMB: 48,
		MaxInstances: 1, MaxOutputBytes: 64 << 10, CacheDir: testutil.CompilationCacheDir(t),
		Logger:        hclog.NewNullLogger(),
		HostFunctions: hostfn.Functions("faulty", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(t.Context()) })
	call := func(tool, args string) ([]byte, error) {
		return p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"`+tool+`","arguments":`+args+`},"context":{}}`))
	}
	// idle returns the pool's idle instance, if there is one.
	idle := func() *instance {
		t.Helper()
		pool := p.act.pool
		pool.mu.Lock()
		defer pool.mu.Unlock()
		if len(pool.idle) == 0 {
			return nil
		}
		return pool.idle[len(pool.idle)-1]
	}
	echo := func() {
		t.Helper()
		if out, err := call("echo", `{"text":"hi"}`); err != nil {
			t.Fatalf("echo: %v (%s)", err, out)
		}
	}
	for _, tc := range []struct {
		tool, args string
		fails      bool
	}{
		{"echo", `{"text":"hello"}`, false},
		{"garbage", `{}`, false},
		{"stdout", `{}`, false},
		{"error_flood", `{"bytes":20}`, true},             // error text (Extism's error_set)
		{"error_flood", `{"bytes":20,"json":true}`, true}, // the ABI's JSON error
		{"error_flood", `{"bytes":100000}`, true},         // error text over the cap
		{"big", `{"bytes":100000}`, true},                 // output over the cap
		{"trap", `{}`, true},
		{"exit", `{}`, true},
		{"panic", `{}`, true},
		{"spin", `{}`, true},
		{"alloc", `{}`, true},
	} {
		t.Run(tc.tool+tc.args, func(t *testing.T) {
			// A fresh instance, one that never made a call: the pool
			// replaces the one it hands over.
			pool := p.act.pool
			inst, err := pool.get(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			pool.put(inst, false)
			coldOut, coldErr := call(tc.tool, tc.args)

			echo() // captures, on whatever instance serves it
			echo() // through callDirect
			warm := idle()
			if warm == nil || warm.direct.main == nil || warm.direct.exports[abi.ExportCallTool] == nil {
				t.Fatal("a called instance's main module and export were not kept")
			}
			kept := warm.direct.exports[abi.ExportCallTool]
			warmOut, warmErr := call(tc.tool, tc.args)

			if string(coldOut) != string(warmOut) {
				t.Errorf("output: fresh instance %.200q, warm %.200q", coldOut, warmOut)
			}
			if (coldErr == nil) != (warmErr == nil) || coldErr != nil && coldErr.Error() != warmErr.Error() {
				t.Errorf("error: fresh instance %v, warm %v", coldErr, warmErr)
			}
			var cold, hot *CallError
			if errors.As(coldErr, &cold) != errors.As(warmErr, &hot) || cold != nil && cold.Kind != hot.Kind {
				t.Errorf("kind: fresh instance %v, warm %v", coldErr, warmErr)
			}
			if (warmErr != nil) != tc.fails {
				t.Fatalf("%s: %v, want failure %v", tc.tool, warmErr, tc.fails)
			}
			t.Logf("%s: %v", tc.tool, warmErr)
			var plugErr *abi.Error
			replaced := warmErr != nil && !errors.As(warmErr, &plugErr) && (hot == nil || hot.Kind != KindPluginError)
			echo()
			if now := idle(); replaced == (now == warm) {
				t.Errorf("after %v: instance replaced %v, want %v", warmErr, now != warm, replaced)
			} else if !replaced && now.direct.exports[abi.ExportCallTool] != kept {
				t.Error("the export's function was built again on a kept instance")
			}
		})
	}
}
