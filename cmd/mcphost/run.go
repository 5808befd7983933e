package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/mcphost/mcphost/host"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// it comes from the module's build information.
var version = ""

// shutdownTimeout bounds how long calls in flight may run after a shutdown
// was asked for.
const shutdownTimeout = 10 * time.Second

// usageError is a mistake in the command line; it exits with code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func exitCode(err error) int {
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

const usage = `mcphost hosts sandboxed WebAssembly plugins behind one MCP server.

Usage:
  mcphost serve    [--config FILE] [--log-level LEVEL]   serve MCP over stdio
                   [--http ADDR] [--stateless]           ... or over Streamable HTTP at http://ADDR/mcp (profiles at /mcp/NAME)
                   [--profile NAME]                      ... over stdio, only what [[profile]] NAME serves
  mcphost validate [--config FILE]                       check the config, load every plugin; fail on anything left out
  mcphost plugin inspect [--json] FILE.wasm              what a plugin offers and would need granted
  mcphost plugin test [--args TOOL=JSON]... FILE.wasm    call everything a plugin offers, check the replies
  mcphost plugin new --lang LANG NAME [DIR]              scaffold a plugin that builds and loads as is (go, js, ts, c, rust, as, wat)
  mcphost plugin build [-o FILE.wasm] [DIR]              build the plugin in DIR, whatever its language
  mcphost plugin describe [--check] FILE.wasm            write what a plugin offers into its module
  mcphost plugin warm [--config FILE]                    compile every plugin of a config into its cache_dir
  mcphost plugin accept [--config FILE] [NAME...]        accept plugins' changed tool definitions (lock file)
  mcphost plugin push FILE.wasm oci://R/P:TAG            publish a plugin to an OCI registry
  mcphost plugin sign --key KEY.pem oci://R/P:TAG        sign a plugin in a registry (Sigstore bundle)
  mcphost plugin pull [--config FILE] REF                fetch a plugin into the plugin store
  mcphost plugin update [--config FILE] [NAME...]        resolve registry tags again and pin what they name now
  mcphost version                                        print the version

FILE defaults to ./mcphost.toml. Logs go to stderr; stdout carries only MCP messages.
mcphost COMMAND --help (or mcphost plugin SUBCOMMAND --help) describes its flags.
`

// run is the whole CLI; main only supplies the process's context, arguments
// and streams, which keeps every command testable in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdin, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		// The usage asked for is printed; that is a success.
		return nil
	}
	return err
}

// dispatch runs the command args name.
func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &usageError{"no command given"}
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return runServe(ctx, rest, stdin, stdout, stderr)
	case "validate":
		return runValidate(ctx, rest, stdout, stderr)
	case "plugin":
		return runPlugin(ctx, rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, versionLine())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return &usageError{fmt.Sprintf("unknown command %q", cmd)}
	}
}

type commonFlags struct {
	config    string
	logLevel  string
	http      string
	stateless bool
	profile   string
}

// flagSet is a subcommand's flags and its usage line.
type flagSet struct {
	*flag.FlagSet
	synopsis string
}

// newFlagSet returns the flag set of a subcommand; synopsis is its usage
// line, which starts with the command's name.
func newFlagSet(synopsis string) *flagSet {
	name, _, _ := strings.Cut(synopsis, " [")
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// parseArgs prints the usage itself, to stdout or stderr.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	return &flagSet{FlagSet: fs, synopsis: synopsis}
}

