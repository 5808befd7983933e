package plugin

import (
	"context"
	"fmt"
	"time"

	extism "github.com/extism/go-sdk"
)

// A plugin served from the description its module ships has most likely
// never been compiled on this machine: its first activation would wait for
// wazero's compiler, seconds for a Go plugin on a busy machine. So that
// activation runs the module in wazero's interpreter instead, which is
// ready in a fraction of that (BENCHMARKS.md: 0.35-0.6 s against 3-7 s at
// load 5, for plugins/hello), and compiles it meanwhile; once compiled, the
// compiled activation replaces the interpreted one for the calls after.
// The interpreted module is the same rewritten module under the same
// runtime settings (memory cap, interrupt checks, host functions), so the
// sandbox is the same; only its speed differs (about ten times slower a
// call). RATIONALE.md says why.

// interpretFirst reports whether the plugin's next activation runs
// interpreted: for a plugin made from a description that asked for it
// (DescribedHooks.InterpretFirst), until its module has been compiled once.
func (p *Plugin) interpretFirst() bool {
	return p.interpretUntilCompiled && !p.compiledOnce.Load()
}

// interpretActivation makes an activation of wasm (the module after the
// rewrite) in wazero's interpreter, over a compilation cache of its own:
// nothing of it is shared, kept or written to disk.
func (p *Plugin) interpretActivation(ctx context.Context, wasm []byte) (*activation, error) {
	src := p.source.settings()
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}, Config: src.config}
	compiled, err := compile(ctx, p.compileTimeout, manifest, extism.PluginConfig{
		RuntimeConfig:             src.interpreter,
		EnableWasi:                true,
		EnableHttpResponseHeaders: true,
	}, src.hostFuncs)
	if err != nil {
		return nil, fmt.Errorf("interpret: %w", err)
	}
	a := p.newActivation(compiled, nil, 0)
	a.interpreted = true
	p.logger.Debug("plugin runs interpreted while it compiles")
	return a, nil
}

// upgradeLater starts the compile that replaces interpreted activations,
// unless one is under way. The caller holds actMu.
func (p *Plugin) upgradeLater() {
	if p.upgrading || p.closed {
		return
	}
	p.upgrading = true
	p.activity.Go(p.upgrade)
}

// upgrade compiles the plugin's module, as one of the host's background
// compiles, and puts the compiled activation in place of the interpreted
// one serving. Calls that hold the interpreted activation finish on it; it
// is closed once no call holds the plugin (closeRetiredLocked). When the
// interpreted activation was released meanwhile, within the plugin's
// idle_timeout, the compiled one becomes active as if it had come first;
// otherwise its module is kept for the next activation if the host keeps
// code, else freed. Either way the compile filled the on-disk cache.
func (p *Plugin) upgrade() {
	// One of the host's few background compiles, before any that only
	// prepares a plugin no call has asked for.
	err := p.codes.slots.acquire(p.lifetime, true)
	var ac *activation
	if err == nil {
		// The module is read now, not held while waiting for the slot.
		var wasm []byte
		if wasm, err = p.activationSource(); err == nil {
			ac, err = p.compileActivation(p.lifetime, wasm)
		}
		p.codes.slots.release()
	}
	p.actMu.Lock()
	p.upgrading = false
	if err != nil {
		p.actMu.Unlock()
		if p.lifetime.Err() == nil {
			p.logger.Warn("compiling the plugin failed; it runs interpreted until released", "error", err)
		}
		return
	}
	p.compiledOnce.Store(true)
	switch {
	case p.closed:
		p.actMu.Unlock()
		_ = ac.close(context.Background())
		return
	case p.act != nil && p.act.interpreted:
		p.retired = append(p.retired, p.act)
		p.act = ac
		if p.calls == 0 {
			p.closeRetiredLocked()
		}
	case p.act == nil && p.activating == nil && p.kept == nil && time.Since(p.lastUsed) < p.idleTimeout:
		p.act = ac
		p.armIdle()
	default:
		p.actMu.Unlock()
		if !p.keepCompiled(ac) {
			_ = ac.close(context.Background())
		}
		return
	}
	p.actMu.Unlock()
	p.logger.Debug("plugin compiled; calls run compiled from now on")
}

// interpretedIdle is how long an interpreted activation stays without a
// call before it is released, when that is shorter than the plugin's
// idle_timeout: an interpreted module holds several times the memory of
// its machine code, and a burst of first calls to many plugins would
// otherwise hold one each until its compile's turn. Its compile goes on,
// and its code is kept for the next activation (kept.go) when the host
// keeps code.
const interpretedIdle = 2 * time.Second

// idleFor is how long the plugin may go without a call before a release.
// The caller holds actMu.
func (p *Plugin) idleFor() time.Duration {
	if p.act != nil && p.act.interpreted {
		return min(p.idleTimeout, interpretedIdle)
	}
	return p.idleTimeout
}

// closeRetiredLocked closes the retired interpreted activations, which no
// call holds any more. The caller holds actMu, with no call running.
func (p *Plugin) closeRetiredLocked() {
	for _, a := range p.retired {
		p.activity.Go(func() {
			if err := a.close(context.Background()); err != nil {
				p.logger.Warn("closing the interpreted activation", "error", err)
			}
		})
	}
	p.retired = nil
}
