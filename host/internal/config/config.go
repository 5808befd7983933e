// Package config reads and validates mcphost.toml.
//
// Decoding is strict: an unknown key, a value of the wrong type or an invalid
// duration is an error that names the file, the line where it can be found,
// the key and what was expected. Relative plugin paths are resolved against
// the directory of the config file, so a config means the same thing whatever
// the working directory of the host.
package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/mcphost/mcphost/host/internal/auth"
	"github.com/mcphost/mcphost/host/internal/registry"
)

// Defaults applied to a plugin that does not set a value.
const (
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
	DefaultTimeout         = 30 * time.Second
	DefaultMemoryMB        = 128
	DefaultMaxOutputKB     = 4096
	// DefaultStackKB is the call stack an instance may use (stack_kb):
	// wazero's stack, as the interrupt rewrite estimates it.
	DefaultStackKB = 8192
	// MinStackKB and MaxStackKB bound stack_kb: below 64 KiB a plugin's
	// own runtime may not start; above 1 GiB the rewrite does not count.
	MinStackKB = 64
	MaxStackKB = 1 << 20
	// DefaultMaxItems is how many tools, prompts, resources and resource
	// templates (each) one plugin may list.
	DefaultMaxItems = 1000
	// MaxMaxItems is the largest max_items a config may set.
	MaxMaxItems = 100000
	// MinMemoryMB is the smallest memory cap a plugin can run with: Extism's
	// own kernel memory shares the cap with the plugin (see DESIGN.md).
	MinMemoryMB = 2
	// MaxMemoryMB is the largest cap the 32-bit Wasm address space allows.
	MaxMemoryMB = 4096
	// MaxServerMemoryMB is the largest [server] max_memory_mb: 1 TiB.
	MaxServerMemoryMB = 1 << 20
	// DefaultStateKB is state_kb when a plugin does not set it: what one
	// of its scopes of state (one client session's) may hold, keys and
	// values counted.
	DefaultStateKB = 256
	// MaxStateKB is the largest state_kb: 1 GiB.
	MaxStateKB = 1 << 20
	// DefaultMaxStateMB is [server] max_state_mb when the file does not
	// set it: all plugins' state together.
	DefaultMaxStateMB = 64
	// MaxMaxStateMB is the largest [server] max_state_mb: 1 TiB.
	MaxMaxStateMB = 1 << 20
	// DefaultMaxIdleCodeMB is [server] max_idle_code_mb when the file does
	// not set it: the compiled code of about five released Go plugins
	// (~24 MiB each as counted), or of about a hundred small Rust ones.
	DefaultMaxIdleCodeMB = 128
	// MaxMaxIdleCodeMB is the largest [server] max_idle_code_mb: 1 TiB.
	MaxMaxIdleCodeMB = 1 << 20
)

// Config is a whole mcphost.toml.
type Config struct {
	// Path is the file the config was read from ("" when built in code).
	Path    string
	Server  Server
	Plugins []Plugin
	// Profiles are the [[profile]] tables: named subsets of what the host
	// serves, each with its own endpoint.
	Profiles []Profile
	// Written is [server] as the file says it, before command-line flags
	// (serve --http, --stateless) override Server: a reload compares the
	// file with what it said before, not with the flags.
	Written Server
}

// Server is the [server] table.
type Server struct {
	// Name is the server name reported to clients in initialize.
	Name string
	// LogLevel is the host log level: trace, debug, info, warn or error.
	LogLevel string
	// CacheDir holds wazero's compilation cache. Empty means the user cache
	// directory; "off" disables the on-disk cache.
	CacheDir string
	// Transport is "stdio" (the default) or "http".
	Transport string
	// Listen is the address the HTTP transport listens on.
	Listen string
	// Stateless serves the stateless 2026-07-28 protocol revision over HTTP.
	Stateless bool
	// PageSize is how many items a list response holds at most.
	PageSize int
	// MaxMemoryMB bounds the Wasm memory of all plugin instances together,
	// each counted at its memory_mb (max_memory_mb); 0 is no bound.
	MaxMemoryMB int
	// MaxStateMB bounds the state all plugins keep in the host
	// (state_set), in MiB (max_state_mb).
	MaxStateMB int
	// MaxIdleCodeMB bounds the compiled code that released plugins keep
	// for their next call, in MiB as the host estimates it
	// (max_idle_code_mb); beyond it the least recently released plugin's
	// is freed. 0 keeps none (so does a Config built in code that does
	// not set it); a file that does not set it gets DefaultMaxIdleCodeMB.
	MaxIdleCodeMB int
	// ListTTL is the ttlMs hint on list results (2026-07-28 clients).
	ListTTL time.Duration
	// AllowedOrigins are extra Origin values (scheme://host:port) accepted
	// over HTTP besides the listen address itself.
	AllowedOrigins []string
	// SessionTimeout closes HTTP sessions idle this long.
	SessionTimeout time.Duration
	// StartWait is the longest `serve` waits for its plugins before it
	// serves; a plugin still loading then joins when it is ready.
	StartWait time.Duration
	// BackgroundCompile compiles, once the host serves, the plugins it
	// serves from the descriptions their modules ship, instead of at
	// their first calls (background_compile).
	BackgroundCompile bool
	// MaxSessions is the most sessions the stateful HTTP transport keeps
	// open at once; a request that would open another is refused.
	MaxSessions int
	// MaxSessionsPerUser is the most of those one token user ([server.auth])
	// may hold at once; without auth there is no user and it does not apply.
	MaxSessionsPerUser int
	// Watch reloads plugins and the config when their files change.
	Watch bool
	// LockFile records what each plugin offered when it was accepted
	// (default: beside the config, named after it with .lock); "" is off.
	LockFile string
	// DrainDelay is how long, after SIGTERM, the HTTP server keeps serving
	// with /readyz reporting unready, so a load balancer's health check can
	// take it out of rotation before it stops accepting connections.
	DrainDelay time.Duration
	// Tasks configures the tasks of the Tasks extension ([server.tasks]).
	Tasks Tasks
	// Telemetry configures OpenTelemetry export ([server.telemetry]);
	// empty fields fall back to the OTEL_* environment variables.
	Telemetry Telemetry
	// Metrics configures the Prometheus /metrics endpoint ([server.metrics]).
	Metrics Metrics
	// Audit configures the audit log ([server.audit]).
	Audit Audit
	// Auth, when Enabled, makes the HTTP transport an OAuth 2.1 resource
	// server ([server.auth]).
	Auth auth.Config
	// PluginStore is the content-addressed store of plugins fetched from
	// registries and URLs (plugin_store; "" means "store" in the cache
	// directory, see registry.DefaultStoreDir).
	PluginStore string
	// TrustedKeys are the public keys (PEM files, cosign.pub) whose
	// signatures count for plugins from registries (trusted_keys).
	TrustedKeys []string
	// TrustedRoot is a Sigstore trusted_root.json whose certificate
	// authorities vouch for keyless signers; SignerSubject and SignerIssuer
	// are the certificate identity that counts (trusted_root,
	// signer_subject, signer_issuer).
	TrustedRoot, SignerSubject, SignerIssuer string
}

