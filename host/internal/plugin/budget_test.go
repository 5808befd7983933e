package plugin

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testutil"
)

// loadBudgeted loads wasm as name, its instances counted against budget
// at 64 MiB, sharing codes.
func loadBudgeted(t *testing.T, codes *CodeCache, budget *Budget, name string, wasm []byte, timeout time.Duration) *Plugin {
	t.Helper()
	return loadForSharing(t, Options{Name: name, Wasm: wasm, Code: codes, Budget: budget, Timeout: timeout})
}

// TestEvictingTheLastInstanceReleasesThePlugin: with room for one
// instance, a call to one plugin evicts the other's idle instance, and the
// other, left with none, is released: its compiled module goes too.
func TestEvictingTheLastInstanceReleasesThePlugin(t *testing.T) {
	codes, budget := NewCodeCache(), NewBudget(64<<20)
	faulty, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	a := loadBudgeted(t, codes, budget, "a", helloWasm(t), time.Minute)
	a.Idle()
	waitUsers(t, codes, 0)
	// b's timeout (1s) bounds its wait for room below.
	b := loadBudgeted(t, codes, budget, "b", faulty, time.Second) // active, one idle instance
	if s := budget.Stats(); s.Held != 64<<20 {
		t.Fatalf("budget after loading b: %+v, want its one instance held", s)
	}
	if _, err := a.Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
		t.Fatalf("a call with b's idle instance in the way: %v", err)
	}
	if s := b.Lifecycle(); s.Evictions != 1 || s.Active || s.Releases != 1 {
		t.Errorf("b after a's call: %+v, want its instance evicted and the plugin released", s)
	}
	waitUsers(t, codes, 1)
	if s := codes.Stats(); s.Modules != 1 {
		t.Errorf("code after b's release: %+v, want a's module only", s)
	}
	if s := budget.Stats(); s.Held != 64<<20 || s.Evicted != 1 {
		t.Errorf("budget: %+v, want a's one instance held, one eviction", s)
	}

	// b cannot evict a's instance while a call holds it (the test does):
	// it fails, after waiting its timeout, naming the budget.
	inst, err := a.act.pool.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"echo","arguments":{"text":"x"}},"context":{}}`))
	a.act.pool.put(inst, true)
	var ce *CallError
	if !errors.As(err, &ce) || !errors.Is(err, ErrMemoryBudget) || ce.Kind != KindMemoryBudget ||
		!strings.Contains(err.Error(), `max_memory_mb = 64; held 64 MiB: "a" 64 MiB (1 in use, 0 idle)`) {
		t.Errorf("b's call with a's instance in use: %v, want a memory budget error naming what is held", err)
	}
}
