package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/config"
)

// debounce is how long the host waits after the last change to a watched
// file before reloading: editors and cp write a file in several steps.
const debounce = 50 * time.Millisecond

func sha256Sum(b []byte) [sha256.Size]byte { return sha256.Sum256(b) }

// Reload re-reads the config file (when the host was started from one) and
// every plugin file, builds a new generation of each plugin whose file or
// settings changed, and swaps them in. A plugin that fails to load keeps its
// old generation serving; a config that fails to validate changes nothing.
// Clients are told of the lists that changed (list_changed), and of errors
// (notifications/message at level error). The returned error lists what
// was not applied.
func (h *Host) Reload(ctx context.Context) error {
	return h.reload(ctx, nil)
}

// reload is Reload, also rebuilding (and so listing again) the plugins that
// announced a list change (announced: plugin name → kinds) even when their
// files did not change; clients hear of the lists that did change.
func (h *Host) reload(ctx context.Context, announced map[string]map[string]bool) error {
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	began := time.Now()

	cfg := h.cfg
	if cfg.Path != "" {
		next, err := config.Load(cfg.Path)
		if err != nil {
			err = fmt.Errorf("reload: config not applied, still serving the previous one: %w", err)
			h.metrics.reloads.WithLabelValues("failed").Inc()
			h.reportError(ctx, err)
			return err
		}
		// Compared as the files say them: flags (serve --http, --stateless)
		// override the file, and are not a change.
		if changed := config.ChangedServerKeys(cfg.Written, next.Written); len(changed) > 0 {
			h.logger.Warn("reload: [server] settings take effect on restart only; these changed and are not applied", "keys", changed)
		}
		// Server-wide settings stay as started; plugins follow the file.
		next.Server = cfg.Server
		// The file was checked against its own [server]; the host keeps
		// its cache, store, lock file and audit log where it started, so
		// the grants are checked against those too.
		if err := config.CheckStateGrants(next); err != nil {
			err = fmt.Errorf("reload: config not applied, still serving the previous one: %w", err)
			h.metrics.reloads.WithLabelValues("failed").Inc()
			h.reportError(ctx, err)
			return err
		}
		cfg = next
		checkReservations(h.logger, cfg)
	}

	current := map[string]*loadedPlugin{}
	keep := map[string]*loadedPlugin{}
	live := map[string]bool{} // listed from the plugin, not its cached description
	for _, lp := range h.plugins {
		current[lp.cfg.Name] = lp
		if announced[lp.cfg.Name] == nil || lp.liveLists() {
			keep[lp.cfg.Name] = lp
		} else {
			live[lp.cfg.Name] = true
		}
	}
	// Plugins whose load at start ended since are served as they are,
	// unless their file or settings changed meanwhile (late.go).
	arrived := h.late.takeArrived()
	for name, lp := range arrived {
		if keep[name] == nil {
			keep[name] = lp
		}
	}
	loaded, errs := h.loadPlugins(ctx, cfg.Plugins, keep, live)
	// A plugin with live lists that announced a change and is kept is
	// asked again, on its running instance (generation.go, liveLists).
	for i, lp := range loaded {
		if errs[i] == nil && lp == current[lp.cfg.Name] && announced[lp.cfg.Name] != nil && lp.liveLists() {
			errs[i] = lp.relist(ctx, h.logger)
		}
	}
	var next []*loadedPlugin
	var failures []error
	for i, pc := range cfg.Plugins {
		if errs[i] == nil {
			next = append(next, loaded[i])
			continue
		}
		if errors.Is(errs[i], errStillLoading) {
			continue // it joins when its load ends
		}
		old := current[pc.Name]
		if old != nil {
			errs[i] = fmt.Errorf("%w (the previous version keeps serving)", errs[i])
			next = append(next, old)
		}
		failures = append(failures, errs[i])
	}

	h.dropStateOf(h.plugins, cfg.Plugins)

	// Swap the catalog in before registering, so that a name a client sees
	// is always routable; then retire what is no longer used.
	hold, problems := h.vet(next, cfg.Server.LockFile)
	failures = append(failures, problems...)
	old := h.catalog.Load()
	c := buildCatalog(next, h.logger, hold)
	c.warnMoves(old, h.logger)
	h.catalog.Store(c)
	c.applyTo(h.server, old, h)
	if err := h.applyProfiles(cfg.Profiles, c); err != nil {
		failures = append(failures, err)
	}

	inNext := map[*loadedPlugin]bool{}
	for _, lp := range next {
		inNext[lp] = true
		old := current[lp.cfg.Name]
		switch {
		case announced[lp.cfg.Name] != nil && old != nil && old.hash == lp.hash && reflect.DeepEqual(old.cfg, lp.cfg):
			// Listed again at the plugin's word: counts, not the names
			// it chose, and not at info (it can do this every second).
			h.logRelisted(c, lp)
		case old != lp:
			h.logLoaded(c, lp)
		}
	}
	for _, lp := range h.plugins {
		if !inNext[lp] {
			h.retireLater(lp)
		}
	}
	for _, lp := range arrived {
		if !inNext[lp] { // its config changed or it went while it loaded
			h.retireLater(lp)
		}
	}
	for name := range current {
		if !containsPlugin(cfg.Plugins, name) {
			h.logger.Info("plugin removed", "plugin", name)
		}
	}
	var fresh []*loadedPlugin
	for _, lp := range next {
		if current[lp.cfg.Name] != lp {
			fresh = append(fresh, lp)
		}
	}
	h.prepareLater(fresh)
	h.plugins = next
	h.cfg = cfg

	for _, err := range failures {
		h.reportError(ctx, err)
	}
	h.logger.Debug("reload done", "took", time.Since(began), "plugins", len(next), "failed", len(failures))
	if len(failures) > 0 {
		h.metrics.reloads.WithLabelValues("failed").Inc()
	} else {
		h.metrics.reloads.WithLabelValues("ok").Inc()
	}
	return errors.Join(failures...)
}

