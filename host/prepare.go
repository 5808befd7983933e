package host

import (
	"context"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/internal/plugin"
)

// A plugin served from the description its module ships (described.go)
// is served before its module is compiled: on a machine that never ran it
// (a new replica, a fresh container, a CI run) its first call would
// compile it, a second or more for a Go plugin. So once the host serves,
// it prepares such plugins in the background, a few at a time
// (prepareWorkers): each is activated (compiled, which fills the on-disk
// compilation cache, and its description checked against the module) and
// released again. A call to a plugin not prepared yet does not wait for
// the queue: it activates the plugin itself, in wazero's interpreter while
// the module compiles (package plugin, interpret.go), and the queue then
// skips it. RATIONALE.md says why.

// prepareWorkers is how many plugins are prepared at once: as many as the
// host compiles in the background (plugin.BackgroundCompiles, a quarter of
// the CPUs, at least one), so that calls keep the rest. Compiles for
// plugins that calls already use go first (package plugin, slots.go).
var prepareWorkers = plugin.BackgroundCompiles

// preparer is the queue of plugins to prepare and its workers.
type preparer struct {
	mu      sync.Mutex
	queue   []*loadedPlugin
	pending int           // queued or being prepared
	began   time.Time     // when the queue last went from empty to not
	wake    chan struct{} // a buffered signal: the queue grew
	workers sync.WaitGroup
}

// prepareLater queues the generations among lps that serve a description
// their module ships and have not been activated yet.
func (h *Host) prepareLater(lps []*loadedPlugin) {
	if !h.settings.BackgroundCompile {
		return
	}
	p := &h.prep
	p.mu.Lock()
	added := 0
	for _, lp := range lps {
		if lp.unverified {
			if p.pending == 0 && added == 0 {
				p.began = time.Now()
			}
			p.queue = append(p.queue, lp)
			added++
		}
	}
	p.pending += added
	p.mu.Unlock()
	if added > 0 {
		h.logger.Debug("preparing plugins in the background", "plugins", added)
		for range min(added, prepareWorkers) {
			select {
			case p.wake <- struct{}{}:
			default:
			}
		}
	}
}

// startPreparing starts the workers, which stop when ctx ends.
func (h *Host) startPreparing(ctx context.Context) {
	h.prep.wake = make(chan struct{}, prepareWorkers)
	for range prepareWorkers {
		h.prep.workers.Go(func() { h.prepareLoop(ctx) })
	}
}

// prepareLoop prepares queued plugins until ctx ends.
func (h *Host) prepareLoop(ctx context.Context) {
	for {
		lp := h.prep.next()
		if lp == nil {
			select {
			case <-ctx.Done():
				return
			case <-h.prep.wake:
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		began := time.Now()
		activated, err := lp.plugin.Prepare(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			// The activation logged why; a stale description is being
			// reloaded (described.go).
			h.logger.Debug("background preparation failed", "plugin", lp.cfg.Name, "error", err)
		case activated:
			h.metrics.prepared.Inc()
			h.logger.Debug("plugin prepared in the background", "plugin", lp.cfg.Name, "took", time.Since(began))
		}
		h.prep.done(h)
	}
}

// next takes the next queued plugin, or nil when there is none.
func (p *preparer) next() *loadedPlugin {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return nil
	}
	lp := p.queue[0]
	p.queue[0] = nil
	p.queue = p.queue[1:]
	return lp
}

// done counts one preparation ended, and logs when the queue is through.
func (p *preparer) done(h *Host) {
	p.mu.Lock()
	p.pending--
	last, took := p.pending == 0, time.Since(p.began)
	p.mu.Unlock()
	if last {
		h.logger.Info("background compilation done: the plugins served from their shipped descriptions are compiled (or failed, as logged)", "took", took.Round(time.Millisecond))
	}
}

// queued is how many plugins are queued or being prepared.
func (p *preparer) queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pending
}
