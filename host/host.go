// Package host is mcphost's public Go API: load a config, start a Host that
// runs the configured Wasm plugins behind an MCP server, serve it, reload
// it, close it.
//
//	cfg, err := host.LoadConfig("mcphost.toml")
//	h, err := host.New(ctx, cfg, host.Options{Logger: logger})
//	defer h.Close(ctx)
//	err = h.ServeStdio(ctx, os.Stdin, os.Stdout)
package host

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/audit"
	"github.com/mcphost/mcphost/host/internal/auth"
	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/egress"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/host/internal/listcache"
	"github.com/mcphost/mcphost/host/internal/plugin"
	"github.com/mcphost/mcphost/host/internal/pluginstate"
	"github.com/mcphost/mcphost/host/internal/shipped"
	"github.com/mcphost/mcphost/host/internal/telemetry"
)

// Config is a decoded and validated mcphost.toml.
type Config = config.Config

// PluginConfig is one [[plugin]] table of a Config.
type PluginConfig = config.Plugin

// LoadConfig reads and validates the config file at path.
func LoadConfig(path string) (*Config, error) { return config.Load(path) }

// ParseConfig validates a config given as TOML text; name stands for its
// file in error messages, and relative paths in it are taken from name's
// directory.
func ParseConfig(name string, data []byte) (*Config, error) { return config.Parse(name, data) }

// Options tune a Host beyond what its Config says.
type Options struct {
	// Logger receives the host's logs; nil discards them.
	Logger hclog.Logger
	// Getenv reads the OTEL_* environment variables (telemetry); nil reads
	// the process's.
	Getenv func(string) string
	// Version is reported to clients as the server's version.
	Version string
	// SkipBrokenPlugins makes New log a plugin that fails to load and go on
	// without it, instead of failing.
	SkipBrokenPlugins bool
	// Stderr is where an audit log configured as "stderr" goes (default
	// os.Stderr).
	Stderr io.Writer
	// Network, if set, replaces the resolver and dialer behind plugins'
	// granted HTTP requests (for tests, or to route through something of
	// the embedder's). Grants and address checks apply all the same.
	Network *Network
	// ReadOnly makes the host write nothing of its own, for `mcphost
	// validate`: the lock file is compared with but never written, no
	// audit log is opened and no description is cached. Plugins compile
	// over the compilation cache when its directory already exists (the
	// cache serve fills), else in memory.
	ReadOnly bool
	// LoadEveryPlugin makes New load every plugin's module, never
	// serving one from its cached description or the one its module
	// ships (`plugin test`, `plugin inspect`). ReadOnly and Warm imply
	// it.
	LoadEveryPlugin bool
	// Warm makes New load every plugin's module and record what it learns
	// in cache_dir: the compiled code and the description of each plugin,
	// so that a later start (from a container image, say) compiles
	// nothing and reads no module before its first call (`mcphost plugin
	// warm`).
	Warm bool
	// ReportUngrantedUI loads a plugin whose apps (MCP Apps) declare CSP
	// sources outside its allowed_hosts, recording them in
	// AppInfo.Ungranted instead of refusing the plugin: for `plugin
	// inspect`, which loads a plugin with no grants to show what it
	// would need. Every other check of an app still refuses it.
	ReportUngrantedUI bool
}

// Network resolves host names and dials checked addresses for egress.
type Network struct {
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial    func(ctx context.Context, network, address string) (net.Conn, error)
	// RootCAs, if set, are the certificate authorities HTTPS requests
	// trust instead of the system's.
	RootCAs *x509.CertPool
}

