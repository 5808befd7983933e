package plugin

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
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
	codes, budget := NewCodeCache(0), NewBudget(64<<20)
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

// watEcho is a plugin in WebAssembly text with one tool whose calls
// return at once with no content.
const watEchoTools = `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`

// loadInBudget loads the WAT plugin as name, of up to maxInstances
// instances of 64 MiB counted against budget, and releases its instance
// (Idle), so that it holds none until called.
func loadInBudget(t *testing.T, budget *Budget, wasm []byte, name string, maxInstances int) *Plugin {
	t.Helper()
	p, err := Load(t.Context(), Options{
		Name: name, Wasm: wasm, Budget: budget, MemoryMB: 64, MaxInstances: maxInstances, MaxOutputBytes: 1 << 20,
		Timeout: time.Minute, IdleTimeout: time.Hour,
		HostFunctions: hostfn.Functions(name, hclog.NewNullLogger(), dropNotifier{}, nil, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	p.Idle()
	for deadline := time.Now().Add(time.Minute); p.Lifecycle().MemoryHeld != 0 || p.Lifecycle().Active; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s not released: %+v", name, p.Lifecycle())
		}
	}
	return p
}

// waitBudget waits until cond holds of budget's stats.
func waitBudget(t *testing.T, budget *Budget, what string, cond func(BudgetStats) bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(budget.Stats()); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("budget %+v: never %s", budget.Stats(), what)
		}
	}
}

// activePool activates p (one call) and returns its pool.
func activePool(t *testing.T, p *Plugin) *pool {
	t.Helper()
	if _, err := p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"t","arguments":{}},"context":{}}`)); err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	p.actMu.Lock()
	defer p.actMu.Unlock()
	return p.act.pool
}

// TestBudgetKeepsAnInstanceForEveryPlugin: a plugin cannot take the room
// of another's first instance. While every plugin's reservation fits (two
// of 64 MiB in 128), a holds one instance and is refused a second, which
// would leave no room for b's; b's call succeeds while a's instance is in
// use. When they do not fit (three in 128), a's second instance must still
// leave room for one more plugin's first.
func TestBudgetKeepsAnInstanceForEveryPlugin(t *testing.T) {
	wasm := testutil.WAT(t, testutil.WATPlugin{Tools: watEchoTools}.Text())
	for _, names := range [][]string{{"a", "b"}, {"a", "b", "c"}} {
		t.Run(strings.Join(names, ""), func(t *testing.T) {
			budget := NewBudget(128 << 20)
			var ps []*Plugin
			for _, n := range names {
				ps = append(ps, loadInBudget(t, budget, wasm, n, 4))
			}
			a := activePool(t, ps[0])
			first, err := a.get(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer a.put(first, true)
			short, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			if second, err := a.get(short); err == nil {
				a.put(second, true)
				t.Fatalf("a took a second instance (budget %+v): none left for %v", budget.Stats(), names[1:])
			} else if !errors.Is(err, ErrMemoryBudget) || !strings.Contains(err.Error(), "reserved for other plugins' first instance: ") {
				t.Errorf("a's second instance: %v, want a memory budget error naming the reservation", err)
			}
			waitBudget(t, budget, "without waiters", func(s BudgetStats) bool { return s.Waiting == 0 })
			if _, err := ps[1].Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"t","arguments":{}},"context":{}}`)); err != nil {
				t.Errorf("b's call while a's instance is in use: %v", err)
			}
			if s := budget.Stats(); s.Held != 128<<20 || s.Reserved != int64(len(names))*64<<20 {
				t.Errorf("budget %+v, want 128 MiB held, %d reserved", s, len(names)*64)
			}
		})
	}
}

// TestBudgetServesTheWaiterWhosePluginHoldsLeast: with room for one
// instance beyond the three plugins' reservations (256 MiB, 64 each), a
// holds two, and waits for a third; b, holding one, waits for a second
// after it. When a hands one back, b is served first (a's idle instance
// is evicted for it), and a keeps waiting; a waiter whose context ends
// leaves the queue, and the memory held is as before.
func TestBudgetServesTheWaiterWhosePluginHoldsLeast(t *testing.T) {
	wasm := testutil.WAT(t, testutil.WATPlugin{Tools: watEchoTools}.Text())
	budget := NewBudget(256 << 20)
	pa := loadInBudget(t, budget, wasm, "a", 4)
	pb := loadInBudget(t, budget, wasm, "b", 4)
	pc := loadInBudget(t, budget, wasm, "c", 1)
	a, b := activePool(t, pa), activePool(t, pb)
	a1, err := a.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	a2, err := a.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b1, err := b.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer b.put(b1, true)
	defer a.put(a1, true)

	aCtx, cancelA := context.WithCancel(t.Context())
	aDone := make(chan error, 1)
	go func() {
		inst, err := a.get(aCtx)
		if err == nil {
			a.put(inst, true)
		}
		aDone <- err
	}()
	waitBudget(t, budget, "with a waiting", func(s BudgetStats) bool { return s.Waiting == 1 })
	type got struct {
		inst *instance
		err  error
	}
	bDone := make(chan got, 1)
	go func() {
		// Bounded, so that a b left waiting fails the test, not hangs it.
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		inst, err := b.get(ctx)
		bDone <- got{inst, err}
	}()
	waitBudget(t, budget, "with a and b waiting", func(s BudgetStats) bool { return s.Waiting == 2 })
	// c's first instance is its own: it fits at once, waiters or not.
	if _, err := pc.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"t","arguments":{}},"context":{}}`)); err != nil {
		t.Fatalf("c's call with a and b waiting: %v", err)
	}

	a.put(a2, true)
	b2 := <-bDone
	if b2.err != nil {
		t.Fatalf("b, holding less than a, waited after a and was not served: %v", b2.err)
	}
	defer b.put(b2.inst, true)
	if s := budget.Stats(); s.Waiting != 1 || s.Evicted != 1 || s.Held != 256<<20 {
		t.Errorf("budget after b was served: %+v, want a still waiting, a's idle instance evicted, 256 MiB held", s)
	}
	select {
	case err := <-aDone:
		t.Fatalf("a served before b's instance was handed back: %v", err)
	default:
	}
	cancelA()
	if err := <-aDone; !errors.Is(err, ErrMemoryBudget) || !errors.Is(err, context.Canceled) {
		t.Errorf("a's cancelled wait: %v, want a memory budget error for a cancelled context", err)
	}
	if s := budget.Stats(); s.Waiting != 0 || s.Held != 256<<20 {
		t.Errorf("budget after a gave up: %+v, want no waiter and 256 MiB held as before", s)
	}
}
