package plugin

import "context"

// Prepare does, for a plugin that has never been activated, what its first
// call would, in two steps, so that a call meanwhile never waits for the
// compiler: it compiles the module, as one of the host's background
// compiles (slots.go), which fills the on-disk compilation cache (the
// compiled module is then kept for the plugin's next activation, when the
// host keeps code); then, unless a call has activated the plugin by then,
// it activates it from that code (for a plugin made from a description,
// checking the description against the module) and releases it again. It
// reports whether it compiled the plugin; a plugin activated before, or
// being activated, is left as it is. The host prepares, in the background,
// the plugins it serves from the descriptions their modules ship, so that
// their first calls find the code compiled and a description that lies is
// found before a client meets it.
func (p *Plugin) Prepare(ctx context.Context) (bool, error) {
	if p.started() {
		return false, nil
	}
	// One of the host's background compiles, after those of plugins that
	// calls already use.
	if err := p.codes.slots.acquire(ctx, false); err != nil {
		return false, err
	}
	err := p.compileAhead(ctx)
	p.codes.slots.release()
	if err != nil {
		return true, err
	}
	if p.started() { // a call came meanwhile: its activation checks
		return true, nil
	}
	if _, err := p.acquireWith(ctx, false); err != nil {
		return true, err
	}
	p.release()
	p.Idle()
	return true, nil
}

// started reports whether the plugin is closed, active, being activated,
// or was activated before.
func (p *Plugin) started() bool {
	p.actMu.Lock()
	defer p.actMu.Unlock()
	return p.closed || p.act != nil || p.activating != nil || p.activations.Load() > 0
}

// compileAhead compiles the module outside any activation and keeps the
// compiled module for the next one (freed if the host keeps no code, or the
// plugin was activated meanwhile).
func (p *Plugin) compileAhead(ctx context.Context) error {
	wasm, err := p.activationSource()
	if err != nil {
		return err
	}
	a, err := p.compileActivation(ctx, wasm)
	if err != nil {
		return err
	}
	if !p.keepCompiled(a) {
		return a.close(context.WithoutCancel(ctx))
	}
	return nil
}
