package plugin

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testutil"
)

// waitKept waits (a hang guard only) until codes keeps kept modules for
// released plugins: the releases under way have ended.
func waitKept(t *testing.T, codes *CodeCache, kept int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); codes.Stats().Kept != kept; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("kept code: %+v, want %d kept", codes.Stats(), kept)
		}
	}
}

// activeCost is what p's compiled module counts when kept.
func activeCost(t *testing.T, p *Plugin) int64 {
	t.Helper()
	p.actMu.Lock()
	defer p.actMu.Unlock()
	if p.act == nil {
		t.Fatalf("%s is not active", p.name)
	}
	return p.act.cost
}

// TestReleasedPluginKeepsItsCompiledModule: a plugin released after its
// idle timeout keeps its compiled module (and its hold on the shared
// code); its next call activates it without loading code again, as often
// as it is released; closing it frees what it kept.
func TestReleasedPluginKeepsItsCompiledModule(t *testing.T) {
	codes := NewCodeCache(1 << 30)
	p := loadForSharing(t, Options{Name: "hello", Wasm: helloWasm(t), Code: codes, Timeout: time.Minute})
	cost := activeCost(t, p)
	for round := 1; round <= 3; round++ {
		p.Idle()
		waitKept(t, codes, 1)
		if s := codes.Stats(); s.Modules != 1 || s.Users != 1 || s.KeptBytes != cost || s.Loads != 1 {
			t.Fatalf("round %d, released: %+v, want its module kept (1 module, 1 user, %d bytes), loaded once", round, s, cost)
		}
		if s := p.Lifecycle(); s.Active || s.MemoryHeld != 0 {
			t.Fatalf("round %d, released: %+v, want inactive", round, s)
		}
		if inUse, idle, _ := p.InstanceStats(); inUse+idle != 0 {
			t.Fatalf("round %d: released with %d instances", round, inUse+idle)
		}
		if _, err := p.Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
			t.Fatalf("round %d: call after the release: %v", round, err)
		}
		if s := codes.Stats(); s.Loads != 1 || s.Kept != 0 || s.KeptBytes != 0 || s.Users != 1 {
			t.Fatalf("round %d, called again: %+v, want the kept module taken back, no code loaded", round, s)
		}
		if s := p.Lifecycle(); !s.Active || s.Activations != int64(round)+1 || s.Releases != int64(round) {
			t.Fatalf("round %d: %+v", round, s)
		}
	}
	p.Idle()
	waitKept(t, codes, 1)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := codes.Stats(); s.Modules != 0 || s.Users != 0 || s.Kept != 0 || s.KeptBytes != 0 {
		t.Errorf("closed with its module kept: %+v, want nothing held", s)
	}
}

// TestKeptCodeBeyondTheBoundIsFreed: with room for one kept module, the
// second plugin released frees the first one's (the least recently
// kept), whose next call then compiles (a code load) and serves; a module
// larger than the bound is not kept at all; a plugin whose kept module
// was freed closes cleanly.
func TestKeptCodeBeyondTheBoundIsFreed(t *testing.T) {
	faulty, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	probe := NewCodeCache(0)
	pa := loadForSharing(t, Options{Name: "probe-a", Wasm: helloWasm(t), Code: probe, Timeout: time.Minute})
	pb := loadForSharing(t, Options{Name: "probe-b", Wasm: faulty, Code: probe, Timeout: time.Minute})
	costA, costB := activeCost(t, pa), activeCost(t, pb)
	pa.Close(context.Background())
	pb.Close(context.Background())

	codes := NewCodeCache(max(costA, costB) + costA/2) // one of them
	a := loadForSharing(t, Options{Name: "a", Wasm: helloWasm(t), Code: codes, Timeout: time.Minute})
	b := loadForSharing(t, Options{Name: "b", Wasm: faulty, Code: codes, Timeout: time.Minute})
	a.Idle()
	waitKept(t, codes, 1)
	b.Idle()
	for deadline := time.Now().Add(time.Minute); codes.Stats().Dropped != 1 || codes.Stats().Users != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("two released plugins with room for one kept module: %+v", codes.Stats())
		}
	}
	if s := codes.Stats(); s.Kept != 1 || s.KeptBytes != costB || s.Modules != 1 || s.Loads != 2 {
		t.Fatalf("after b's release: %+v, want b's module kept (%d bytes), a's freed", s, costB)
	}
	if _, err := a.Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
		t.Fatalf("call to the plugin whose kept module was freed: %v", err)
	}
	if s := codes.Stats(); s.Loads != 3 || s.Modules != 2 || s.Kept != 1 {
		t.Errorf("after a's call: %+v, want its code loaded again, b's still kept", s)
	}
	// a released again frees b's, the least recently kept.
	a.Idle()
	for deadline := time.Now().Add(time.Minute); codes.Stats().Dropped != 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a released again: %+v, want b's kept module freed", codes.Stats())
		}
	}
	if s := codes.Stats(); s.Kept != 1 || s.KeptBytes != costA || s.Modules != 1 {
		t.Errorf("a released again: %+v, want a's module kept alone", s)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Errorf("closing b, whose kept module was freed: %v", err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := codes.Stats(); s.Modules != 0 || s.Users != 0 || s.Kept != 0 {
		t.Errorf("both closed: %+v, want nothing held", s)
	}

	// A bound smaller than one module keeps none.
	small := NewCodeCache(costA - 1)
	c := loadForSharing(t, Options{Name: "c", Wasm: helloWasm(t), Code: small, Timeout: time.Minute})
	c.Idle()
	waitUsers(t, small, 0)
	if s := small.Stats(); s.Kept != 0 || s.Modules != 0 || s.Dropped != 1 {
		t.Errorf("a module larger than the bound: %+v, want it freed at once", s)
	}
	if _, err := c.Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
		t.Fatal(err)
	}
}

// TestEvictedPluginKeepsItsCompiledModule: the memory budget taking a
// plugin's last instance releases it as an idle timeout does: its Wasm
// memory goes, its compiled module is kept, and its next call (evicting
// the other plugin's instance in turn) loads no code.
func TestEvictedPluginKeepsItsCompiledModule(t *testing.T) {
	faulty, err := os.ReadFile(testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err != nil {
		t.Fatal(err)
	}
	codes, budget := NewCodeCache(1<<30), NewBudget(64<<20)
	a := loadBudgeted(t, codes, budget, "a", helloWasm(t), time.Minute)
	a.Idle()
	waitKept(t, codes, 1)
	b := loadBudgeted(t, codes, budget, "b", faulty, time.Minute) // active, one idle instance
	if _, err := a.Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
		t.Fatal(err)
	}
	waitKept(t, codes, 1) // b's, once its release ends
	if s := b.Lifecycle(); s.Evictions != 1 || s.Active {
		t.Errorf("b after a's call: %+v, want its instance evicted and the plugin released", s)
	}
	if _, err := b.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"echo","arguments":{"text":"x"}},"context":{}}`)); err != nil {
		t.Fatal(err)
	}
	waitKept(t, codes, 1) // a's
	if s := codes.Stats(); s.Loads != 2 || s.Modules != 2 {
		t.Errorf("after the evictions: %+v, want each module loaded once and both held", s)
	}
	if s := budget.Stats(); s.Held != 64<<20 {
		t.Errorf("budget: %+v, want one instance held", s)
	}
}
