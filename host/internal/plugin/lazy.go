package plugin

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host/internal/telemetry"
)

// A plugin is active while it holds a compiled module and a pool of
// instances: from its first call until it has had no call for its idle
// timeout. Releasing closes the instances, so that an idle plugin holds no
// Wasm memory; it keeps its compiled module while the host's bound on kept
// code allows (kept.go). Activation takes the kept module back, or
// compiles the module again, from the on-disk compilation cache when there
// is one, and is done once for any number of calls waiting on it.

// compileSource is what a plugin is compiled from, kept for activations
// after the first.
type compileSource struct {
	mu       sync.Mutex
	wasm     []byte // the module as compiled (after the rewrite)
	deflated bool   // wasm is deflated
	config   map[string]string
	runtime  wazero.RuntimeConfig
	// interpreter: runtime's settings for wazero's interpreter.
	interpreter wazero.RuntimeConfig
	hostFuncs   []extism.HostFunction
	key         codeKey // the module's digest, interrupts and cache directory
}

// compileSettings is what an activation compiles with, read under mu: a
// plugin made from a description sets these (useSource) at each of its
// activations, which a background compile can run beside.
type compileSettings struct {
	config      map[string]string
	runtime     wazero.RuntimeConfig
	interpreter wazero.RuntimeConfig
	hostFuncs   []extism.HostFunction
	key         codeKey
}

// settings returns a copy of what s compiles with.
func (s *compileSource) settings() compileSettings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return compileSettings{config: s.config, runtime: s.runtime, interpreter: s.interpreter, hostFuncs: s.hostFuncs, key: s.key}
}

// activation is one compiled module and the instances made of it; its
// machine code is shared with the other plugins of the same digest
// (shared.go).
type activation struct {
	compiled *extism.CompiledPlugin
	code     *sharedCode
	codes    *CodeCache
	cost     int64 // what the compiled module counts when kept (keptCost)
	pool     *pool
	// interpreted is set for a module run by wazero's interpreter until
	// its compiled activation replaces it (interpret.go); code is nil.
	interpreted bool
}

// errActivationTimeout is a wait for an activation that outlasted the
// plugin's timeout and MinActivationWait.
var errActivationTimeout = errors.New("waiting for the plugin to activate: not active in time")

// pendingActivation is an activation under way; done is closed when err
// is set (nil: p.act is the new activation).
type pendingActivation struct {
	done chan struct{}
	err  error
	// waited is the span of the call that started the activation waiting
	// for it (a no-op span when not tracing): the activation's span is its
	// child.
	waited trace.Span
}

// compress deflates a module for keeping while the plugin is idle: a Go
// module of 3.6 MB keeps about a quarter of that (BENCHMARKS.md).
func compress(wasm []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(wasm); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return slices.Clip(buf.Bytes()), nil
}

// activationSource returns the module to compile for an activation after
// the load's.
func (p *Plugin) activationSource() ([]byte, error) {
	if p.described != nil { // made from a description: not read yet
		return p.describedSource(p.lifetime)
	}
	p.source.mu.Lock()
	wasm, deflated := p.source.wasm, p.source.deflated
	p.source.mu.Unlock()
	if !deflated {
		return wasm, nil
	}
	wasm, err := io.ReadAll(flate.NewReader(bytes.NewReader(wasm)))
	if err != nil {
		return nil, fmt.Errorf("read the kept module: %w", err)
	}
	return wasm, nil
}

// deflateDelay is how long a plugin stays released before its kept module
// is deflated: a plugin called soon after a release (the first call after
// start, say) never pays for deflating it, nor do hosts that live only
// seconds (tests, where compress/flate under -race took ~2 s a plugin).
const deflateDelay = 10 * time.Second

// scheduleDeflate deflates the kept module once the plugin has stayed
// released for deflateDelay. The timer is the plugin's: Close stops it,
// or waits for the deflate it started (activity).
func (p *Plugin) scheduleDeflate() {
	p.actMu.Lock()
	defer p.actMu.Unlock()
	if p.closed || p.deflateTimer != nil {
		return
	}
	p.activity.Add(1)
	p.deflateTimer = time.AfterFunc(p.deflateDelay, func() {
		defer p.activity.Done()
		p.actMu.Lock()
		p.deflateTimer = nil
		still := !p.closed && p.act == nil
		p.actMu.Unlock()
		if still && p.deflateSource() && p.onRelease != nil {
			// The whole module and the compressor's state are now
			// garbage: 100 Go plugins' deflates left the RSS at twice what
			// it was before them until the host handed it back.
			p.onRelease()
		}
	})
}