// Metrics is the [server.metrics] table.
type Metrics struct {
	// Enabled serves /metrics in the Prometheus text format.
	Enabled bool
	// Listen, if set, serves /metrics (and /healthz, /readyz) on this
	// address instead of on the MCP listener.
	Listen string
}

// Audit is the [server.audit] table.
type Audit struct {
	// File receives one JSON line per tool call, resource read and prompt
	// get ("" is off; "stderr" writes to the process's stderr).
	File string
	// Arguments adds the call's arguments to each line (off by default:
	// arguments may hold personal data or secrets).
	Arguments bool
}

// Defaults for the [server] table.
const (
	DefaultListen         = "127.0.0.1:8808"
	DefaultPageSize       = 100
	DefaultSessionTimeout = 30 * time.Minute
	// DefaultStartWait is start_wait when the file does not set it.
	DefaultStartWait = 10 * time.Second
	// DefaultMaxSessions is max_sessions when the file does not set it:
	// an idle session of a go-sdk client costs the host about 46 KB and 3
	// goroutines, so the host holds at most ~46 MB of them (RATIONALE.md,
	// "A cap on open sessions").
	DefaultMaxSessions = 1000
	// DefaultMaxSessionsPerUser is max_sessions_per_user when the file does
	// not set it (or max_sessions, when that is smaller): a tenth of the
	// default max_sessions, so ten users can each fill theirs and one user
	// alone can never take every session (RATIONALE.md, "A cap on open
	// sessions").
	DefaultMaxSessionsPerUser = 100
	// MaxMaxSessions is the largest max_sessions accepted.
	MaxMaxSessions = 1000000
	// DefaultIdleTimeout is how long a plugin may go without a call before
	// its instances and compiled module are released.
	DefaultIdleTimeout = 5 * time.Minute
)

// Plugin is one [[plugin]] table.
type Plugin struct {
	// Name identifies the plugin in logs, errors and the CLI.
	Name string
	// Path is the plugin's .wasm file, absolute after Load; "" when the
	// plugin comes from Source.
	Path string
	// Source is the plugin's remote reference (oci://… or https://…) when
	// path names one; the host loads it from the plugin store.
	Source string
	// Insecure lets Source be an oci:// registry on loopback spoken to over
	// plain HTTP (tests, a local registry).
	Insecure bool
	// SkipSignature accepts a remote plugin without a verified signature;
	// the host warns about it on every start.
	SkipSignature bool
	// TrustedKeys are the public keys whose signatures count for this
	// plugin: its own trusted_keys, else [server] trusted_keys.
	TrustedKeys []string
	// TrustedRoot, SignerSubject and SignerIssuer are the keyless signer
	// that counts for this plugin: its own, else [server]'s.
	TrustedRoot, SignerSubject, SignerIssuer string
	// Timeout is the deadline of every call into the plugin.
	Timeout time.Duration
	// TaskTimeout is the deadline of a call that runs as a task of the
	// Tasks extension (each round of it); 0 is DefaultTaskTimeout, or
	// Timeout if that is longer.
	TaskTimeout time.Duration
	// MemoryMB caps the Wasm memory of each instance of the plugin.
	MemoryMB int
	// MaxInstances caps how many instances run calls at the same time.
	MaxInstances int
	// IdleTimeout releases the plugin's instances and compiled module when
	// it has had no call for this long; 0 never does.
	IdleTimeout time.Duration
	// MinInstances, when above 0, keeps the compiled module and that many
	// idle instances through the idle timeout.
	MinInstances int
	// MaxOutputKB caps the size of any one output of the plugin.
	MaxOutputKB int
	// StackKB caps the call stack of each instance of the plugin (wazero's
	// stack, as estimated by the interrupt rewrite); a call past it traps.
	StackKB int
	// StateKB caps the state the plugin keeps in the host for one client
	// session (state_set), keys and values counted, in KiB; 0 turns its
	// state off.
	StateKB int
	// MaxItems caps how many tools, prompts, resources and resource
	// templates (each) the plugin may list; the items past it are left out.
	MaxItems int
	// Config is handed to the plugin (Extism config_get), with ${NAME}
	// (or ${NAME:-default}) in a value replaced by the host's environment
	// variable NAME, as hyper-mcp expands its config; $${ is a literal ${.
	Config map[string]string
	// Prefix is prepended to the names of the plugin's tools.
	Prefix string
	// Naming is how the plugin's tools, prompts and resources are named to
	// clients: NamingPlugin (as the plugin names them) or NamingHyperMCP
	// (as hyper-mcp names them: "{plugin}-{name}", and the plugin's name
	// as the first segment of each URI's path).
	Naming string
	// SHA256 pins the plugin file: a file with another hash is refused.
	SHA256 string
	// Env names the host environment variables the plugin may read.
	Env []string
	// AllowedPaths maps a host directory to the guest path where the
	// plugin sees it, read-only.
	AllowedPaths map[string]string
	// WritablePaths maps a host directory granted with the "rw:" prefix in
	// allowed_paths to the guest path where the plugin may read and write
	// it.
	WritablePaths map[string]string
	// AllowedHosts are the hosts the plugin may send HTTP requests to
	// ("api.example.com", "*.example.com", "*").
	AllowedHosts []string
	// AllowPrivateNetwork lets those requests reach loopback, private and
	// link-local addresses.
	AllowPrivateNetwork bool
	// MaxCallsPerSecond caps the rate of calls (0: no cap).
	MaxCallsPerSecond float64
	// BreakerFailures is how many failed calls in a row (traps, timeouts,
	// oversized outputs) stop calls to the plugin for BreakerCooldown.
	BreakerFailures int
	// BreakerCooldown is how long a tripped breaker refuses calls.
	BreakerCooldown time.Duration
	// OnChange is what happens when a tool's or prompt's definition differs
	// from the one accepted in the lock file: "warn" (serve it, log) or
	// "refuse" (leave it out until `mcphost plugin accept`).
	OnChange string
	// InterruptChecks says how calls are stopped at their deadline:
	// "rewrite" (the module is rewritten to check its deadline; one the
	// rewrite cannot handle completely is refused) or "wazero" (such a
	// module runs under wazero's checks, at loop heads only).
	InterruptChecks string
	// Scopes are the OAuth scopes a caller's token needs for anything this
	// plugin offers (enforced over HTTP with [server.auth]).
	Scopes []string
	// ToolScopes are further scopes per tool, keyed by the tool's name as
	// the plugin lists it (before any prefix).
	ToolScopes map[string][]string
}

