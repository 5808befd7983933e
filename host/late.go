package host

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/internal/config"
)

// A plugin that takes long to load (a large module compiled on a busy
// machine, one that wazero compiles slowly) delays only itself: `serve`
// waits for its plugins at most [server] start_wait, then serves those
// that are ready; each plugin still loading joins when its load ends, as a
// reload adds a plugin (clients hear list_changed), or is logged as not
// loaded. RATIONALE.md, "A slow plugin delays only itself".

// latePlugins are the plugins whose loads New stopped waiting for. Their
// loads belong to the host: Close cancels them and closes what they made.
type latePlugins struct {
	cancel  context.CancelFunc // ends the loads under way
	loads   sync.WaitGroup     // the loads under way
	results chan lateResult    // each late load's end, for the background loop

	mu      sync.Mutex
	loading map[string]bool          // plugins still loading, by name
	arrived map[string]*loadedPlugin // loaded, for the next reload to serve
}

// lateResult is the end of a late plugin's load.
type lateResult struct {
	name string
	lp   *loadedPlugin
	err  error
}

// errStillLoading is loadPlugin's answer for a plugin whose load at start
// is still under way: a reload leaves it to that load.
var errStillLoading = errors.New("still loading since the host started")

// isLoading reports whether the plugin named name is still loading.
func (l *latePlugins) isLoading(name string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loading[name]
}

// takeArrived returns the plugins loaded late and not yet served, and
// forgets them: the caller serves or closes each.
func (l *latePlugins) takeArrived() map[string]*loadedPlugin {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	arrived := l.arrived
	l.arrived = map[string]*loadedPlugin{}
	return arrived
}

// arrive records the end of a late load: a loaded plugin waits for the
// next reload.
func (l *latePlugins) arrive(r lateResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.loading, r.name)
	if r.err == nil {
		l.arrived[r.name] = r.lp
	}
}

// loadAtStart loads the plugins of pcs in parallel, as loadPlugins does,
// but waits for them at most wait: the loads not done by then go on under
// h.late, and their slots are left nil with a nil error.
func (h *Host) loadAtStart(ctx context.Context, pcs []config.Plugin, wait time.Duration) ([]*loadedPlugin, []error) {
	loadCtx, cancel := context.WithCancel(ctx)
	late := &latePlugins{cancel: cancel, results: make(chan lateResult, len(pcs)),
		loading: map[string]bool{}, arrived: map[string]*loadedPlugin{}}
	h.late = late
	loaded := make([]*loadedPlugin, len(pcs))
	errs := make([]error, len(pcs))
	done := make([]chan struct{}, len(pcs))
	var mu sync.Mutex // guards finished and isLate
	finished, isLate := make([]bool, len(pcs)), make([]bool, len(pcs))
	for i, pc := range pcs {
		done[i] = make(chan struct{})
		late.loads.Go(func() {
			lp, err := h.loadPlugin(loadCtx, pc, nil, false)
			mu.Lock()
			finished[i] = true
			wasLate := isLate[i]
			if !wasLate {
				loaded[i], errs[i] = lp, err
			}
			mu.Unlock()
			if wasLate {
				late.results <- lateResult{name: pc.Name, lp: lp, err: err}
				return
			}
			close(done[i])
		})
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	expired := false
	for i, pc := range pcs {
		if !expired {
			select {
			case <-done[i]:
				continue
			case <-timer.C:
				expired = true
			case <-ctx.Done(): // stopped while starting: New ends the loads
				expired = true
			}
		}
		mu.Lock()
		if !finished[i] {
			isLate[i] = true
			late.mu.Lock()
			late.loading[pc.Name] = true
			late.mu.Unlock()
			h.logger.Warn("plugin still loading after start_wait; serving without it until it is ready", "plugin", pc.Name, "start_wait", wait)
		}
		mu.Unlock()
	}
	return loaded, errs
}

// lateArrived serves a plugin whose load ended after New: a reload picks
// it up (and anything else that changed meanwhile). A failed load is
// logged as serve logs one at start.
func (h *Host) lateArrived(ctx context.Context, r lateResult) {
	h.late.arrive(r)
	if r.err != nil {
		h.logger.Error("plugin not loaded", "plugin", r.name, "error", r.err)
		return
	}
	_ = h.reload(ctx, nil)
}

// closeLate ends the late loads still under way and closes every plugin
// they made that is not served.
func (h *Host) closeLate(ctx context.Context) {
	if h.late == nil {
		return
	}
	h.late.cancel()
	h.late.loads.Wait()
	for drained := false; !drained; {
		select {
		case r := <-h.late.results:
			if r.lp != nil {
				_ = r.lp.plugin.Close(ctx)
			}
		default:
			drained = true
		}
	}
	for _, lp := range h.late.takeArrived() {
		_ = lp.plugin.Close(ctx)
	}
}

// lateResults is the channel of late loads' ends; nil (never ready) when
// there are none.
func (h *Host) lateResults() <-chan lateResult {
	if h.late == nil {
		return nil
	}
	return h.late.results
}
