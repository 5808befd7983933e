// Package host is mcphost's public Go API: load a config, start a Host that
// runs the configured Wasm plugins behind an MCP server, serve it, close it.
//
//	cfg, err := host.LoadConfig("mcphost.toml")
//	h, err := host.New(ctx, cfg, host.Options{Logger: logger})
//	defer h.Close(ctx)
//	err = h.ServeStdio(ctx, os.Stdin, os.Stdout)
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	extism "github.com/extism/go-sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tetratelabs/wazero"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/host/internal/plugin"
)

// Config is a decoded and validated mcphost.toml.
type Config = config.Config

// PluginConfig is one [[plugin]] table of a Config.
type PluginConfig = config.Plugin

// LoadConfig reads and validates the config file at path.
func LoadConfig(path string) (*Config, error) { return config.Load(path) }

// Options tune a Host beyond what its Config says.
type Options struct {
	// Logger receives the host's logs; nil discards them.
	Logger hclog.Logger
	// Version is reported to clients as the server's version.
	Version string
	// SkipBrokenPlugins makes New log a plugin that fails to load and go on
	// without it, instead of failing.
	SkipBrokenPlugins bool
}

// Host runs the plugins of one config behind one MCP server.
type Host struct {
	cfg     *Config
	logger  hclog.Logger
	server  *mcp.Server
	cache   wazero.CompilationCache
	plugins []*loadedPlugin
	catalog atomic.Pointer[catalog]
	// inflight counts MCP requests being handled, for graceful shutdown.
	inflight atomic.Int64
}

// loadedPlugin is a running plugin and what it contributes.
type loadedPlugin struct {
	cfg       config.Plugin
	plugin    *plugin.Plugin
	tools     []bridge.Tool
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	prompts   []*mcp.Prompt
}

// PluginInfo describes a loaded plugin and what clients see of it.
type PluginInfo struct {
	Name       string
	Path       string
	ABIVersion int
	Tools      []string
	Resources  []string
	Templates  []string
	Prompts    []string
}

// New loads every plugin of cfg (in parallel) and registers what each
// contributes on a new MCP server. A name or URI two plugins both claim goes
// to the one listed first in the config; the other's is left out with a
// warning. ctx bounds loading only.
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

	h := &Host{cfg: cfg, logger: logger}
	h.cache = openCompilationCache(cfg.Server.CacheDir, logger)

	loaded := make([]*loadedPlugin, len(cfg.Plugins))
	errs := make([]error, len(cfg.Plugins))
	var wg sync.WaitGroup
	for i, pc := range cfg.Plugins {
		wg.Go(func() {
			loaded[i], errs[i] = h.loadPlugin(ctx, pc)
		})
	}
	wg.Wait()

	var failed []error
	for i, err := range errs {
		if err == nil {
			h.plugins = append(h.plugins, loaded[i])
			continue
		}
		if opts.SkipBrokenPlugins {
			logger.Error("plugin not loaded", "plugin", cfg.Plugins[i].Name, "error", err)
			continue
		}
		failed = append(failed, err)
	}
	if len(failed) > 0 {
		_ = h.Close(context.WithoutCancel(ctx))
		return nil, errors.Join(failed...)
	}

	version := opts.Version
	if version == "" {
		version = "dev"
	}
	h.server = mcp.NewServer(&mcp.Implementation{Name: cfg.Server.Name, Version: version}, &mcp.ServerOptions{
		Logger:   slogFor(logger.Named("mcp")),
		PageSize: cfg.Server.PageSize,
		// Every capability is declared, whatever the plugins offer now: a
		// reload may add the first tool or prompt, and clients read
		// capabilities only once.
		Capabilities: &mcp.ServerCapabilities{
			Logging:     &mcp.LoggingCapabilities{},
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Completions: &mcp.CompletionCapabilities{},
		},
		CompletionHandler:  h.complete,
		SubscribeHandler:   h.subscribe,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs = int(cfg.Server.ListTTL.Milliseconds())
		},
	})
	h.server.AddReceivingMiddleware(h.countInFlight)
	c := buildCatalog(h.plugins, logger)
	c.apply(h.server)
	h.catalog.Store(c)
	for _, lp := range h.plugins {
		tools, resources, templates, prompts := c.contributions(lp)
		logger.Info("plugin loaded", "plugin", lp.cfg.Name, "path", lp.cfg.Path, "abi", lp.plugin.ABIVersion(),
			"tools", sorted(tools), "resources", sorted(resources), "templates", sorted(templates), "prompts", sorted(prompts))
	}
	return h, nil
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

// openCompilationCache returns wazero's on-disk compilation cache so that a
// restart does not recompile unchanged plugins, or an in-memory one when the
// directory is off or unusable.
func openCompilationCache(dir string, logger hclog.Logger) wazero.CompilationCache {
	if dir == "off" {
		return wazero.NewCompilationCache()
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			logger.Warn("no user cache directory; compiling plugins without an on-disk cache", "error", err)
			return wazero.NewCompilationCache()
		}
		dir = filepath.Join(base, "mcphost", "wazero")
	}
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		logger.Warn("compilation cache unusable; compiling plugins without an on-disk cache", "dir", dir, "error", err)
		return wazero.NewCompilationCache()
	}
	return cache
}

