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
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tetratelabs/wazero"

	extism "github.com/extism/go-sdk"

	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/config"
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
}

// loadedPlugin is a running plugin and what it contributes.
type loadedPlugin struct {
	cfg    config.Plugin
	plugin *plugin.Plugin
	tools  []bridge.Tool
}

// PluginInfo describes a loaded plugin.
type PluginInfo struct {
	Name       string
	Path       string
	ABIVersion int
	// Tools are the names of the tools clients see from this plugin.
	Tools []string
}

// New loads every plugin of cfg (in parallel) and registers what each
// contributes on a new MCP server. Two plugins claiming the same tool name:
// the one listed first in the config keeps it, and the other's tool is left
// out with a warning. ctx bounds loading only.
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
		Logger:       slogFor(logger.Named("mcp")),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	h.register()
	return h, nil
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
	p, err := plugin.Load(ctx, plugin.Options{
		Name:           pc.Name,
		Wasm:           wasm,
		Timeout:        pc.Timeout,
		MemoryMB:       pc.MemoryMB,
		MaxInstances:   pc.MaxInstances,
		MaxOutputBytes: pc.MaxOutputKB << 10,
		Config:         pc.Config,
		Cache:          h.cache,
		Logger:         h.logger.Named("plugin").Named(pc.Name),
	})
	if err != nil {
		return nil, fmt.Errorf("load plugin %q from %s: %w", pc.Name, pc.Path, err)
	}
	lp := &loadedPlugin{cfg: pc, plugin: p}
	if p.Has("list_tools") {
		lp.tools, err = bridge.ListTools(ctx, p)
		if err != nil {
			_ = p.Close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("load plugin %q from %s: %w", pc.Name, pc.Path, err)
		}
	}
	return lp, nil
}

// register adds every loaded plugin's tools to the MCP server.
func (h *Host) register() {
	owner := map[string]string{}
	for _, lp := range h.plugins {
		var names []string
		for _, tool := range lp.tools {
			name := tool.MCP.Name
			if other, taken := owner[name]; taken {
				h.logger.Warn("tool name already taken; leaving this plugin's tool out",
					"plugin", lp.cfg.Name, "tool", name, "owner", other)
				continue
			}
			owner[name] = lp.cfg.Name
			p, t := lp.plugin, tool
			h.server.AddTool(t.MCP, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return bridge.CallTool(ctx, p, t, req)
			})
			names = append(names, name)
		}
		h.logger.Info("plugin loaded", "plugin", lp.cfg.Name, "path", lp.cfg.Path,
			"abi", lp.plugin.ABIVersion(), "tools", names)
	}
}

// Server returns the MCP server, to connect it to any go-sdk transport.
func (h *Host) Server() *mcp.Server { return h.server }

// Plugins describes the loaded plugins, in config order.
func (h *Host) Plugins() []PluginInfo {
	infos := make([]PluginInfo, 0, len(h.plugins))
	for _, lp := range h.plugins {
		info := PluginInfo{Name: lp.cfg.Name, Path: lp.cfg.Path, ABIVersion: lp.plugin.ABIVersion()}
		for _, t := range lp.tools {
			info.Tools = append(info.Tools, t.MCP.Name)
		}
		infos = append(infos, info)
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