// Origin is where the plugin's module comes from, for messages and logs:
// its remote reference (Source) when it has one, else its file (Path).
func (p Plugin) Origin() string {
	if p.Source != "" {
		return p.Source
	}
	return p.Path
}

// fileConfig mirrors the TOML layout; see Config for the meaning of fields.
type fileConfig struct {
	Server struct {
		Name           string   `toml:"name"`
		LogLevel       string   `toml:"log_level"`
		CacheDir       string   `toml:"cache_dir"`
		Transport      string   `toml:"transport"`
		Listen         string   `toml:"listen"`
		Stateless      bool     `toml:"stateless"`
		PageSize       *int     `toml:"page_size"`
		MaxMemoryMB    *int     `toml:"max_memory_mb"`
		MaxStateMB     *int     `toml:"max_state_mb"`
		MaxIdleCodeMB  *int     `toml:"max_idle_code_mb"`
		ListTTL        string   `toml:"list_ttl"`
		AllowedOrigins []string `toml:"allowed_origins"`
		SessionTimeout string   `toml:"session_timeout"`
		StartWait      string   `toml:"start_wait"`
		BackgroundComp *bool    `toml:"background_compile"`
		MaxSessions    *int     `toml:"max_sessions"`
		MaxPerUser     *int     `toml:"max_sessions_per_user"`
		Watch          *bool    `toml:"watch"`
		LockFile       *string  `toml:"lock_file"`
		DrainDelay     string   `toml:"drain_delay"`
		Tasks          struct {
			Store        string `toml:"store"`
			TTL          string `toml:"ttl"`
			MaxRunning   *int   `toml:"max_running"`
			MaxKept      *int   `toml:"max_kept"`
			PollInterval string `toml:"poll_interval"`
		} `toml:"tasks"`
		Telemetry struct {
			TracesExporter  string `toml:"traces_exporter"`
			MetricsExporter string `toml:"metrics_exporter"`
			Endpoint        string `toml:"endpoint"`
			Protocol        string `toml:"protocol"`
			ServiceName     string `toml:"service_name"`
			Sampler         string `toml:"sampler"`
			SamplerArg      string `toml:"sampler_arg"`
		} `toml:"telemetry"`
		Metrics struct {
			Enabled bool   `toml:"enabled"`
			Listen  string `toml:"listen"`
		} `toml:"metrics"`
		Audit struct {
			File      string `toml:"file"`
			Arguments bool   `toml:"arguments"`
		} `toml:"audit"`
		Auth        auth.Config `toml:"auth"`
		PluginStore string      `toml:"plugin_store"`
		TrustedKeys []string    `toml:"trusted_keys"`
		TrustedRoot string      `toml:"trusted_root"`
		SignerSubj  string      `toml:"signer_subject"`
		SignerIss   string      `toml:"signer_issuer"`
	} `toml:"server"`
	Plugins  []filePlugin  `toml:"plugin"`
	Profiles []fileProfile `toml:"profile"`
}

type filePlugin struct {
	Name         string              `toml:"name"`
	Path         string              `toml:"path"`
	Timeout      string              `toml:"timeout"`
	TaskTimeout  string              `toml:"task_timeout"`
	MemoryMB     *int                `toml:"memory_mb"`
	MaxInstances *int                `toml:"max_instances"`
	MaxOutputKB  *int                `toml:"max_output_kb"`
	StackKB      *int                `toml:"stack_kb"`
	StateKB      *int                `toml:"state_kb"`
	IdleTimeout  string              `toml:"idle_timeout"`
	MinInstances *int                `toml:"min_instances"`
	MaxItems     *int                `toml:"max_items"`
	Config       map[string]string   `toml:"config"`
	Prefix       string              `toml:"prefix"`
	Naming       string              `toml:"naming"`
	SHA256       string              `toml:"sha256"`
	Env          []string            `toml:"env"`
	AllowedPaths map[string]string   `toml:"allowed_paths"`
	AllowedHosts []string            `toml:"allowed_hosts"`
	AllowPrivate bool                `toml:"allow_private_network"`
	MaxCallsPS   *float64            `toml:"max_calls_per_second"`
	BreakerFails *int                `toml:"breaker_failures"`
	BreakerCool  string              `toml:"breaker_cooldown"`
	OnChange     string              `toml:"on_change"`
	Interrupts   string              `toml:"interrupt_checks"`
	Scopes       []string            `toml:"scopes"`
	ToolScopes   map[string][]string `toml:"tool_scopes"`
	Insecure     bool                `toml:"insecure"`
	SkipSig      bool                `toml:"skip_signature"`
	TrustedKeys  []string            `toml:"trusted_keys"`
	TrustedRoot  string              `toml:"trusted_root"`
	SignerSubj   string              `toml:"signer_subject"`
	SignerIss    string              `toml:"signer_issuer"`
}

var knownKeys = map[string][]string{
	"server": {"name", "log_level", "cache_dir", "transport", "listen", "stateless", "page_size", "max_memory_mb", "max_state_mb", "list_ttl",
		"allowed_origins", "session_timeout", "start_wait", "background_compile", "max_sessions", "max_sessions_per_user", "watch", "lock_file", "drain_delay", "tasks", "telemetry", "metrics", "audit", "auth", "plugin_store", "trusted_keys",
		"trusted_root", "signer_subject", "signer_issuer"},
	"server.tasks":     {"store", "ttl", "max_running", "max_kept", "poll_interval"},
	"server.telemetry": {"traces_exporter", "metrics_exporter", "endpoint", "protocol", "service_name", "sampler", "sampler_arg"},
	"server.metrics":   {"enabled", "listen"},
	"server.audit":     {"file", "arguments"},
	"server.auth":      auth.TOMLKeys(),
	"plugin": {"name", "path", "timeout", "task_timeout", "memory_mb", "max_instances", "idle_timeout", "min_instances", "max_output_kb", "stack_kb", "state_kb", "max_items", "config", "prefix", "naming",
		"sha256", "env", "allowed_paths", "allowed_hosts", "allow_private_network",
		"max_calls_per_second", "breaker_failures", "breaker_cooldown", "on_change", "interrupt_checks", "scopes", "tool_scopes",
		"insecure", "skip_signature", "trusted_keys", "trusted_root", "signer_subject", "signer_issuer"},
	"profile": profileKeys,
}