// Host runs the plugins of one config behind one MCP server.
type Host struct {
	logger  hclog.Logger
	network *egress.Network // nil: the system's
	server  *mcp.Server
	// cacheDir holds wazero's on-disk compilation cache ("" for none).
	cacheDir string
	// descriptions is the description cache (described.go); nil for none.
	descriptions *listcache.Cache
	// code shares compiled code between plugins of one module.
	code *plugin.CodeCache
	// budget counts the plugins' Wasm memory against [server] max_memory_mb.
	budget *plugin.Budget
	// state is the state plugins keep per client session (state.go).
	state *pluginstate.Store
	// prep prepares in the background the plugins served from the
	// descriptions their modules ship (prepare.go).
	prep preparer
	// tasks runs the tasks of the Tasks extension (tasks.go); nil for a
	// host that serves no client (validate, inspect, warm).
	tasks *taskRunner
	// telemetry exports traces and metrics by OpenTelemetry (trace.go);
	// telemetry.Off() unless [server.telemetry] or OTEL_* ask for it.
	telemetry *telemetry.Telemetry

	// settings is the [server] table as started: reloads never change it,
	// so it is read without a lock.
	settings config.Server

	// reloadMu serializes reloads; it guards cfg and plugins.
	reloadMu sync.Mutex
	cfg      *Config
	plugins  []*loadedPlugin // current generations, in config order

	catalog atomic.Pointer[catalog]
	// profiles are the [[profile]]s served (profile.go), each a view of
	// catalog; replaced whole on reload.
	profiles atomic.Pointer[profileSet]
	// version is the version reported to clients.
	version  string
	inflight atomic.Int64   // MCP requests being handled, for graceful shutdown
	requests requestTracker // the same, to cancel what waits on a client that is gone
	retiring sync.WaitGroup // old generations waiting for their last call

	// perSession counts each session's requests in flight, to bound them.
	perSession sessionLimits

	auth           *auth.ResourceServer // nil: no [server.auth]
	metrics        *metrics
	audit          *audit.Log // nil: no audit log
	auditArguments bool
	readOnly       bool // see Options.ReadOnly
	// loadEveryPlugin: every plugin is loaded from its module
	// (Options.LoadEveryPlugin, ReadOnly, Warm).
	loadEveryPlugin   bool
	reportUngrantedUI bool // see Options.ReportUngrantedUI
	// draining is set once shutdown begins: /readyz reports unready.
	draining atomic.Bool

	// relist collects the list changes plugins announce.
	relist *announcements
	// released is signalled when plugins released memory (lazy.go in
	// package plugin); the background loop hands it back to the OS.
	released chan struct{}
	// late holds the plugins still loading when New began to serve
	// (late.go); nil unless New was asked to skip broken plugins.
	late *latePlugins
	stop context.CancelFunc
	done chan struct{} // closed when the background loop has ended
}

// PluginInfo describes a loaded plugin and what clients see of it.
type PluginInfo struct {
	Name       string
	Path       string
	ABIVersion int
	// Flavor is the ABI the module was written for: "mcphost", or
	// "hyper-mcp v1" / "hyper-mcp v2" for hyper-mcp's plugins.
	Flavor string
	Tools  []string
	// Tasks lists the tools that may run as tasks of the Tasks extension,
	// each with its task support: "crawl (optional)".
	Tasks     []string
	Resources []string
	Templates []string
	Prompts   []string
	// Skills are the URIs of the SKILL.md of each skill it ships and the
	// host serves (skills.go).
	Skills []string
	// Grants lists what the config grants the plugin beyond the default
	// sandbox, one line each ("network: api.example.com", …).
	Grants []string
	// Limits sums up the plugin's limits.
	Limits string
	// Source is the registry reference or URL the plugin came from ("" for
	// a local file), and Digest what it resolved to.
	Source, Digest string
	// Asked lists the grants the plugin's artifact asks for, and
	// AskedNotGranted those of them its config does not give.
	Asked, AskedNotGranted []string
	// LeftOut lists every item the plugin lists that the host does not
	// serve, and why; Hostile is set when the whole plugin is left out
	// because it hides text or offers look-alike names.
	LeftOut []LeftOut
	Hostile bool
	// ShippedDescription says how the description the plugin's module
	// ships (`mcphost plugin describe`) compares with what it lists with
	// this config: "matches its lists", or why it does not; "" when the
	// module ships none, or when the plugin was not listed from its module.
	ShippedDescription string
	// Apps are the MCP Apps (ui:// resources) the plugin serves, and what
	// each asks to reach.
	Apps []AppInfo
	// Description is what the plugin offered when listed from its module,
	// encoded as `mcphost plugin describe` ships it (nil when it was not
	// listed from its module, or is not an mcphost plugin).
	Description []byte
}