func containsPlugin(pcs []config.Plugin, name string) bool {
	for _, pc := range pcs {
		if pc.Name == name {
			return true
		}
	}
	return false
}

// retireLater stops routing to lp and closes it once its last call ends.
func (h *Host) retireLater(lp *loadedPlugin) {
	idle := lp.retire()
	if h.tasks != nil {
		h.tasks.retired(lp) // its tasks fail now rather than hold it
	}
	h.retiring.Go(func() {
		<-idle
		if err := lp.plugin.Close(context.Background()); err != nil {
			h.logger.Warn("closing a retired plugin generation", "plugin", lp.cfg.Name, "error", err)
		}
	})
}

// reportError logs err and sends it to every client as a logging message at
// level error (clients that asked for logging/setLevel receive it).
func (h *Host) reportError(ctx context.Context, err error) {
	h.logger.Error("reload", "error", err)
	for ss := range h.sessions() {
		_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Logger: "mcphost", Data: err.Error()})
	}
}

// background runs until ctx ends: it watches the config and plugin files
// (unless [server] watch = false) and reloads after they change, and lists
// again the plugins that announced a list change.
func (h *Host) background(ctx context.Context) {
	defer close(h.done)
	var events <-chan fsnotify.Event
	var watchErrs <-chan error
	var watcher *fsnotify.Watcher
	h.reloadMu.Lock()
	watch := h.cfg.Server.Watch
	h.reloadMu.Unlock()
	if watch {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			h.logger.Warn("cannot watch files; reload with SIGHUP instead", "error", err)
		} else {
			watcher = w
			defer w.Close()
			events, watchErrs = w.Events, w.Errors
			h.syncWatches(w)
		}
	}

	// timer: a debounce after file changes; relistTimer: the next relist
	// due (relist.go).
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	relistTimer := time.NewTimer(time.Hour)
	relistTimer.Stop()
	stateSweep := time.NewTicker(stateSweepInterval)
	defer stateSweep.Stop()
	schedule := newRelistSchedule(RelistInterval)
	reschedule := func() {
		if due, ok := schedule.next(); ok {
			relistTimer.Reset(max(time.Until(due), 0))
		}
	}
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			relistTimer.Stop()
			return
		case ev := <-events:
			if h.watched(ev.Name) {
				timer.Reset(debounce)
			}
		case err := <-watchErrs:
			h.logger.Warn("file watcher", "error", err)
		case <-stateSweep.C:
			h.state.Sweep()
		case <-h.released:
			// What released plugins held is garbage on the Go heap; an idle
			// host allocates too little for a collection to find it, and
			// would keep it in its RSS (RATIONALE.md, BENCHMARKS.md).
			debug.FreeOSMemory()
		case r := <-h.lateResults():
			h.lateArrived(ctx, r)
			if watcher != nil {
				h.syncWatches(watcher)
			}
		case <-h.relist.wake:
			schedule.add(h.relist.take(), time.Now())
			reschedule()
		case <-relistTimer.C:
			if due := schedule.ready(time.Now()); due != nil {
				_ = h.reload(ctx, due)
				schedule.done(due, time.Now())
				schedule.forget(h.configured)
			}
			reschedule()
		case <-timer.C:
			_ = h.reload(ctx, nil)
			if watcher != nil {
				h.syncWatches(watcher)
			}
		}
	}
}

// configured reports whether a plugin of that name is in the config.
func (h *Host) configured(name string) bool {
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	return containsPlugin(h.cfg.Plugins, name)
}

// watchedFiles returns the config file and every plugin file.
func (h *Host) watchedFiles() []string {
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	var files []string
	if h.cfg.Path != "" {
		files = append(files, h.cfg.Path)
	}
	if h.cfg.Server.LockFile != "" {
		files = append(files, h.cfg.Server.LockFile)
	}
	for _, pc := range h.cfg.Plugins {
		if pc.Path != "" { // "" for a plugin from a registry or URL
			files = append(files, pc.Path)
		}
	}
	return files
}

func (h *Host) watched(path string) bool {
	path = filepath.Clean(path)
	for _, f := range h.watchedFiles() {
		if filepath.Clean(f) == path {
			return true
		}
	}
	return false
}

// syncWatches watches the directories holding the watched files (a file
// replaced by rename is only seen through its directory) and stops
// watching directories no longer needed.
func (h *Host) syncWatches(w *fsnotify.Watcher) {
	want := map[string]bool{}
	for _, f := range h.watchedFiles() {
		want[filepath.Dir(f)] = true
	}
	for _, dir := range w.WatchList() {
		if !want[dir] {
			_ = w.Remove(dir)
		}
	}
	for dir := range want {
		if err := w.Add(dir); err != nil {
			h.logger.Warn("cannot watch directory", "dir", dir, "error", err)
		}
	}
}