// validName is what a plugin name may look like: it appears in logs, errors,
// CLI arguments and, later, tool-name prefixes.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// validPrefix is what a tool-name prefix may look like (tool names allow
// A-Z a-z 0-9 _ - .).
var validPrefix = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// hyperMCPName is what hyper-mcp accepts as a plugin name (its
// src/naming.rs): with naming = "hyper-mcp" the name is part of every tool,
// prompt and URI, and hyper-mcp splits names at the first "-".
var hyperMCPName = regexp.MustCompile(`^[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*$`)

// Values of naming.
const (
	NamingPlugin   = "plugin"
	NamingHyperMCP = "hyper-mcp"
)

var validSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

var logLevels = []string{"trace", "debug", "info", "warn", "error"}

// Load reads, decodes and validates the config file at path. It does not
// open the plugin files; the host does that when it loads them.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates config text; path names the file in errors
// and anchors relative plugin paths.
func Parse(path string, data []byte) (*Config, error) {
	// Decoded without a destination first, the text's syntax is checked and
	// each value's type can be compared with what its key wants, so that a
	// wrong type is reported by key and line rather than in the TOML
	// library's words.
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return nil, decodeError(path, err, false)
	}
	idx := indexLines(string(data))
	if problems := typeProblems(path, idx, raw); len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	var fc fileConfig
	md, err := toml.Decode(string(data), &fc)
	if err != nil {
		return nil, decodeError(path, err, true)
	}
	lines := strings.Split(string(data), "\n")
	var problems []error
	for _, key := range md.Undecoded() {
		problems = append(problems, unknownKeyError(path, lines, key))
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}

	absPath, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config path %q: %w", path, err)
	}
	cfg := &Config{
		Path: absPath,
		Server: Server{
			Name:     fc.Server.Name,
			LogLevel: strings.ToLower(fc.Server.LogLevel),
			CacheDir: fc.Server.CacheDir,
		},
	}
	if cfg.Server.Name == "" {
		cfg.Server.Name = "mcphost"
	}
	if cfg.Server.LogLevel == "" {
		cfg.Server.LogLevel = "info"
	}
	if !slices.Contains(logLevels, cfg.Server.LogLevel) {
		problems = append(problems, fmt.Errorf("%s: [server] log_level: %q is not one of %s",
			idx.at(path, "server.log_level"), fc.Server.LogLevel, strings.Join(logLevels, ", ")))
	}
	problems = append(problems, convertServer(path, idx, fc, &cfg.Server)...)
	switch {
	case fc.Server.LockFile == nil:
		cfg.Server.LockFile = strings.TrimSuffix(absPath, filepath.Ext(absPath)) + ".lock"
	case *fc.Server.LockFile == "off":
	case filepath.IsAbs(*fc.Server.LockFile):
		cfg.Server.LockFile = *fc.Server.LockFile
	default:
		cfg.Server.LockFile = filepath.Join(filepath.Dir(absPath), *fc.Server.LockFile)
	}
	if f := cfg.Server.Audit.File; f != "" && f != "stderr" && !filepath.IsAbs(f) {
		cfg.Server.Audit.File = filepath.Join(filepath.Dir(absPath), f)
	}
	if cfg.Server.CacheDir != "" && cfg.Server.CacheDir != "off" && !filepath.IsAbs(cfg.Server.CacheDir) {
		cfg.Server.CacheDir = filepath.Join(filepath.Dir(absPath), cfg.Server.CacheDir)
	}
	if s := fc.Server.PluginStore; s != "" {
		if !filepath.IsAbs(s) {
			s = filepath.Join(filepath.Dir(absPath), s)
		}
		cfg.Server.PluginStore = s
	}

	abs := func(f string) string {
		if filepath.IsAbs(f) {
			return f
		}
		return filepath.Join(filepath.Dir(absPath), f)
	}
	for _, k := range fc.Server.TrustedKeys {
		cfg.Server.TrustedKeys = append(cfg.Server.TrustedKeys, abs(k))
	}
	if fc.Server.TrustedRoot != "" {
		cfg.Server.TrustedRoot = abs(fc.Server.TrustedRoot)
	}
	cfg.Server.SignerSubject, cfg.Server.SignerIssuer = fc.Server.SignerSubj, fc.Server.SignerIss
	if (cfg.Server.TrustedRoot != "" || cfg.Server.SignerSubject != "" || cfg.Server.SignerIssuer != "") &&
		(cfg.Server.TrustedRoot == "" || cfg.Server.SignerSubject == "" || cfg.Server.SignerIssuer == "") {
		problems = append(problems, fmt.Errorf("%s: [server] trusted_root, signer_subject and signer_issuer go together (a keyless signer); one is missing", idx.at(path, "server.trusted_root")))
	}
	seen := map[string]bool{}
	for i, fp := range fc.Plugins {
		p, errs := convertPlugin(path, idx, filepath.Dir(absPath), i, fp)
		if p.Source != "" {
			p.TrustedKeys = cfg.Server.TrustedKeys
			if fp.TrustedKeys != nil {
				p.TrustedKeys = nil
				for _, k := range fp.TrustedKeys {
					p.TrustedKeys = append(p.TrustedKeys, abs(k))
				}
			}
			p.TrustedRoot, p.SignerSubject, p.SignerIssuer = cfg.Server.TrustedRoot, cfg.Server.SignerSubject, cfg.Server.SignerIssuer
			if fp.TrustedRoot != "" || fp.SignerSubj != "" || fp.SignerIss != "" {
				p.TrustedRoot, p.SignerSubject, p.SignerIssuer = "", fp.SignerSubj, fp.SignerIss
				if fp.TrustedRoot != "" {
					p.TrustedRoot = abs(fp.TrustedRoot)
				}
				if p.TrustedRoot == "" || p.SignerSubject == "" || p.SignerIssuer == "" {
					problems = append(problems, fmt.Errorf("%s: plugin %q: trusted_root, signer_subject and signer_issuer go together (a keyless signer); one is missing", idx.at(path, fmt.Sprintf("plugin.%d.path", i)), p.Name))
				}
			}
		}
		if p.Source == "" && (fp.TrustedRoot != "" || fp.SignerSubj != "" || fp.SignerIss != "") {
			problems = append(problems, fmt.Errorf("%s: plugin %q: trusted_root, signer_subject and signer_issuer: only a plugin from a registry is signed; path %q is a local file", idx.at(path, fmt.Sprintf("plugin.%d.path", i)), p.Name, fp.Path))
		}
		problems = append(problems, errs...)
		if budget := cfg.Server.MaxMemoryMB; budget > 0 && p.MemoryMB > budget {
			problems = append(problems, fmt.Errorf("%s: plugin %q: memory_mb = %d is more than [server] max_memory_mb = %d: no instance of it could run", idx.at(path, fmt.Sprintf("plugin.%d.name", i)), p.Name, p.MemoryMB, budget))
		}
		if p.Name != "" && seen[p.Name] {
			problems = append(problems, fmt.Errorf("%s: [[plugin]] #%d: name %q is used by an earlier plugin", idx.at(path, fmt.Sprintf("plugin.%d.name", i)), i+1, p.Name))
		}
		seen[p.Name] = true
		cfg.Plugins = append(cfg.Plugins, p)
	}
	seenProfile := map[string]bool{}
	for i, fp := range fc.Profiles {
		p, errs := convertProfile(path, idx, i, fp, seen)
		problems = append(problems, errs...)
		if p.Name != "" && seenProfile[p.Name] {
			problems = append(problems, fmt.Errorf("%s: [[profile]] #%d: name %q is used by an earlier profile", idx.at(path, fmt.Sprintf("profile.%d.name", i)), i+1, p.Name))
		}
		seenProfile[p.Name] = true
		cfg.Profiles = append(cfg.Profiles, p)
	}
	problems = append(problems, stateProblems(cfg, func(i int) string {
		return idx.at(path, fmt.Sprintf("plugin.%d.allowed_paths", i))
	})...)
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	cfg.Written = cfg.Server
	return cfg, nil
}