// parseArgs parses args into fs. Asked for help (-h, --help), it prints
// the subcommand's usage to stdout and returns flag.ErrHelp, which run
// turns into a success; a mistake prints the usage to stderr and is a
// usage error (exit 2).
func parseArgs(fs *flagSet, args []string, stdout, stderr io.Writer) error {
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	w := stderr
	if errors.Is(err, flag.ErrHelp) {
		w = stdout
	}
	fmt.Fprintf(w, "Usage: %s\n", fs.synopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return &usageError{err.Error()}
}

func parseFlags(name string, args []string, stdout, stderr io.Writer) (commonFlags, error) {
	var f commonFlags
	synopsis := "mcphost " + name + " [--config FILE] [--log-level LEVEL]"
	if name == "serve" {
		synopsis += " [--http ADDR] [--stateless] [--profile NAME]"
	}
	fs := newFlagSet(synopsis)
	fs.StringVar(&f.config, "config", "mcphost.toml", "config file")
	fs.StringVar(&f.logLevel, "log-level", "", "log level (trace, debug, info, warn, error); overrides [server] log_level")
	if name == "serve" {
		fs.StringVar(&f.http, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8808) instead of stdio")
		fs.BoolVar(&f.stateless, "stateless", false, "serve the stateless 2026-07-28 protocol revision over HTTP")
		fs.StringVar(&f.profile, "profile", "", "over stdio, serve only what the config's [[profile]] of this name serves (over HTTP every profile is served at /mcp/NAME)")
	}
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return f, nil
}

// redisLog is go-redis's logger, onto hclog at warn (it logs only what
// went wrong: dial failures, pool trouble).
type redisLog struct{ hclog.Logger }

// Printf implements go-redis's internal.Logging.
func (l redisLog) Printf(_ context.Context, format string, v ...any) {
	l.Warn(strings.TrimSpace(fmt.Sprintf(format, v...)))
}

func newLogger(level string, stderr io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:   "mcphost",
		Level:  hclog.LevelFromString(level),
		Output: stderr,
	})
}

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseFlags("serve", args, stdout, stderr)
	if err != nil {
		return err
	}
	cfg, err := host.LoadConfig(f.config)
	if err != nil {
		return err
	}
	level := cfg.Server.LogLevel
	if f.logLevel != "" {
		level = f.logLevel
	}
	logger := newLogger(level, stderr)
	// go-redis (the shared task store) logs through a process-wide logger
	// of its own, to stderr: into this log instead.
	redis.SetLogger(redisLog{logger.Named("tasks.redis")})
	// Extism would send plugins' WASI output to the process stdout — the
	// protocol stream — when this is set.
	if _, ok := os.LookupEnv("EXTISM_ENABLE_WASI_OUTPUT"); ok {
		logger.Warn("ignoring EXTISM_ENABLE_WASI_OUTPUT: plugin output must not reach stdout, it goes to this log")
		os.Unsetenv("EXTISM_ENABLE_WASI_OUTPUT")
	}

	if f.http != "" {
		cfg.Server.Transport, cfg.Server.Listen = "http", f.http
	}
	if f.stateless {
		cfg.Server.Stateless = true
	}
	if f.profile != "" {
		if cfg.Server.Transport == "http" {
			return &usageError{fmt.Sprintf("--profile %q: over HTTP every profile is served, at %s/%s; --profile selects one over stdio", f.profile, host.MCPPath, f.profile)}
		}
		if cfg.ProfileNamed(f.profile) == nil {
			names := make([]string, 0, len(cfg.Profiles))
			for _, p := range cfg.Profiles {
				names = append(names, p.Name)
			}
			defined := "no [[profile]]"
			if len(names) > 0 {
				defined = "the profiles " + strings.Join(names, ", ")
			}
			return fmt.Errorf("--profile %q: %s defines %s", f.profile, cfg.Path, defined)
		}
	}

	h, err := host.New(ctx, cfg, host.Options{Logger: logger, Version: buildVersion(), SkipBrokenPlugins: true, Stderr: stderr})
	if err != nil {
		return err
	}
	stopHUP := reloadOnSIGHUP(ctx, h, logger)
	defer stopHUP()
	if addr := cfg.Server.Metrics.Listen; addr != "" {
		stopOps, err := serveOps(ctx, h, addr, logger)
		if err != nil {
			_ = h.Close(context.WithoutCancel(ctx))
			return err
		}
		defer stopOps()
	}
	var serveErr error
	if cfg.Server.Transport == "http" {
		serveErr = serveHTTP(ctx, h, cfg, logger, stderr)
	} else {
		if cfg.Server.Auth.Enabled() {
			logger.Warn("[server.auth] applies to the HTTP transport only; over stdio the caller is the local user who started mcphost")
		}
		if f.profile != "" {
			logger.Info("serving MCP over stdio", "config", cfg.Path, "plugins", len(h.Plugins()), "profile", f.profile)
			serveErr = h.ServeStdioProfile(ctx, f.profile, stdin, stdout, shutdownTimeout)
		} else {
			logger.Info("serving MCP over stdio", "config", cfg.Path, "plugins", len(h.Plugins()))
			serveErr = h.ServeStdio(ctx, stdin, stdout, shutdownTimeout)
		}
	}

	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := h.Close(closeCtx); err != nil {
		logger.Warn("closing plugins", "error", err)
	}
	logger.Info("stopped")
	return serveErr
}