// New loads every plugin of cfg (in parallel) and registers what each
// contributes on a new MCP server. A name or URI two plugins both claim goes
// to the one listed first in the config; the other's is left out with a
// warning. ctx bounds loading only: with Options.SkipBrokenPlugins, New
// waits at most [server] start_wait for the plugins, and those still
// loading then go on loading under ctx and join when ready (late.go);
// ending ctx while New loads ends the compiles, and New fails.
func New(ctx context.Context, cfg *Config, opts Options) (*Host, error) {
	logger := opts.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	// Extism filters plugin log calls by a process-wide level; let them
	// through and filter with each plugin's hclog logger instead. Trace is
	// left out: Extism logs at trace while it creates an instance, before a
	// logger can be attached, and that would go to the process's stderr.
	extism.SetLogLevel(extism.LogLevelDebug)

	// A config made in code, not parsed from a file, is held to the same
	// rule: no plugin reaches the host's own state.
	if err := config.CheckStateGrants(cfg); err != nil {
		return nil, err
	}

	h := &Host{cfg: cfg, settings: cfg.Server, logger: logger, relist: newAnnouncements(), released: make(chan struct{}, 1), done: make(chan struct{}), code: plugin.NewCodeCache(int64(cfg.Server.MaxIdleCodeMB) << 20)}
	// warm writes its caches and nothing else: no lock file, no audit log.
	h.readOnly = opts.ReadOnly || opts.Warm
	h.loadEveryPlugin = opts.LoadEveryPlugin || opts.ReadOnly || opts.Warm
	h.reportUngrantedUI = opts.ReportUngrantedUI
	h.budget = plugin.NewBudget(int64(cfg.Server.MaxMemoryMB) << 20)
	h.state = newStateStore(cfg.Server.MaxStateMB)
	if opts.Network != nil {
		h.network = &egress.Network{Resolve: opts.Network.Resolve, Dial: opts.Network.Dial, RootCAs: opts.Network.RootCAs}
	}
	if opts.ReadOnly {
		// validate compiles over the cache serve fills, when it exists:
		// compiled code is keyed by the module and its rewrite, so it
		// adds nothing a later serve would not write, and it spares a
		// validate in a loop (CI) a full compile of every plugin.
		h.cacheDir = existingCacheDir(cfg.Server.CacheDir)
	} else {
		h.cacheDir = compilationCacheDir(cfg.Server.CacheDir, logger)
		pruneCompilationCache(h.cacheDir, time.Now(), logger)
		if !opts.LoadEveryPlugin {
			h.descriptions = h.openDescriptions(h.cacheDir)
		}
		if opts.Warm && h.cacheDir == "" {
			return nil, errors.New(`warm: there is no compilation cache to fill ([server] cache_dir = "off", or the directory is unusable: see the warning above)`)
		}
	}

	// fail undoes what New has opened so far.
	fail := func(err error) (*Host, error) {
		if h.tasks != nil {
			_ = h.tasks.close(context.WithoutCancel(ctx))
		}
		h.closeLate(context.WithoutCancel(ctx))
		for _, lp := range h.plugins {
			_ = lp.plugin.Close(context.WithoutCancel(ctx))
		}
		if h.audit != nil {
			_ = h.audit.Close()
		}
		return nil, err
	}

	checkReservations(logger, cfg)
	var loaded []*loadedPlugin
	var errs []error
	if opts.SkipBrokenPlugins {
		// serve: a slow plugin delays only itself (late.go).
		loaded, errs = h.loadAtStart(ctx, cfg.Plugins, cfg.Server.StartWait)
	} else {
		loaded, errs = h.loadPlugins(ctx, cfg.Plugins, nil, nil)
	}
	if err := ctx.Err(); err != nil {
		// Stopped while loading (SIGTERM at start): compiles end with
		// their context, and so does the start.
		h.closeLate(context.WithoutCancel(ctx))
		for _, lp := range loaded {
			if lp != nil {
				_ = lp.plugin.Close(context.WithoutCancel(ctx))
			}
		}
		return nil, fmt.Errorf("stopped while loading plugins: %w", err)
	}
	// Loading left the compilations of every plugin as garbage (each was
	// released once its lists were read): hand it back before serving.
	debug.FreeOSMemory()
	var failed []error
	for i, err := range errs {
		if err == nil {
			if loaded[i] != nil { // nil: still loading (late.go)
				h.plugins = append(h.plugins, loaded[i])
			}
			continue
		}
		if opts.SkipBrokenPlugins {
			logger.Error("plugin not loaded", "plugin", cfg.Plugins[i].Name, "error", err)
			continue
		}
		failed = append(failed, err)
	}
	if len(failed) > 0 {
		return fail(errors.Join(failed...))
	}

	version := opts.Version
	if version == "" {
		version = "dev"
	}
	h.version = version
	h.telemetry = telemetry.Off()
	if !h.readOnly {
		tel, err := telemetry.New(ctx, telemetry.Settings(cfg.Server.Telemetry), opts.Getenv, version, logger.Named("telemetry"))
		if err != nil {
			return fail(err)
		}
		h.telemetry = tel
	}
	h.metrics = newMetrics(h)
	if cfg.Server.Audit.File != "" && !h.readOnly {
		stderr := opts.Stderr
		if stderr == nil {
			stderr = os.Stderr
		}
		log, err := audit.Open(cfg.Server.Audit.File, stderr)
		if err != nil {
			return fail(err)
		}
		h.audit, h.auditArguments = log, cfg.Server.Audit.Arguments
	}
	if cfg.Server.Auth.Enabled() {
		rs, err := auth.New(ctx, cfg.Server.Auth, auth.Options{Logger: logger.Named("auth")})
		if err != nil {
			return fail(err) // the audit log is closed too
		}
		h.auth = rs
	}
	if !h.readOnly {
		runner, err := newTaskRunner(ctx, h, cfg.Server.Tasks, logger.Named("tasks"))
		if err != nil {
			return fail(err)
		}
		h.tasks = runner
	}
	// After telemetry, metrics, audit, auth and tasks: the request path
	// (middleware.go) is built from them.
	server, err := h.newServer(nil)
	if err != nil {
		return fail(err)
	}
	h.server = server
	h.state.SetSessions(h.sessions)
	hold, problems := h.vet(h.plugins, cfg.Server.LockFile)
	for _, p := range problems {
		logger.Error("lock file", "error", p)
	}
	c := buildCatalog(h.plugins, logger, hold)
	c.applyTo(h.server, nil, h)
	h.catalog.Store(c)
	if err := h.applyProfiles(cfg.Profiles, c); err != nil {
		return fail(err)
	}
	for _, lp := range h.plugins {
		h.logLoaded(c, lp)
	}

	loopCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	h.stop = stop
	go h.background(loopCtx)
	h.startPreparing(loopCtx)
	h.prepareLater(h.plugins)
	return h, nil
}