// deflateSource deflates the kept module, once, off any call's path, and
// reports whether it did so now.
func (p *Plugin) deflateSource() bool {
	p.source.mu.Lock()
	defer p.source.mu.Unlock()
	if p.source.deflated || p.source.wasm == nil {
		return false
	}
	z, err := compress(p.source.wasm)
	if err != nil {
		p.logger.Warn("cannot deflate the idle plugin's module; keeping it whole", "error", err)
		return false
	}
	p.source.wasm, p.source.deflated = z, true
	return true
}

// compileActivation compiles wasm (the module after the rewrite), over
// the compilation cache it shares with the plugins of the same digest, and
// makes an empty pool for it.
func (p *Plugin) compileActivation(ctx context.Context, wasm []byte) (*activation, error) {
	src := p.source.settings()
	if src.key.cacheDir != "" {
		sweepCompiled(filepath.Join(src.key.cacheDir, string(src.key.interrupts)), p.logger)
	}
	code := p.codes.acquire(src.key, p.logger)
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}, Config: src.config}
	code.compileMu.Lock()
	compiled, err := compileCached(ctx, p.compileTimeout, manifest, extism.PluginConfig{
		RuntimeConfig:             src.runtime.WithCompilationCache(code.cache),
		EnableWasi:                true,
		EnableHttpResponseHeaders: true,
	}, src.hostFuncs, src.key.cacheDir, p.logger)
	if err == nil {
		p.codes.compiled(code)
		p.compiledOnce.Store(true) // interpret.go: no more interpreting
	}
	code.compileMu.Unlock()
	if err != nil {
		_ = p.codes.release(context.WithoutCancel(ctx), code)
		return nil, fmt.Errorf("compile: %w", err)
	}
	return p.newActivation(compiled, code, keptCost(len(wasm))), nil
}

// newActivation makes an activation of a compiled module, with an empty
// pool: after a compile, or over the module a released plugin kept.
func (p *Plugin) newActivation(compiled *extism.CompiledPlugin, code *sharedCode, cost int64) *activation {
	a := &activation{compiled: compiled, code: code, codes: p.codes, cost: cost}
	a.pool = newPool(p.maxInstances, func(ctx context.Context) (*instance, error) {
		ctx, span := telemetry.Start(ctx, "instantiate "+p.name, trace.WithAttributes(telemetry.Plugin.String(p.name)))
		defer span.End()
		inst, err := p.newInstance(ctx, compiled)
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		return inst, err
	}, poolBudget{
		budget:     p.budget,
		cost:       p.memoryBytes,
		owner:      p.name,
		budgetWait: p.timeout,
		evictable:  p.evictable.Load,
		evictions:  &p.evictions,
		emptied:    func() { p.evicted(a) },
	})
	return a
}

// close waits (bounded by ctx) for the calls on the activation's instances
// and frees them and the compiled module; the last plugin holding the
// shared code frees it too.
func (a *activation) close(ctx context.Context) error {
	err := a.pool.close(ctx)
	if ferr := a.free(ctx); ferr != nil && err == nil {
		err = ferr
	}
	return err
}