// reloadOnSIGHUP reloads the host on every SIGHUP until the returned stop
// function is called.
func reloadOnSIGHUP(ctx context.Context, h *host.Host, logger hclog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-hup:
				logger.Info("SIGHUP: reloading")
				if err := h.Reload(ctx); err != nil {
					logger.Error("reload failed", "error", err)
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-finished
	}
}

// serveOps serves /metrics, /healthz and /readyz on addr of their own until
// the returned stop function is called.
func serveOps(ctx context.Context, h *host.Host, addr string, logger hclog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("[server.metrics] listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           h.OpsHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	logger.Info("serving metrics and health checks", "url", "http://"+ln.Addr().String()+"/metrics")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener", "error", err)
		}
	}()
	return func() {
		_ = srv.Close()
		<-done
	}, nil
}

// serveHTTP listens on the configured address and serves until ctx ends
// (SIGINT/SIGTERM), then drains requests in flight.
func serveHTTP(ctx context.Context, h *host.Host, cfg *host.Config, logger hclog.Logger, stderr io.Writer) error {
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Server.Listen, err)
	}
	mode := "stateful"
	if cfg.Server.Stateless {
		mode = "stateless (2026-07-28)"
	}
	url := "http://" + ln.Addr().String() + host.MCPPath
	logger.Info("serving MCP over Streamable HTTP", "url", url, "mode", mode, "config", cfg.Path, "plugins", len(h.Plugins()))
	fmt.Fprintf(stderr, "mcphost: MCP endpoint %s\n", url)
	for _, name := range h.ProfileNames() {
		fmt.Fprintf(stderr, "mcphost: MCP endpoint %s/%s (profile)\n", url, name)
	}
	return h.ServeStreamableHTTP(ctx, ln, shutdownTimeout)
}

func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseFlags("validate", args, stdout, stderr)
	if err != nil {
		return err
	}
	cfg, err := host.LoadConfig(f.config)
	if err != nil {
		return err
	}
	level := "warn"
	if f.logLevel != "" {
		level = f.logLevel
	}
	// validate only looks: it writes no lock file, audit log or cache.
	cfg.Server.Watch = false
	h, err := host.New(ctx, cfg, host.Options{Logger: newLogger(level, stderr), Version: buildVersion(), ReadOnly: true})
	if err != nil {
		return fmt.Errorf("%s: %w", f.config, err)
	}
	defer h.Close(context.WithoutCancel(ctx))
	plugins := h.Plugins()
	// What serve would leave out fails the check: a CI gate that passes
	// a partly broken or hostile plugin is worse than none.
	leftOut := checkLeftOut(cfg.Path, plugins, false)
	if leftOut == nil {
		fmt.Fprintf(stdout, "%s: ok, %d plugin(s)\n", cfg.Path, len(plugins))
	} else {
		fmt.Fprintf(stdout, "%s: FAILED, %d plugin(s), items left out (see below)\n", cfg.Path, len(plugins))
	}
	for _, p := range plugins {
		fmt.Fprintf(stdout, "  %s (%s abi v%d, %s)\n", p.Name, p.Flavor, p.ABIVersion, p.Path)
		if p.Hostile {
			fmt.Fprintf(stdout, "    LEFT OUT %s\n", wholePluginReason)
		}
		for _, l := range p.LeftOut {
			fmt.Fprintf(stdout, "    LEFT OUT %s\n", describeLeftOut(l))
		}
		if p.Source != "" {
			fmt.Fprintf(stdout, "    source %s (%s)\n", p.Source, p.Digest)
		}
		for _, g := range p.Grants {
			fmt.Fprintf(stdout, "    grants %s\n", g)
		}
		for _, a := range p.Asked {
			given := "granted"
			if slices.Contains(p.AskedNotGranted, a) {
				given = "NOT granted"
			}
			fmt.Fprintf(stdout, "    asks   %s (%s)\n", a, given)
		}
		fmt.Fprintf(stdout, "    limits %s\n", p.Limits)
		if p.ShippedDescription != "" {
			fmt.Fprintf(stdout, "    ships  a description that %s\n", p.ShippedDescription)
		}
		for _, kind := range []struct {
			name  string
			items []string
		}{{"tools", p.Tools}, {"resources", p.Resources}, {"templates", p.Templates}, {"prompts", p.Prompts}, {"skills", p.Skills}} {
			if len(kind.items) > 0 {
				fmt.Fprintf(stdout, "    %d %s: %s\n", len(kind.items), kind.name, strings.Join(kind.items, ", "))
			}
		}
		for _, a := range appReports(p.Apps) {
			fmt.Fprintf(stdout, "    app %s\n", describeApp(a))
		}
	}
	if err := printProfiles(stdout, cfg.Path, h.Profiles()); err != nil && leftOut == nil {
		return err
	}
	return leftOut
}