// releasedMemory tells the background loop that plugins released memory;
// many releases at once are handed back in one go.
func (h *Host) releasedMemory() {
	select {
	case h.released <- struct{}{}:
	default:
	}
}

func (h *Host) logLoaded(c *catalog, lp *loadedPlugin) {
	tools, resources, templates, prompts := c.contributions(lp)
	path := lp.cfg.Origin()
	if lp.hostile {
		h.logger.Error("plugin loaded but left out whole: it hides text or offers look-alike names", "plugin", lp.cfg.Name, "path", path,
			"left_out", len(lp.refused))
		return
	}
	h.logger.Info("plugin loaded", "plugin", lp.cfg.Name, "path", path, "abi", lp.plugin.Flavor(),
		"tools", sorted(tools), "resources", sorted(resources), "templates", sorted(templates), "prompts", sorted(prompts))
}

// logRelisted logs, at debug, what a plugin offers after it was listed
// again because it announced a change: how many of each, not the names,
// which are the plugin's to choose and which it may have announced to
// have logged again.
func (h *Host) logRelisted(c *catalog, lp *loadedPlugin) {
	tools, resources, templates, prompts := c.contributions(lp)
	h.logger.Debug("plugin listed again", "plugin", lp.cfg.Name,
		"tools", len(tools), "resources", len(resources), "templates", len(templates), "prompts", len(prompts))
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

// compilationCacheDir returns the directory of wazero's on-disk
// compilation cache, so that a restart or a reload does not recompile
// unchanged plugins: the configured one, else one in the user cache
// directory; "" (compile in memory) when it is "off" or unusable.
func compilationCacheDir(dir string, logger hclog.Logger) string {
	if dir == "off" {
		return ""
	}
	if dir == "" {
		def, err := config.DefaultCacheDir()
		if err != nil {
			logger.Warn("no user cache directory; compiling plugins without an on-disk cache", "error", err)
			return ""
		}
		dir = def
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		logger.Warn("compilation cache unusable; compiling plugins without an on-disk cache", "dir", dir, "error", err)
		return ""
	}
	return dir
}

// existingCacheDir is compilationCacheDir for a host that writes nothing
// of its own (Options.ReadOnly): the cache directory when it already
// exists, else "" (compile in memory). It creates no directory.
func existingCacheDir(dir string) string {
	if dir == "off" {
		return ""
	}
	if dir == "" {
		def, err := config.DefaultCacheDir()
		if err != nil {
			return ""
		}
		dir = def
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}

// loadPlugins loads the plugins of pcs in parallel. A plugin whose file and
// settings are those of a generation in keep is not rebuilt: that
// generation is returned as it is. A plugin named in live is loaded from
// its file even when its description is cached (it announced a list
// change, or its description was found stale).
func (h *Host) loadPlugins(ctx context.Context, pcs []config.Plugin, keep map[string]*loadedPlugin, live map[string]bool) ([]*loadedPlugin, []error) {
	loaded := make([]*loadedPlugin, len(pcs))
	errs := make([]error, len(pcs))
	var wg sync.WaitGroup
	for i, pc := range pcs {
		if h.late.isLoading(pc.Name) {
			errs[i] = errStillLoading // its load at start goes on (late.go)
			continue
		}
		wg.Go(func() {
			loaded[i], errs[i] = h.loadPlugin(ctx, pc, keep[pc.Name], live[pc.Name])
		})
	}
	wg.Wait()
	return loaded, errs
}

// loadPlugin reads, compiles and starts one plugin and asks what it
// offers; it returns current instead when nothing about it changed. live
// loads it from its file even when its description is cached.
func (h *Host) loadPlugin(ctx context.Context, pc config.Plugin, current *loadedPlugin, live bool) (*loadedPlugin, error) {
	// A plugin whose description is cached is served from it at start,
	// before its file is even read (described.go).
	d := h.describing(pc, live)
	if current == nil {
		if lp := d.fromFileKey(ctx); lp != nil {
			// Its module is not read: its skills section is.
			var err error
			if lp.skills, err = fileSkills(pc); err != nil {
				_ = lp.plugin.Close(context.WithoutCancel(ctx))
				return nil, fmt.Errorf("load plugin %q from %s: %w", pc.Name, pc.Origin(), err)
			}
			return lp, nil
		}
	}
	wasm, remote, err := h.readModule(ctx, pc)
	if err != nil {
		return nil, err
	}
	// The skills it ships are checked first: a bad one refuses the plugin.
	shippedSkills, err := moduleSkills(wasm)
	if err != nil {
		return nil, fmt.Errorf("load plugin %q from %s: %w", pc.Name, pc.Origin(), err)
	}
	hash := sha256Sum(wasm)
	if pc.SHA256 != "" && pc.SHA256 != hex.EncodeToString(hash[:]) {
		return nil, fmt.Errorf("load plugin %q from %s: sha256 mismatch: the config pins %s, the file is %s",
			pc.Name, pc.Origin(), pc.SHA256, hex.EncodeToString(hash[:]))
	}
	if current != nil && current.sameSource(pc, hash) {
		return current, nil
	}
	if lp := d.fromDigest(ctx, hash, remote); lp != nil {
		lp.skills = shippedSkills
		return lp, nil
	}
	// Not when a generation serves: a reload keeps the old one if the new
	// one does not load, which only loading it can tell.
	if current == nil {
		if lp := d.fromModule(ctx, wasm, hash, remote); lp != nil {
			lp.skills = shippedSkills
			return lp, nil
		}
	}
	opts := h.pluginOptions(pc, d.env)
	opts.Wasm = wasm
	p, err := plugin.Load(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("load plugin %q from %s: %w", pc.Name, pc.Origin(), err)
	}
	lp := newLoadedPlugin(pc, hash, p)
	lp.remote = remote
	lp.reportUngrantedUI = h.reportUngrantedUI
	lp.skills = shippedSkills
	rec := &recorder{Plugin: p}
	if err := lp.listFrom(ctx, h.logger, rec); err != nil {
		_ = p.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("load plugin %q from %s: %w", pc.Name, pc.Origin(), err)
	}
	d.write(hash, p, rec.calls)
	if h.loadEveryPlugin && p.Flavor() == plugin.FlavorMCPHost {
		// validate, inspect, plugin test, warm and describe: what the
		// plugin offers, to compare with (or write as) what it ships.
		live := p.Describe()
		live.Lists = shippableCalls(rec.calls)
		lp.live = &live
		lp.shipped = shippedStatus(wasm, live)
		if lp.shipped != "" && configured(pc, d.env) {
			lp.shipped += notUsedConfigured
		}
	}
	// Its lists are read: until its first call the plugin holds no
	// instance and no compiled module (lazy.go in package plugin).
	p.Idle()
	return lp, nil
}

// pluginOptions are the options of pc's plugin, but its module; env is
// pluginEnv's.
func (h *Host) pluginOptions(pc config.Plugin, env map[string]string) plugin.Options {
	logger := h.logger.Named("plugin").Named(pc.Name)
	return plugin.Options{
		Name:           pc.Name,
		Timeout:        pc.Timeout,
		MemoryMB:       pc.MemoryMB,
		StackKB:        pc.StackKB,
		MaxInstances:   pc.MaxInstances,
		IdleTimeout:    pc.IdleTimeout,
		MinInstances:   pc.MinInstances,
		OnRelease:      h.releasedMemory,
		MaxOutputBytes: pc.MaxOutputKB << 10,
		Config:         pc.Config,
		CacheDir:       h.cacheDir,
		Code:           h.code,
		Budget:         h.budget,
		Logger:         logger,
		HostFunctions: hostfn.Functions(pc.Name, logger, notifier{h}, &egress.Policy{
			AllowedHosts:     pc.AllowedHosts,
			AllowPrivate:     pc.AllowPrivateNetwork,
			MaxResponseBytes: int64(pc.MaxOutputKB) << 10,
			Timeout:          pc.Timeout,
			Network:          h.network,
		}, &hostfn.State{Store: h.state, KB: pc.StateKB}),

		Env:               env,
		ReadOnlyDirs:      pc.AllowedPaths,
		WritableDirs:      pc.WritablePaths,
		MaxCallsPerSecond: pc.MaxCallsPerSecond,
		BreakerFailures:   pc.BreakerFailures,
		BreakerCooldown:   pc.BreakerCooldown,
		WazeroChecks:      pc.InterruptChecks == "wazero",
	}
}

// pluginEnv returns the environment variables pc is given, with their
// values on the host.
func (h *Host) pluginEnv(pc config.Plugin) map[string]string {
	env := map[string]string{}
	for _, name := range pc.Env {
		if v, ok := os.LookupEnv(name); ok {
			env[name] = v
		} else {
			h.logger.Warn("plugin env: variable not set on the host; the plugin will not see it", "plugin", pc.Name, "variable", name)
		}
	}
	return env
}

// grants describes what a plugin's config grants it, and its limits.
func grants(pc config.Plugin) []string {
	var g []string
	if len(pc.AllowedHosts) > 0 {
		line := "network: " + strings.Join(pc.AllowedHosts, ", ")
		if pc.AllowPrivateNetwork {
			line += " (private networks too)"
		}
		g = append(g, line)
	}
	for hostDir, guest := range pc.AllowedPaths {
		g = append(g, fmt.Sprintf("files: %s as %s (read-only)", hostDir, guest))
	}
	for hostDir, guest := range pc.WritablePaths {
		g = append(g, fmt.Sprintf("files: %s as %s (read-write)", hostDir, guest))
	}
	if len(pc.Env) > 0 {
		g = append(g, "environment: "+strings.Join(pc.Env, ", "))
	}
	if len(pc.Config) > 0 {
		keys := make([]string, 0, len(pc.Config))
		for k := range pc.Config {
			keys = append(keys, k)
		}
		g = append(g, "config keys: "+strings.Join(sorted(keys), ", "))
	}
	sort.Strings(g)
	if len(g) == 0 {
		g = append(g, "nothing beyond the sandbox (no network, files, environment or config)")
	}
	return g
}

// limits sums up a plugin's limits.
func limits(pc config.Plugin) string {
	l := fmt.Sprintf("%s per call, %d MiB memory, %d KiB output", pc.Timeout, pc.MemoryMB, pc.MaxOutputKB)
	if pc.MaxCallsPerSecond > 0 {
		l += fmt.Sprintf(", %g calls/s", pc.MaxCallsPerSecond)
	}
	if pc.SHA256 != "" {
		l += ", sha256 pinned"
	}
	return l
}

// notifier is the host as its plugins' host functions see it
// (hostfn.Notifier), kept off Host's exported API.
type notifier struct{ h *Host }

// ResourceUpdated implements hostfn.Notifier.
func (n notifier) ResourceUpdated(ctx context.Context, uri string) { n.h.resourceUpdated(ctx, uri) }

// ListChanged implements hostfn.Notifier.
func (n notifier) ListChanged(ctx context.Context, plugin, kind string) {
	n.h.listChanged(ctx, plugin, kind)
}

// resourceUpdated tells the sessions subscribed to uri that it changed.
func (h *Host) resourceUpdated(ctx context.Context, uri string) {
	if h.server == nil {
		return
	}
	servers := []*mcp.Server{h.server}
	if set := h.profiles.Load(); set != nil {
		for _, p := range *set {
			servers = append(servers, p.server)
		}
	}
	for _, s := range servers {
		if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			h.logger.Warn("resource updated notification failed", "uri", uri, "error", err)
		}
	}
}

// listChanged takes a plugin's announcement that a list changed: the
// plugin is listed again once the call that announced it has ended (it
// holds an instance until then), at most once per RelistInterval
// (relist.go). It never blocks and never drops an announcement; only news
// (a kind not already pending) is logged.
func (h *Host) listChanged(_ context.Context, plugin, kind string) {
	if h.relist.announce(plugin, kind) {
		h.logger.Debug("plugin announced a list change", "plugin", plugin, "list", kind)
	}
}

// Server returns the MCP server, to connect it to any go-sdk transport.
func (h *Host) Server() *mcp.Server { return h.server }

// Plugins describes the loaded plugins, in config order.
func (h *Host) Plugins() []PluginInfo {
	h.reloadMu.Lock()
	plugins := h.plugins
	h.reloadMu.Unlock()
	c := h.catalog.Load()
	infos := make([]PluginInfo, 0, len(plugins))
	for _, lp := range plugins {
		tools, resources, templates, prompts := c.contributions(lp)
		infos = append(infos, PluginInfo{
			Name: lp.cfg.Name, Path: lp.cfg.Path, ABIVersion: lp.plugin.ABIVersion(), Flavor: string(lp.plugin.Flavor()),
			Tools: sorted(tools), Tasks: c.taskTools(tools), Resources: sorted(resources), Templates: sorted(templates), Prompts: sorted(prompts),
			Grants: grants(lp.cfg), Limits: limits(lp.cfg),
			LeftOut: c.leftOut[lp], Hostile: wholeLeftOut(c.leftOut[lp]),
			ShippedDescription: lp.shipped,
			Apps:               appInfos(lp),
		})
		if lp.live != nil {
			if data, err := shipped.Encode(*lp.live); err == nil {
				infos[len(infos)-1].Description = data
			} else {
				infos[len(infos)-1].ShippedDescription = "cannot be shipped: " + err.Error()
			}
		}
		remoteInfo(&infos[len(infos)-1], lp)
		infos[len(infos)-1].Skills = c.skills.of(lp)
	}
	return infos
}

// ServeStdio serves one MCP session over newline-delimited JSON on in and
// out until the client closes in or ctx is done. When ctx is done, the
// session takes no new call (each is answered with codeShuttingDown),
// while the calls in flight run on for up to grace: they still get their
// answers, and the client's answers to what they ask it (sampling,
// elicitation, roots) and its cancellations still arrive (stdiodrain.go).
// Once every call has its answer, or grace is over, what still runs is
// cancelled (a plugin call ends at once, and so does a wait for the
// client's answer) and the session closes. A JSON-RPC batch the session
// may not send is answered with an error and dropped (see stdioBatches).
func (h *Host) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, grace time.Duration) error {
	return h.serveStdio(ctx, h.server, in, out, grace)
}