// decodeError words an error of the TOML decoder as "path:line: message",
// naming the key when the error is about a value (a syntax error's last
// key is only the one before the mistake).
func decodeError(path string, err error, aboutValue bool) error {
	var perr toml.ParseError
	if !errors.As(err, &perr) {
		return fmt.Errorf("%s: %w", path, err)
	}
	if aboutValue && perr.LastKey != "" {
		key := strings.Split(perr.LastKey, ".")
		return fmt.Errorf("%s:%d: %s: %s", path, perr.Position.Line, bracketed(key), perr.Message)
	}
	return fmt.Errorf("%s:%d: %s", path, perr.Position.Line, perr.Message)
}

// convertServer checks and fills the transport keys of [server].
func convertServer(path string, idx lineIndex, fc fileConfig, s *Server) []error {
	var problems []error
	bad := func(key, format string, args ...any) {
		problems = append(problems, fmt.Errorf("%s: [server] %s: %s", idx.at(path, "server."+key), key, fmt.Sprintf(format, args...)))
	}
	fs := fc.Server
	s.Transport = strings.ToLower(fs.Transport)
	switch s.Transport {
	case "":
		s.Transport = "stdio"
	case "stdio", "http":
	default:
		bad("transport", "%q is not one of stdio, http", fs.Transport)
	}
	s.Listen = fs.Listen
	if s.Listen == "" {
		s.Listen = DefaultListen
	} else if _, _, err := net.SplitHostPort(s.Listen); err != nil {
		bad("listen", "%q is not host:port (e.g. \"127.0.0.1:8808\")", fs.Listen)
	}
	s.Stateless = fs.Stateless
	s.Watch = fs.Watch == nil || *fs.Watch
	s.PageSize = DefaultPageSize
	if fs.PageSize != nil {
		if *fs.PageSize < 1 || *fs.PageSize > 10000 {
			bad("page_size", "%d is out of range (expected 1 to 10000)", *fs.PageSize)
		} else {
			s.PageSize = *fs.PageSize
		}
	}
	if fs.MaxMemoryMB != nil {
		if *fs.MaxMemoryMB != 0 && (*fs.MaxMemoryMB < MinMemoryMB || *fs.MaxMemoryMB > MaxServerMemoryMB) {
			bad("max_memory_mb", "%d is out of range (expected 0 for no budget, or %d to %d)", *fs.MaxMemoryMB, MinMemoryMB, MaxServerMemoryMB)
		} else {
			s.MaxMemoryMB = *fs.MaxMemoryMB
		}
	}
	s.MaxIdleCodeMB = DefaultMaxIdleCodeMB
	if fs.MaxIdleCodeMB != nil {
		if *fs.MaxIdleCodeMB < 0 || *fs.MaxIdleCodeMB > MaxMaxIdleCodeMB {
			bad("max_idle_code_mb", "%d is out of range (expected 0 to keep no compiled code for released plugins, up to %d)", *fs.MaxIdleCodeMB, MaxMaxIdleCodeMB)
		} else {
			s.MaxIdleCodeMB = *fs.MaxIdleCodeMB
		}
	}
	s.MaxStateMB = DefaultMaxStateMB
	if fs.MaxStateMB != nil {
		if *fs.MaxStateMB < 1 || *fs.MaxStateMB > MaxMaxStateMB {
			bad("max_state_mb", "%d is out of range (expected 1 to %d; a plugin's state_kb = 0 turns its state off)", *fs.MaxStateMB, MaxMaxStateMB)
		} else {
			s.MaxStateMB = *fs.MaxStateMB
		}
	}
	parseDuration := func(key, text string, def time.Duration, allowZero bool) time.Duration {
		if text == "" {
			return def
		}
		d, err := time.ParseDuration(text)
		if err != nil {
			bad(key, "%q is not a duration (expected e.g. \"10s\", \"5m\")", text)
			return def
		}
		if d < 0 || (d == 0 && !allowZero) {
			bad(key, "%q must be greater than zero", text)
			return def
		}
		return d
	}
	s.ListTTL = parseDuration("list_ttl", fs.ListTTL, 0, true)
	s.SessionTimeout = parseDuration("session_timeout", fs.SessionTimeout, DefaultSessionTimeout, false)
	s.StartWait = parseDuration("start_wait", fs.StartWait, DefaultStartWait, true)
	s.BackgroundCompile = fs.BackgroundComp == nil || *fs.BackgroundComp
	s.DrainDelay = parseDuration("drain_delay", fs.DrainDelay, 0, true)
	s.Tasks = Tasks{
		Store:        fs.Tasks.Store,
		TTL:          parseDuration("tasks.ttl", fs.Tasks.TTL, DefaultTaskTTL, false),
		PollInterval: parseDuration("tasks.poll_interval", fs.Tasks.PollInterval, DefaultTaskPollInterval, false),
		MaxRunning:   DefaultMaxRunningTasks,
		MaxKept:      DefaultMaxKeptTasks,
	}
	s.Telemetry = Telemetry(fs.Telemetry)
	for _, e := range s.Telemetry.check() {
		bad("telemetry."+e.key, "%s", e.msg)
	}
	if fs.Tasks.MaxKept != nil {
		if *fs.Tasks.MaxKept < 1 || *fs.Tasks.MaxKept > MaxMaxKeptTasks {
			bad("tasks.max_kept", "%d is out of range (expected 1 to %d)", *fs.Tasks.MaxKept, MaxMaxKeptTasks)
		} else {
			s.Tasks.MaxKept = *fs.Tasks.MaxKept
		}
	}
	if err := CheckTaskStore(s.Tasks.Store); err != nil {
		bad("tasks.store", "%v", err)
	}
	if fs.Tasks.MaxRunning != nil {
		if *fs.Tasks.MaxRunning < 1 || *fs.Tasks.MaxRunning > MaxMaxRunningTasks {
			bad("tasks.max_running", "%d is out of range (expected 1 to %d)", *fs.Tasks.MaxRunning, MaxMaxRunningTasks)
		} else {
			s.Tasks.MaxRunning = *fs.Tasks.MaxRunning
		}
	}
	s.MaxSessions = DefaultMaxSessions
	if fs.MaxSessions != nil {
		if *fs.MaxSessions < 1 || *fs.MaxSessions > MaxMaxSessions {
			bad("max_sessions", "%d is out of range (expected 1 to %d)", *fs.MaxSessions, MaxMaxSessions)
		} else {
			s.MaxSessions = *fs.MaxSessions
		}
	}
	s.MaxSessionsPerUser = min(DefaultMaxSessionsPerUser, s.MaxSessions)
	if fs.MaxPerUser != nil {
		switch {
		case *fs.MaxPerUser < 1 || *fs.MaxPerUser > MaxMaxSessions:
			bad("max_sessions_per_user", "%d is out of range (expected 1 to %d)", *fs.MaxPerUser, MaxMaxSessions)
		case *fs.MaxPerUser > s.MaxSessions:
			bad("max_sessions_per_user", "%d is more than max_sessions (%d): one user could hold more sessions than the host keeps", *fs.MaxPerUser, s.MaxSessions)
		default:
			s.MaxSessionsPerUser = *fs.MaxPerUser
		}
	}
	s.Metrics.Enabled = fs.Metrics.Enabled
	s.Metrics.Listen = fs.Metrics.Listen
	if s.Metrics.Listen != "" {
		if _, _, err := net.SplitHostPort(s.Metrics.Listen); err != nil {
			problems = append(problems, fmt.Errorf("%s: [server.metrics] listen: %q is not host:port (e.g. \"127.0.0.1:9464\")", idx.at(path, "server.metrics.listen"), fs.Metrics.Listen))
		}
		if !s.Metrics.Enabled {
			problems = append(problems, fmt.Errorf("%s: [server.metrics] listen is set but enabled is not true", idx.at(path, "server.metrics.listen")))
		}
	}
	s.Audit.File = fs.Audit.File
	s.Audit.Arguments = fs.Audit.Arguments
	s.Auth = fs.Auth
	if s.Auth.Enabled() {
		if s.Auth.KeyFile != "" && !filepath.IsAbs(s.Auth.KeyFile) {
			if abs, err := filepath.Abs(path); err == nil {
				s.Auth.KeyFile = filepath.Join(filepath.Dir(abs), s.Auth.KeyFile)
			}
		}
		if err := s.Auth.Validate(); err != nil {
			for _, e := range unjoin(err) {
				problems = append(problems, fmt.Errorf("%s: %w", idx.at(path, "server.auth"), e))
			}
		}
	}
	if s.Audit.Arguments && s.Audit.File == "" {
		problems = append(problems, fmt.Errorf("%s: [server.audit] arguments = true needs file to be set", idx.at(path, "server.audit.arguments")))
	}
	for _, o := range fs.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			bad("allowed_origins", "%q is not an origin (expected scheme://host[:port], e.g. \"http://localhost:6274\")", o)
			continue
		}
		s.AllowedOrigins = append(s.AllowedOrigins, u.Scheme+"://"+u.Host)
	}
	return problems
}