// printProfiles lists the profiles a config serves and what each shows;
// it returns an error naming those with problems (a tools pattern that
// matches nothing, a rename of a tool they do not serve, …).
func printProfiles(w io.Writer, path string, profiles []host.ProfileInfo) error {
	var bad []string
	for _, p := range profiles {
		fmt.Fprintf(w, "  profile %s (%s/%s)\n", p.Name, host.MCPPath, p.Name)
		for _, problem := range p.Problems {
			fmt.Fprintf(w, "    PROBLEM %s\n", problem)
		}
		if len(p.Problems) > 0 {
			bad = append(bad, p.Name)
		}
		if len(p.Scopes) > 0 {
			fmt.Fprintf(w, "    scopes %s\n", strings.Join(p.Scopes, " "))
		}
		if p.Search {
			fmt.Fprintf(w, "    search: %d tools indexed (clients see search_tools and call_tool)\n", len(p.Tools))
		}
		fmt.Fprintf(w, "    %d tools: %s\n", len(p.Tools), strings.Join(p.Tools, ", "))
		if n := p.Resources + p.Templates + p.Prompts; n > 0 {
			fmt.Fprintf(w, "    %d resources, %d templates, %d prompts\n", p.Resources, p.Templates, p.Prompts)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: profile(s) %s select nothing for part of their table (see PROBLEM above)", path, strings.Join(bad, ", "))
	}
	return nil
}

// buildVersion is the version reported to clients: the one set with
// -ldflags, else the module's version as the go command stamped it (a
// release tag, or a pseudo-version made from the commit), else "dev".
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionLine is what `mcphost version` prints: the version, then what
// the build information says of the source — the VCS commit, its time and
// whether the tree had changes not committed — and the Go toolchain:
//
//	mcphost v0.0.0-20261125122919-3b16f80c1d2e+dirty (commit 3b16f80c1d2e, 2026-11-25T12:29:19Z, modified; go1.26.1 linux/amd64)
//
// A build from a git worktree has no VCS information: the go command
// stamps it only where .git is a directory.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return describeBuild(buildVersion(), bi)
}

// describeBuild formats versionLine from the build information bi (nil
// when there is none).
func describeBuild(version string, bi *debug.BuildInfo) string {
	line := "mcphost " + version
	if bi == nil {
		return line
	}
	var source []string
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		source = append(source, "commit "+rev[:min(len(rev), 12)])
		if t := settings["vcs.time"]; t != "" {
			source = append(source, t)
		}
		if settings["vcs.modified"] == "true" {
			source = append(source, "modified")
		}
	} else {
		source = append(source, "no VCS information")
	}
	toolchain := bi.GoVersion
	if settings["GOOS"] != "" {
		toolchain += " " + settings["GOOS"] + "/" + settings["GOARCH"]
	}
	return fmt.Sprintf("%s (%s; %s)", line, strings.Join(source, ", "), toolchain)
}
