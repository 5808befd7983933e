package plugin

import "context"

// Prepare does, for a plugin that has never been activated, what its first
// call would, compiled: it activates it (compiling its module, which fills
// the on-disk compilation cache; for a plugin made from a description,
// reading its module and checking the description against it), as one of
// the host's background compiles (slots.go), then releases it again unless
// a call holds it by then. It reports whether it activated
// the plugin; a plugin activated before, or being activated by a call, is
// left as it is. The host prepares, in the background, the plugins it
// serves from the descriptions their modules ship, so that their first
// calls find the code compiled and a description that lies is found
// before a client meets it.
func (p *Plugin) Prepare(ctx context.Context) (bool, error) {
	p.actMu.Lock()
	started := p.closed || p.act != nil || p.activating != nil || p.activations.Load() > 0
	p.actMu.Unlock()
	if started {
		return false, nil
	}
	// One of the host's background compiles, after those of plugins that
	// calls already use (slots.go).
	if err := p.codes.slots.acquire(ctx, false); err != nil {
		return false, err
	}
	_, err := p.acquireWith(ctx, false) // compiled, not interpreted: the point is the code
	p.codes.slots.release()
	if err != nil {
		return true, err
	}
	p.release()
	p.Idle()
	return true, nil
}