// badFunc reports a problem with a key of one [[plugin]] table; the
// message is format and args, after the file, line, plugin and key.
type badFunc func(key, format string, args ...any)

// intKey is an integer key of a [[plugin]] table: its value in the file
// (nil when absent), the field of Plugin it sets, and the range it must be
// in; note ends the "(expected MIN to MAX…)" of the error. When atMost is
// set, the value may not exceed that of the key atMostKey as written.
type intKey struct {
	key       string
	from      *int
	to        *int
	min, max  int
	note      string
	atMostKey string
	atMost    *int
}

// apply sets k.to from the file, or reports a value out of range (leaving
// the default).
func (k intKey) apply(bad badFunc) {
	if k.from == nil {
		return
	}
	if *k.from < k.min || *k.from > k.max {
		bad(k.key, "%d is out of range (expected %d to %d%s)", *k.from, k.min, k.max, k.note)
		return
	}
	if k.atMost != nil && *k.from > *k.atMost {
		bad(k.key, "%d is more than %s (%d)", *k.from, k.atMostKey, *k.atMost)
		return
	}
	*k.to = *k.from
}

// durationKey is a duration key of a [[plugin]] table: its text in the
// file ("" when absent), the field of Plugin it sets, whether zero is
// allowed, and the formats (each given the text, %q) of the errors for
// text that is not a duration and for a duration out of range.
type durationKey struct {
	key         string
	from        string
	to          *time.Duration
	zeroOK      bool
	notDuration string
	outOfRange  string
}

// apply sets k.to from the file, or reports why it cannot (leaving the
// default).
func (k durationKey) apply(bad badFunc) {
	if k.from == "" {
		return
	}
	d, err := time.ParseDuration(k.from)
	switch {
	case err != nil:
		bad(k.key, k.notDuration, k.from)
	case d < 0 || d == 0 && !k.zeroOK:
		bad(k.key, k.outOfRange, k.from)
	default:
		*k.to = d
	}
}

// wordKey is a key of a [[plugin]] table that is one of a few words: its
// text in the file, the field of Plugin it sets, and the words; the first
// is the default, taken when the key is absent.
type wordKey struct {
	key   string
	from  string
	to    *string
	words []string
}

// apply sets k.to from the file, or reports a word that is not one of
// k.words.
func (k wordKey) apply(bad badFunc) {
	switch {
	case k.from == "":
		*k.to = k.words[0]
	case slices.Contains(k.words, k.from):
		*k.to = k.from
	default:
		bad(k.key, "%q is not one of %s", k.from, strings.Join(k.words, ", "))
	}
}