// loadPlugin reads, compiles and starts one plugin and asks what it offers.
func (h *Host) loadPlugin(ctx context.Context, pc config.Plugin) (*loadedPlugin, error) {
	wasm, err := os.ReadFile(pc.Path)
	if err != nil {
		return nil, fmt.Errorf("load plugin %q: %w", pc.Name, err)
	}
	logger := h.logger.Named("plugin").Named(pc.Name)
	p, err := plugin.Load(ctx, plugin.Options{
		Name:           pc.Name,
		Wasm:           wasm,
		Timeout:        pc.Timeout,
		MemoryMB:       pc.MemoryMB,
		MaxInstances:   pc.MaxInstances,
		MaxOutputBytes: pc.MaxOutputKB << 10,
		Config:         pc.Config,
		Cache:          h.cache,
		Logger:         logger,
		HostFunctions:  hostfn.Functions(pc.Name, logger, h),
	})
	if err != nil {
		return nil, fmt.Errorf("load plugin %q from %s: %w", pc.Name, pc.Path, err)
	}
	lp := &loadedPlugin{cfg: pc, plugin: p}
	if err := lp.list(ctx); err != nil {
		_ = p.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("load plugin %q from %s: %w", pc.Name, pc.Path, err)
	}
	return lp, nil
}

// list reads everything the plugin contributes, applying its tool prefix.
func (lp *loadedPlugin) list(ctx context.Context) error {
	var err error
	p := lp.plugin
	if p.Has(abi.ExportListTools) {
		if lp.tools, err = bridge.ListTools(ctx, p); err != nil {
			return err
		}
		if lp.cfg.Prefix != "" {
			for i := range lp.tools {
				t := *lp.tools[i].MCP
				t.Name = lp.cfg.Prefix + t.Name
				lp.tools[i].MCP = &t
			}
		}
	}
	if p.Has(abi.ExportListResources) {
		if lp.resources, err = bridge.ListResources(ctx, p); err != nil {
			return err
		}
	}
	if p.Has(abi.ExportListResourceTemplates) {
		if lp.templates, err = bridge.ListResourceTemplates(ctx, p); err != nil {
			return err
		}
	}
	if p.Has(abi.ExportListPrompts) {
		if lp.prompts, err = bridge.ListPrompts(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// countInFlight is a receiving middleware that counts requests (not
// notifications) being handled.
func (h *Host) countInFlight(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		h.inflight.Add(1)
		defer h.inflight.Add(-1)
		return next(ctx, method, req)
	}
}

// complete routes completion/complete to the plugin owning the prompt or
// resource template the reference names.
func (h *Host) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	c := h.catalog.Load()
	ref := req.Params.Ref
	if ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion: ref is missing"}
	}
	var owner *loadedPlugin
	switch ref.Type {
	case "ref/prompt":
		if e, ok := c.prompts[ref.Name]; ok {
			owner = e.plugin
		}
	case "ref/resource":
		owner, _ = c.lookupResource(ref.URI)
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion: unknown ref type %q", ref.Type)}
	}
	if owner == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion: no prompt or resource template %q", ref.Name+ref.URI)}
	}
	if !owner.plugin.Has(abi.ExportComplete) {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	}
	return bridge.Complete(hostfn.WithRequest(ctx, &hostfn.Request{Session: req.Session}), owner.plugin, ref, req)
}

// subscribe accepts a subscription to a URI some plugin serves.
func (h *Host) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if _, ok := h.catalog.Load().lookupResource(req.Params.URI); !ok {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return nil
}

// ResourceUpdated implements hostfn.Notifier.
func (h *Host) ResourceUpdated(ctx context.Context, uri string) {
	if h.server == nil {
		return
	}
	if err := h.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		h.logger.Warn("resource updated notification failed", "uri", uri, "error", err)
	}
}

// ListChanged implements hostfn.Notifier.
func (h *Host) ListChanged(_ context.Context, plugin, kind string) {
	h.logger.Info("plugin announced a list change; it takes effect on the next reload", "plugin", plugin, "list", kind)
}

// matchTemplate reports whether uri matches the RFC 6570 template.
func matchTemplate(template, uri string) bool {
	t, err := uritemplate.New(template)
	if err != nil {
		return false
	}
	return t.Regexp().MatchString(uri)
}

// Server returns the MCP server, to connect it to any go-sdk transport.
func (h *Host) Server() *mcp.Server { return h.server }

// Plugins describes the loaded plugins, in config order.
func (h *Host) Plugins() []PluginInfo {
	c := h.catalog.Load()
	infos := make([]PluginInfo, 0, len(h.plugins))
	for _, lp := range h.plugins {
		tools, resources, templates, prompts := c.contributions(lp)
		infos = append(infos, PluginInfo{
			Name: lp.cfg.Name, Path: lp.cfg.Path, ABIVersion: lp.plugin.ABIVersion(),
			Tools: sorted(tools), Resources: sorted(resources), Templates: sorted(templates), Prompts: sorted(prompts),
		})
	}
	return infos
}

// ServeStdio serves one MCP session over newline-delimited JSON on in and
// out until the client closes in or ctx is done.
func (h *Host) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err := h.server.Run(ctx, t)
	if err != nil && (errors.Is(err, io.EOF) || ctx.Err() != nil) {
		return nil
	}
	return err
}

// Close waits (bounded by ctx) for calls in flight and frees every plugin.
func (h *Host) Close(ctx context.Context) error {
	var errs []error
	for _, lp := range h.plugins {
		if err := lp.plugin.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close plugin %q: %w", lp.cfg.Name, err))
		}
	}
	if h.cache != nil {
		if err := h.cache.Close(context.WithoutCancel(ctx)); err != nil {
			errs = append(errs, fmt.Errorf("close compilation cache: %w", err))
		}
	}
	return errors.Join(errs...)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// slogFor adapts an hclog logger for go-sdk, which logs through slog.
func slogFor(logger hclog.Logger) *slog.Logger {
	w := logger.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