// ServeStdioProfile is ServeStdio for the [[profile]] named profile: the
// session sees what the profile serves, as /mcp/{profile} does over HTTP.
// It fails at once when the config defines no such profile. A reload that
// removes the profile ends the session.
func (h *Host) ServeStdioProfile(ctx context.Context, profile string, in io.Reader, out io.Writer, grace time.Duration) error {
	p := h.profileNamed(profile)
	if p == nil {
		return fmt.Errorf("serve stdio: unknown profile %q: the config defines %s", profile, profileList(h.ProfileNames()))
	}
	return h.serveStdio(ctx, p.server, in, out, grace)
}

// serveStdio is ServeStdio on server (/mcp's or a profile's).
func (h *Host) serveStdio(ctx context.Context, server *mcp.Server, in io.Reader, out io.Writer, grace time.Duration) error {
	calls := newStdioCalls()
	w := &syncWriter{w: out, calls: calls}
	filter := newStdioBatches(in, w, calls, h.logger)
	var t mcp.Transport = &mcp.IOTransport{Reader: io.NopCloser(filter), Writer: nopWriteCloser{w}}
	if h.telemetry.Tracing() {
		t = tracedStdio{t}
	}
	ss, err := server.Connect(ctx, t, nil)
	filter.connect(ss)
	if err != nil {
		return fmt.Errorf("serve stdio: %w", err)
	}
	ended := make(chan struct{}) // the session ended on its own
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(closed)
		idle := calls.drain()
		h.logger.Info("shutting down: no new requests; waiting for requests in flight", "grace", grace, "in_flight", calls.count())
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-idle:
		case <-ended:
		case <-timer.C:
			h.logger.Warn("requests still running after the grace period; cancelling them", "in_flight", calls.count())
			// go-sdk's Close waits for the requests in flight; one waiting
			// on the client's answer would wait forever.
			h.requests.endSessionOf(ss)
			// Let the cancelled calls write their answers (go-sdk's Close
			// refuses writes), for a moment at most.
			answered := time.NewTimer(cancelledAnswersWait)
			defer answered.Stop()
			select {
			case <-idle:
			case <-ended:
			case <-answered.C:
			}
		}
		ss.Close()
	})
	err = ss.Wait()
	close(ended)
	if !stop() {
		<-closed // ctx ended the session: let the Close finish
	}
	// The connection was the session: its plugins' state goes with it.
	h.state.DropSession(ss)
	if err != nil && (errors.Is(err, io.EOF) || ctx.Err() != nil) {
		return nil
	}
	return err
}