// free frees the compiled module of an activation whose pool is closed;
// the last plugin holding the shared code frees it too.
func (a *activation) free(ctx context.Context) error {
	err := a.compiled.Close(context.WithoutCancel(ctx))
	if a.code == nil { // interpreted: no shared code
		return err
	}
	if cerr := a.codes.release(context.WithoutCancel(ctx), a.code); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// MinActivationWait is the least time a call waits for its plugin to be
// activated. Activation is the host's work (compiling from the on-disk
// cache, instantiating), not the plugin's, so a plugin whose timeout is
// shorter than an activation on a slow or busy machine still gets its
// calls; the call's own timeout starts when it runs.
const MinActivationWait = 30 * time.Second

// acquire returns the plugin's activation for one call, activating the
// plugin first when it is idle; the caller must call release. Concurrent
// callers wait for one activation. The wait is bounded by ctx and by the
// plugin's timeout or MinActivationWait, whichever is longer; the
// activation itself goes on for the callers after.
func (p *Plugin) acquire(ctx context.Context) (*activation, error) {
	return p.acquireWith(ctx, true)
}

// acquireWith is acquire; interpret lets an activation it starts run
// interpreted while the module compiles (interpret.go).
func (p *Plugin) acquireWith(ctx context.Context, interpret bool) (*activation, error) {
	wait, cancel := context.WithTimeout(ctx, max(p.timeout, p.activationWait))
	defer cancel()
	var waitSpan trace.Span // started when the call has to wait
	defer func() {
		if waitSpan != nil {
			waitSpan.End()
		}
	}()
	for {
		p.actMu.Lock()
		if p.closed {
			p.actMu.Unlock()
			return nil, errPoolClosed
		}
		if p.act != nil {
			p.calls++
			a := p.act
			p.actMu.Unlock()
			return a, nil
		}
		if waitSpan == nil {
			_, waitSpan = telemetry.Start(ctx, "activation wait "+p.name, trace.WithAttributes(telemetry.Plugin.String(p.name)))
		}
		pending := p.activating
		if pending == nil {
			pending = &pendingActivation{done: make(chan struct{}), waited: waitSpan}
			p.activating = pending
			p.activity.Go(func() { p.activate(pending, interpret) })
		}
		p.actMu.Unlock()
		select {
		case <-pending.done:
			if pending.err != nil {
				return nil, fmt.Errorf("activate: %w", pending.err)
			}
		case <-wait.Done():
			if ctx.Err() == nil {
				return nil, errActivationTimeout
			}
			return nil, fmt.Errorf("waiting for the plugin to activate: %w", ctx.Err())
		}
	}
}

// activate compiles the plugin for the callers waiting on pending. It runs
// under the plugin's lifetime, not a caller's context: a caller that gives
// up does not fail the others.
func (p *Plugin) activate(pending *pendingActivation, interpretAllowed bool) {
	if p.beforeActivate != nil {
		p.beforeActivate()
	}
	spanCtx, span := telemetry.Start(trace.ContextWithSpan(p.lifetime, pending.waited), "activate "+p.name,
		trace.WithAttributes(telemetry.Plugin.String(p.name)))
	defer span.End()
	// step runs one part of the activation in a child span of its own; its
	// ctx is the plugin's lifetime with that span.
	step := func(name string, f func(ctx context.Context) error) error {
		ctx, s := telemetry.Start(spanCtx, name+" "+p.name, trace.WithAttributes(telemetry.Plugin.String(p.name)))
		err := f(ctx)
		if err != nil {
			s.SetStatus(codes.Error, err.Error())
		}
		s.End()
		return err
	}
	source := "kept compiled code"
	a, err := p.takeKept(), error(nil)
	if a == nil {
		interpret := interpretAllowed && p.interpretFirst()
		var wasm []byte
		err = step("read module", func(context.Context) (err error) {
			wasm, err = p.activationSource()
			return err
		})
		switch {
		case err != nil:
		case interpret:
			source = "interpreted"
			err = step("prepare interpreter", func(ctx context.Context) (err error) {
				a, err = p.interpretActivation(ctx, wasm) // interpret.go
				return err
			})
		default:
			source = "compiled (or read from the compilation cache)"
			err = step("compile", func(ctx context.Context) (err error) {
				a, err = p.compileActivation(ctx, wasm)
				return err
			})
		}
	}
	span.SetAttributes(attribute.String("mcphost.activation.source", source))
	defer func() {
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
	}()
	if err == nil && p.described != nil {
		err = step("check description", func(ctx context.Context) error {
			return p.firstActivation(ctx, a) // describe.go
		})
	}
	if err == nil && p.minInstances > 0 {
		_ = step("warm instances", func(ctx context.Context) error {
			p.warm(ctx, a)
			return nil
		})
	}
	p.actMu.Lock()
	p.activating = nil
	if err == nil && p.closed {
		err = errPoolClosed
		p.activity.Go(func() { _ = a.close(context.Background()) })
	}
	if err == nil {
		p.described = nil
		p.act = a
		p.activations.Add(1)
		p.lastUsed = time.Now()
		p.armIdle() // released again if no caller uses it
		if a.interpreted {
			p.upgradeLater()
		}
	}
	pending.err = err
	p.actMu.Unlock()
	close(pending.done)
	switch {
	case err == nil, errors.Is(err, errPoolClosed):
	case p.lifetime.Err() != nil:
		// Closed meanwhile (a command's host closing, a reload): nobody
		// waits for this activation any more.
		p.logger.Debug("plugin activation stopped: the plugin was closed", "error", err)
	default:
		p.logger.Error("plugin activation failed", "error", err)
	}
}

// warm makes the min_instances instances of a new activation before it
// serves, so that a latency-critical plugin's first calls find them made.
// One that cannot be made is logged; calls make their own as usual.
func (p *Plugin) warm(ctx context.Context, a *activation) {
	if p.minInstances == 0 {
		return
	}
	if err := a.pool.warm(ctx, p.minInstances); err != nil {
		p.logger.Warn("cannot make the instances min_instances keeps warm", "min_instances", p.minInstances, "error", err)
	}
}

// release ends a call begun with acquire.
func (p *Plugin) release() {
	p.actMu.Lock()
	defer p.actMu.Unlock()
	p.calls--
	p.lastUsed = time.Now()
	if p.calls == 0 {
		p.closeRetiredLocked()
		p.armIdle()
	}
}

// releasable reports whether an idle timeout may release the plugin.
// A hyper-mcp plugin's one instance keeps state between calls, as
// hyper-mcp lets it; it is never released.
func (p *Plugin) releasable() bool {
	return p.idleTimeout > 0 && p.flavor == FlavorMCPHost
}

// armIdle starts the idle timer. The caller holds actMu.
func (p *Plugin) armIdle() {
	if !p.releasable() || !p.settled || p.act == nil || p.closed {
		return
	}
	if p.idleTimer == nil {
		p.idleTimer = time.AfterFunc(p.idleFor(), p.idleExpired)
		return
	}
	p.idleTimer.Reset(p.idleFor())
}

// idleExpired releases the plugin when it has had no call for its idle
// timeout, or trims it to min_instances.
func (p *Plugin) idleExpired() {
	p.actMu.Lock()
	defer p.actMu.Unlock()
	if p.closed || p.act == nil || p.calls > 0 {
		return
	}
	if left := p.idleFor() - time.Since(p.lastUsed); left > 0 {
		p.idleTimer.Reset(left)
		return
	}
	p.releaseLocked()
}

// Idle releases the plugin's instances and compiled module now if no call
// is running (the host calls it once the plugin's lists are read, so that
// an unused plugin costs nothing until its first call). The idle timeout
// applies from then on: not between the calls of the load. With
// min_instances, or for a plugin that is never released (idle_timeout
// "0", or a hyper-mcp plugin), it keeps them.
func (p *Plugin) Idle() {
	p.actMu.Lock()
	defer p.actMu.Unlock()
	p.settled = true
	if p.closed || p.act == nil || p.calls > 0 || !p.releasable() {
		return
	}
	p.releaseLocked()
}

// releaseLocked drops the activation, or with min_instances its idle
// instances beyond that many. Its compiled module is kept (kept.go) when
// the host keeps code. The caller holds actMu and no call holds the
// activation.
func (p *Plugin) releaseLocked() {
	a := p.act
	if p.minInstances > 0 {
		p.activity.Go(func() { a.pool.trim(p.minInstances) })
		return
	}
	p.act = nil
	p.releases.Add(1)
	p.activity.Go(func() {
		if err := a.pool.close(context.Background()); err != nil {
			p.logger.Warn("releasing an idle plugin", "error", err)
		}
		if p.keepCompiled(a) {
			if p.onRelease != nil {
				p.onRelease() // the instances' garbage
			}
			return
		}
		if err := a.free(context.Background()); err != nil {
			p.logger.Warn("releasing an idle plugin", "error", err)
		}
		p.freed()
	})
}

// freed follows the release of the plugin's compiled module: its source
// is deflated later, and the host may hand the garbage back to the OS.
func (p *Plugin) freed() {
	p.scheduleDeflate()
	if p.onRelease != nil {
		p.onRelease()
	}
}

// keepCompiled keeps the compiled module of a released activation (its
// pool closed) for the plugin's next activation, and reports whether it
// did: not when the host keeps no code, the plugin is closed, or it is
// being activated again meanwhile (compiling anew). The CodeCache may free it at
// once, or later, to stay within its bound (kept.go).
func (p *Plugin) keepCompiled(a *activation) bool {
	if a.interpreted || !p.codes.keeps() {
		return false
	}
	k := &keptCode{a: a, done: make(chan struct{}), onFree: p.freed}
	p.actMu.Lock()
	if p.closed || p.act != nil || p.activating != nil || p.kept != nil {
		p.actMu.Unlock()
		return false
	}
	p.kept = k
	p.actMu.Unlock()
	p.codes.keep(k)
	return true
}

// takeKept returns a new activation over the compiled module the plugin
// kept since its release, or nil when it kept none or the host has freed
// it since.
func (p *Plugin) takeKept() *activation {
	p.actMu.Lock()
	k := p.kept
	p.kept = nil
	p.actMu.Unlock()
	if k == nil || !p.codes.take(k) {
		return nil
	}
	return p.newActivation(k.a.compiled, k.a.code, k.a.cost)
}

// evicted releases the plugin's activation once the memory budget has
// taken its last instance, when no call holds it, as an idle timeout
// does (its compiled module is kept within the host's bound). With min_instances, or for a
// plugin that is never released, it stays compiled.
func (p *Plugin) evicted(a *activation) {
	p.actMu.Lock()
	defer p.actMu.Unlock()
	if p.closed || p.act != a || p.calls > 0 || !p.releasable() || p.minInstances > 0 {
		return
	}
	if inUse, idle, _ := a.pool.stats(); inUse > 0 || idle > 0 {
		return
	}
	p.releaseLocked()
}

// LifecycleStats counts the plugin's activations, its releases after an
// idle timeout (or Idle), and the instances made; active says whether it
// holds a compiled module now.
type LifecycleStats struct {
	Active      bool
	Activations int64
	Releases    int64
	Instances   int64
	// Evictions counts idle instances closed to make room in the memory
	// budget for another plugin's; MemoryHeld is what the plugin's
	// instances count against it now (budget.go).
	Evictions  int64
	MemoryHeld int64
}

// Lifecycle reports the plugin's LifecycleStats.
func (p *Plugin) Lifecycle() LifecycleStats {
	p.actMu.Lock()
	a := p.act
	p.actMu.Unlock()
	s := LifecycleStats{Active: a != nil, Activations: p.activations.Load(), Releases: p.releases.Load(), Instances: p.instances.Load(), Evictions: p.evictions.Load()}
	if a != nil && p.budget != nil {
		s.MemoryHeld = p.budget.heldBy(a.pool)
	}
	return s
}

// InstanceStats reports the plugin's instances: in use by a call, idle and
// warm, and the most that may exist at once (max_instances). An inactive
// plugin has none.
func (p *Plugin) InstanceStats() (inUse, idle, capacity int) {
	p.actMu.Lock()
	a := p.act
	p.actMu.Unlock()
	if a == nil {
		return 0, 0, p.maxInstances
	}
	return a.pool.stats()
}

// Close waits (bounded by ctx) for running calls to end and frees the
// plugin's runtime.
func (p *Plugin) Close(ctx context.Context) error {
	p.actMu.Lock()
	p.closed = true
	a := p.act
	p.act = nil
	if p.idleTimer != nil {
		p.idleTimer.Stop()
	}
	if p.deflateTimer != nil && p.deflateTimer.Stop() {
		p.activity.Done() // its function will not run
	}
	k := p.kept
	p.kept = nil
	retired := p.retired
	p.retired = nil
	p.actMu.Unlock()
	p.stop()
	var err error
	if a != nil {
		err = a.close(ctx)
	}
	for _, r := range retired {
		if rerr := r.close(ctx); rerr != nil && err == nil {
			err = rerr
		}
	}
	if k != nil {
		if p.codes.take(k) {
			if ferr := k.a.free(ctx); ferr != nil && err == nil {
				err = ferr
			}
		} else {
			<-k.done // freed by the cache, in the goroutine that dropped it
		}
	}
	p.activity.Wait()
	closeMounts(p.mounts)
	return err
}