// mounts checks a [[plugin]] table's allowed_paths (host directory, with
// an optional "ro:" or "rw:" prefix, -> guest path) and splits them into
// read-only and writable mounts, host directory -> guest path, each nil
// when there is none.
func mounts(allowed map[string]string, baseDir string, bad badFunc) (ro, rw map[string]string) {
	guests := map[string]string{} // guest path -> the key that mounts it
	for _, key := range slices.Sorted(maps.Keys(allowed)) {
		guest := allowed[key]
		hostDir, writable := strings.CutPrefix(key, "rw:")
		if !writable {
			hostDir = strings.TrimPrefix(hostDir, "ro:")
		}
		var err error
		if hostDir, err = expandHome(hostDir); err != nil {
			bad("allowed_paths", "%q: %v", key, err)
			continue
		}
		if guest, err = expandHome(guest); err != nil {
			bad("allowed_paths", "guest path %q: %v", guest, err)
			continue
		}
		if !filepath.IsAbs(hostDir) {
			hostDir = filepath.Join(baseDir, hostDir)
		}
		if st, err := os.Stat(hostDir); err != nil || !st.IsDir() {
			bad("allowed_paths", "%q is not a directory", hostDir)
			continue
		}
		if !strings.HasPrefix(guest, "/") {
			bad("allowed_paths", "guest path %q for %q must be absolute (e.g. \"/data\")", guest, hostDir)
			continue
		}
		guest = filepath.Clean(guest)
		if other, ok := guests[guest]; ok {
			bad("allowed_paths", "%q and %q are both mounted at %q", other, key, guest)
			continue
		}
		guests[guest] = key
		grant := &ro
		if writable {
			grant = &rw
		}
		if *grant == nil {
			*grant = map[string]string{}
		}
		(*grant)[filepath.Clean(hostDir)] = guest
	}
	return ro, rw
}

// expandHome replaces a leading "~" of path ("~" alone or "~/…") with the
// home directory of the user running mcphost, as a shell would; other
// paths are returned as they are ("~user" is not expanded). It applies to
// both sides of an allowed_paths entry, so that a directory can be
// mounted at the path it has on the host ("rw:~/notes" = "~/notes") and a
// plugin shows and accepts the paths the user knows.
func expandHome(path string) (string, error) {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot expand ~: %w", err)
	}
	return filepath.Join(home, path[1:]), nil
}

// convertPlugin checks the [[plugin]] table number index of the file at
// path and converts it to a Plugin, with every problem found, each naming
// the file, line, plugin and key.
func convertPlugin(path string, idx lineIndex, baseDir string, index int, fp filePlugin) (Plugin, []error) {
	var problems []error
	where := fmt.Sprintf("[[plugin]] #%d", index+1)
	if fp.Name != "" {
		where = fmt.Sprintf("plugin %q", fp.Name)
	}
	var bad badFunc = func(key, format string, args ...any) {
		at := idx.at(path, fmt.Sprintf("plugin.%d.%s", index, key))
		problems = append(problems, fmt.Errorf("%s: %s: %s: %s", at, where, key, fmt.Sprintf(format, args...)))
	}

	p := Plugin{
		Name:            fp.Name,
		Timeout:         DefaultTimeout,
		MemoryMB:        DefaultMemoryMB,
		MaxInstances:    0,
		IdleTimeout:     DefaultIdleTimeout,
		MaxOutputKB:     DefaultMaxOutputKB,
		StackKB:         DefaultStackKB,
		StateKB:         DefaultStateKB,
		MaxItems:        DefaultMaxItems,
		BreakerFailures: DefaultBreakerFailures,
		BreakerCooldown: DefaultBreakerCooldown,
		Prefix:          fp.Prefix,
	}
	// ${NAME} in a config value is the host's environment variable NAME,
	// as in hyper-mcp's config: the operator grants it by writing it.
	p.Config = expandConfigEnv(fp.Config, bad)
	p.SHA256 = strings.ToLower(fp.SHA256)
	if fp.SHA256 != "" && !validSHA256.MatchString(p.SHA256) {
		bad("sha256", "%q is not a SHA-256 in hex (64 characters; `mcphost plugin inspect FILE` prints it)", fp.SHA256)
	}
	for _, name := range fp.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			bad("env", "%q is not an environment variable name", name)
		}
	}
	p.Env = fp.Env
	p.AllowedPaths, p.WritablePaths = mounts(fp.AllowedPaths, baseDir, bad)
	for _, h := range fp.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/:@ ") || (strings.Contains(h, "*") && h != "*" && !strings.HasPrefix(h, "*.")) {
			bad("allowed_hosts", "%q is not a host pattern (expected \"api.example.com\", \"*.example.com\" or \"*\")", h)
		}
	}
	p.AllowedHosts = fp.AllowedHosts
	p.AllowPrivateNetwork = fp.AllowPrivate
	if fp.MaxCallsPS != nil {
		if *fp.MaxCallsPS <= 0 || *fp.MaxCallsPS > 1e6 {
			bad("max_calls_per_second", "%v is out of range (expected more than 0, at most 1000000)", *fp.MaxCallsPS)
		} else {
			p.MaxCallsPerSecond = *fp.MaxCallsPS
		}
	}
	validScope := func(key, scope string) {
		// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
		ok := scope != ""
		for _, r := range scope {
			ok = ok && r >= 0x21 && r <= 0x7e && r != '"' && r != '\\'
		}
		if !ok {
			bad(key, "%q is not an OAuth scope (printable ASCII, no spaces, quotes or backslashes)", scope)
		}
	}
	for _, sc := range fp.Scopes {
		validScope("scopes", sc)
	}
	p.Scopes = fp.Scopes
	for tool, scopes := range fp.ToolScopes {
		for _, sc := range scopes {
			validScope("tool_scopes."+tool, sc)
		}
	}
	p.ToolScopes = fp.ToolScopes
	switch fp.Naming {
	case "", NamingPlugin:
		p.Naming = NamingPlugin
	case NamingHyperMCP:
		p.Naming = NamingHyperMCP
		if fp.Prefix != "" {
			bad("naming", "prefix and naming = %q both rename the plugin's tools; keep one", NamingHyperMCP)
		}
		if fp.Name != "" && !hyperMCPName.MatchString(fp.Name) {
			bad("name", "%q cannot be used with naming = %q (hyper-mcp's plugin names: letters and digits, words joined by single '_')", fp.Name, NamingHyperMCP)
		}
	default:
		bad("naming", "%q is not one of %s, %s", fp.Naming, NamingPlugin, NamingHyperMCP)
	}
	if fp.Prefix != "" && !validPrefix.MatchString(fp.Prefix) {
		bad("prefix", "%q is not a valid tool-name prefix (letters, digits, '_', '-', '.'; at most 64)", fp.Prefix)
	}
	switch {
	case fp.Name == "":
		bad("name", "missing (every [[plugin]] needs a name)")
	case !validName.MatchString(fp.Name):
		bad("name", "%q is not a valid name (letters, digits, '_', '-', '.'; at most 64; starting with a letter or digit)", fp.Name)
	}
	switch {
	case fp.Path == "":
		bad("path", "missing (the plugin's .wasm file, an oci:// reference or an https:// URL)")
	case registry.IsRemote(fp.Path):
		problems = append(problems, remoteSource(fp, &p, bad)...)
	default:
		p.Path = fp.Path
		if !filepath.IsAbs(p.Path) {
			p.Path = filepath.Join(baseDir, p.Path)
		}
		if fp.Insecure {
			bad("insecure", "only a plugin from an oci:// registry on loopback can be insecure; path %q is a local file", fp.Path)
		}
		if fp.SkipSig {
			bad("skip_signature", "only a plugin from a registry or URL is signed; path %q is a local file", fp.Path)
		}
		if fp.TrustedKeys != nil {
			bad("trusted_keys", "only a plugin from a registry is signed; path %q is a local file", fp.Path)
		}
	}
	for _, k := range []wordKey{
		{key: "on_change", from: fp.OnChange, to: &p.OnChange, words: []string{"warn", "refuse"}},
		{key: "interrupt_checks", from: fp.Interrupts, to: &p.InterruptChecks, words: []string{"rewrite", "wazero"}},
	} {
		k.apply(bad)
	}
	for _, k := range []durationKey{
		{key: "timeout", from: fp.Timeout, to: &p.Timeout,
			notDuration: `%q is not a duration (expected e.g. "10s", "500ms", "1m")`,
			outOfRange:  `%q must be greater than zero`},
		{key: "task_timeout", from: fp.TaskTimeout, to: &p.TaskTimeout,
			notDuration: `%q is not a duration (expected e.g. "10m", "1h")`,
			outOfRange:  `%q must be greater than zero`},
		{key: "idle_timeout", from: fp.IdleTimeout, to: &p.IdleTimeout, zeroOK: true,
			notDuration: `%q is not a duration (expected e.g. "5m", "30s"; "0" never releases the plugin)`,
			outOfRange:  `%q must not be negative ("0" never releases the plugin)`},
		{key: "breaker_cooldown", from: fp.BreakerCool, to: &p.BreakerCooldown,
			notDuration: `%q is not a positive duration (e.g. "30s")`,
			outOfRange:  `%q is not a positive duration (e.g. "30s")`},
	} {
		k.apply(bad)
	}
	if fp.TaskTimeout != "" && p.TaskTimeout > 0 && p.TaskTimeout < p.Timeout {
		bad("task_timeout", "%q is shorter than the plugin's timeout (%s): a task's run may take longer than a call, not less", fp.TaskTimeout, p.Timeout)
	}
	for _, k := range []intKey{
		{key: "memory_mb", from: fp.MemoryMB, to: &p.MemoryMB, min: MinMemoryMB, max: MaxMemoryMB},
		{key: "max_instances", from: fp.MaxInstances, to: &p.MaxInstances, min: 1, max: 1024},
		{key: "min_instances", from: fp.MinInstances, to: &p.MinInstances, min: 0, max: 1024,
			atMostKey: "max_instances", atMost: fp.MaxInstances},
		{key: "max_output_kb", from: fp.MaxOutputKB, to: &p.MaxOutputKB, min: 1, max: 1 << 20},
		{key: "stack_kb", from: fp.StackKB, to: &p.StackKB, min: MinStackKB, max: MaxStackKB},
		{key: "state_kb", from: fp.StateKB, to: &p.StateKB, min: 0, max: MaxStateKB, note: "; 0 turns the plugin's state off"},
		{key: "max_items", from: fp.MaxItems, to: &p.MaxItems, min: 1, max: MaxMaxItems},
		{key: "breaker_failures", from: fp.BreakerFails, to: &p.BreakerFailures, min: 0, max: 1000, note: "; 0 turns the breaker off"},
	} {
		k.apply(bad)
	}
	return p, problems
}

