package plugin

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

const echoCall = `{"request":{"name":"echo","arguments":{"text":"hi"}},"context":{}}`

// loadIdleHello loads plugins/hello and releases it, as the host does once
// its lists are read; gate, when set, holds every activation after the
// load's until it is closed, and started is told when one begins.
func loadIdleHello(t *testing.T, timeout time.Duration, gate <-chan struct{}, started chan<- struct{}) *Plugin {
	t.Helper()
	wasm := helloWasm(t)
	p, err := Load(t.Context(), Options{
		Name: "hello", Wasm: wasm, Timeout: timeout, MemoryMB: 64, MaxInstances: 1,
		MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t),
		HostFunctions: hostfn.Functions("hello", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
		IdleTimeout:   time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	if gate != nil {
		p.beforeActivate = func() {
			started <- struct{}{}
			<-gate
		}
	}
	p.Idle()
	if s := p.Lifecycle(); s.Active || s.Releases != 1 {
		t.Fatalf("after Idle: %+v, want inactive, released once", s)
	}
	return p
}

func TestConcurrentFirstCallsShareOneActivation(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{}, 1)
	p := loadIdleHello(t, time.Minute, gate, started)
	before := p.Lifecycle()
	const callers = 8
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			_, err := p.Call(t.Context(), abi.ExportCallTool, []byte(echoCall))
			errs <- err
		})
	}
	<-started
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call: %v", err)
		}
	}
	after := p.Lifecycle()
	if got := after.Activations - before.Activations; got != 1 {
		t.Errorf("%d activations for %d concurrent first calls, want 1", got, callers)
	}
	if got := after.Instances - before.Instances; got != 1 {
		t.Errorf("%d instances made (max_instances 1), want 1", got)
	}
	if !after.Active {
		t.Error("not active after its calls")
	}
}

func TestCancelWhileWaitingForActivation(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{}, 1)
	p := loadIdleHello(t, time.Minute, gate, started)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, abi.ExportCallTool, []byte(echoCall))
		done <- err
	}()
	<-started // the activation is under way, and held
	cancel()
	err := <-done
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindCanceled {
		t.Fatalf("cancelled wait: %v, want a %s CallError", err, KindCanceled)
	}
	// The activation goes on for later callers.
	close(gate)
	if _, err := p.Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
		t.Fatalf("call after the cancelled one: %v", err)
	}
	if s := p.Lifecycle(); s.Activations != 2 {
		t.Errorf("%d activations (the load's and one), want 2", s.Activations)
	}
}

func TestTheWaitForActivationIsBounded(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{}, 1)
	p := loadIdleHello(t, 200*time.Millisecond, gate, started)
	p.activationWait = 0 // only the plugin's timeout bounds the wait
	defer close(gate)
	_, err := p.Call(t.Context(), abi.ExportCallTool, []byte(echoCall))
	<-started
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTimeout || !strings.Contains(err.Error(), "not active in time") {
		t.Fatalf("wait past the plugin's timeout: %v, want a %s CallError", err, KindTimeout)
	}
}

// TestActivationLongerThanTheTimeoutStillServes: an activation that takes
// longer than a short plugin timeout (a busy machine) does not fail the
// call; the call's own timeout starts when it runs.
func TestActivationLongerThanTheTimeoutStillServes(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{}, 1)
	p := loadIdleHello(t, 50*time.Millisecond, gate, started)
	go func() {
		<-started
		time.Sleep(200 * time.Millisecond) // four of the plugin's timeouts
		close(gate)
	}()
	out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(echoCall))
	if err != nil || !strings.Contains(string(out), `"hi"`) {
		t.Fatalf("call behind a slow activation: %s, %v", out, err)
	}
}

func TestIdleTimeoutReleasesAndNextCallReactivates(t *testing.T) {
	wasm := helloWasm(t)
	p, err := Load(t.Context(), Options{
		Name: "hello", Wasm: wasm, Timeout: time.Minute, MemoryMB: 64, MaxInstances: 2,
		MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t),
		HostFunctions: hostfn.Functions("hello", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
		IdleTimeout:   time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	p.Idle() // the load is done: the idle timeout applies from now
	for round := range 3 {
		if _, err := p.Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		// Wait (hang guard only) for the idle timeout to release it.
		deadline := time.Now().Add(time.Minute)
		// Idle's, then one a round at least (on a slow machine the 1ms
		// timeout may also release an activation before its caller takes
		// it; the caller then activates again). Once the call has returned
		// nothing activates it again.
		for s := p.Lifecycle(); s.Active || s.Releases < int64(round+2); s = p.Lifecycle() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: not released after its idle timeout: %+v", round, p.Lifecycle())
			}
			time.Sleep(time.Millisecond)
		}
		if inUse, idle, _ := p.InstanceStats(); inUse != 0 || idle != 0 {
			t.Fatalf("round %d: released, yet %d in use and %d idle instances", round, inUse, idle)
		}
	}
}

func TestMinInstancesKeepsThePluginWarm(t *testing.T) {
	wasm := helloWasm(t)
	p, err := Load(t.Context(), Options{
		Name: "hello", Wasm: wasm, Timeout: time.Minute, MemoryMB: 64, MaxInstances: 2,
		MaxOutputBytes: 1 << 20, CacheDir: testutil.CompilationCacheDir(t),
		HostFunctions: hostfn.Functions("hello", hclog.NewNullLogger(), dropNotifier{}, nil, nil),
		IdleTimeout:   time.Millisecond, MinInstances: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	p.Idle()
	if _, err := p.Call(t.Context(), abi.ExportCallTool, []byte(echoCall)); err != nil {
		t.Fatal(err)
	}
	s := p.Lifecycle()
	if !s.Active || s.Releases != 0 || s.Activations != 1 {
		t.Fatalf("with min_instances 1: %+v, want active since its load, never released", s)
	}
}

func helloWasm(t *testing.T) []byte {
	t.Helper()
	wasm, err := os.ReadFile(testutil.GoPlugin(t, "plugins/hello"))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// TestDeflatedModuleReactivates: a plugin left released is deflated, and
// its next call inflates the module and serves.
func TestDeflatedModuleReactivates(t *testing.T) {
	p := loadIdleHello(t, time.Minute, nil, nil)
	p.actMu.Lock() // replace the release's pending deflate with one due now
	if p.deflateTimer != nil && p.deflateTimer.Stop() {
		p.activity.Done()
	}
	p.deflateTimer, p.deflateDelay = nil, 0
	p.actMu.Unlock()
	p.scheduleDeflate()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) { // a hang guard
		p.source.mu.Lock()
		deflated := p.source.deflated
		p.source.mu.Unlock()
		if deflated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the released plugin's module was never deflated")
		}
	}
	out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(echoCall))
	if err != nil || !strings.Contains(string(out), `"hi"`) {
		t.Fatalf("call after deflating: %s, %v", out, err)
	}
}