// cancelledAnswersWait bounds how long ServeStdio, once the grace is over
// and the calls still running are cancelled, waits for their (error)
// answers before it closes the session.
const cancelledAnswersWait = time.Second

// Close stops watching for changes, waits (bounded by ctx) for calls in
// flight, and frees every plugin. When ctx ends first, the requests still
// in flight are cancelled, those waiting on a client's answer included;
// requests still running once the plugins are freed are cancelled too.
func (h *Host) Close(ctx context.Context) error {
	stopRequests := context.AfterFunc(ctx, func() { h.requests.stop(errShuttingDown) })
	defer stopRequests()
	var taskErr error
	if h.tasks != nil {
		// Tasks running here get the same grace as requests, then fail.
		if err := h.tasks.close(ctx); err != nil {
			taskErr = fmt.Errorf("close the task store: %w", err)
		}
	}
	h.stop()
	<-h.done
	h.prep.workers.Wait()
	h.closeLate(ctx)
	h.reloadMu.Lock()
	plugins := h.plugins
	h.plugins = nil
	h.reloadMu.Unlock()
	var errs []error
	for _, lp := range plugins {
		select {
		case <-lp.retire():
		case <-ctx.Done():
		}
		if err := lp.plugin.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close plugin %q: %w", lp.cfg.Name, err))
		}
	}
	h.retiring.Wait()
	// What still runs holds no plugin call (say go-sdk waits for a client's
	// answer, to call the plugin again): it has nothing left to call.
	h.requests.stop(errShuttingDown)
	if h.auth != nil {
		_ = h.auth.Close()
	}
	if h.audit != nil {
		if err := h.audit.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close audit log: %w", err))
		}
	}
	if err := h.telemetry.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("flush telemetry: %w", err))
	}
	return errors.Join(append(errs, taskErr)...)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// slogFor adapts an hclog logger for go-sdk, which logs through slog.
func slogFor(logger hclog.Logger) *slog.Logger {
	w := logger.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