// unknownKeyError names an undecoded key, the line it is on and the keys
// that are allowed in its table.
func unknownKeyError(path string, lines []string, key toml.Key) error {
	last := key[len(key)-1]
	line := findKeyLine(lines, last)
	table := "top level"
	known := []string{"server", "plugin", "profile"}
	if len(key) > 1 {
		name := strings.Join(key[:len(key)-1], ".")
		table = "[" + name + "]"
		if key[0] == "plugin" || key[0] == "profile" {
			name, table = key[0], "[["+key[0]+"]]"
		}
		known = knownKeys[name]
	}
	loc := path
	if line > 0 {
		loc = fmt.Sprintf("%s:%d", path, line)
	}
	return fmt.Errorf("%s: unknown key %q in %s (expected one of: %s)", loc, last, table, strings.Join(known, ", "))
}

// findKeyLine returns the 1-based line where key is assigned or opens a
// table, or 0 when it cannot be found.
func findKeyLine(lines []string, key string) int {
	assign := regexp.MustCompile(`^\s*"?` + regexp.QuoteMeta(key) + `"?\s*=`)
	table := regexp.MustCompile(`^\s*\[\[?\s*"?` + regexp.QuoteMeta(key) + `"?\s*\]`)
	for i, l := range lines {
		if assign.MatchString(l) || table.MatchString(l) {
			return i + 1
		}
	}
	return 0
}

// unjoin returns the errors an errors.Join made, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// remoteSource checks a path that names a registry reference or a URL and
// fills p's Source, Insecure and SkipSignature.
func remoteSource(fp filePlugin, p *Plugin, bad func(key, format string, args ...any)) []error {
	ref, err := registry.ParseRef(fp.Path)
	if err != nil {
		bad("path", "%v", err)
		return nil
	}
	p.Source = ref.Raw
	p.Insecure = fp.Insecure
	p.SkipSignature = fp.SkipSig
	switch ref.Scheme {
	case registry.SchemeOCI:
		if fp.Insecure && !ref.Loopback() {
			bad("insecure", "plain HTTP is only allowed to a registry on loopback; %q is not", ref.Registry)
		}
	case registry.SchemeHTTPS:
		if p.SHA256 == "" {
			bad("sha256", "missing: a plugin fetched from %q needs its sha256 (what `mcphost plugin inspect FILE` prints)", ref.Raw)
		}
		if fp.Insecure {
			bad("insecure", "only an oci:// registry on loopback can be insecure, not %q", ref.Raw)
		}
	}
	return nil
}
