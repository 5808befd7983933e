// Package plugin runs one Wasm plugin: it compiles the module with Extism on
// wazero, checks the ABI version it declares, keeps a pool of warm instances,
// and calls exports under a deadline, a memory cap and an output cap.
//
// A call that traps, times out or is cancelled discards the instance it ran
// on; the next call gets a fresh one. Nothing a plugin does in a call can
// reach the host process beyond the error it causes for that call.
package plugin

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/clip"
	"github.com/mcphost/mcphost/host/internal/interrupt"
	"github.com/mcphost/mcphost/host/internal/telemetry"
)

// Options describe how to run one plugin.
type Options struct {
	// Name identifies the plugin in errors and logs.
	Name string
	// Wasm is the module's bytes.
	Wasm []byte
	// Timeout is the deadline of every call.
	Timeout time.Duration
	// MemoryMB caps each instance's Wasm memory.
	MemoryMB int
	// StackKB caps each instance's call stack (stack.go); 0 is
	// config.DefaultStackKB.
	StackKB int
	// MaxInstances caps concurrent instances; 0 means one per CPU (at
	// least 2), or one for a hyper-mcp plugin, which may keep state
	// between calls as hyper-mcp lets it.
	MaxInstances int
	// MaxOutputBytes caps the output of any one call.
	MaxOutputBytes int
	// Config is readable by the plugin through Extism's config_get.
	Config map[string]string
	// CacheDir is the directory of wazero's on-disk compilation cache; ""
	// compiles in memory only. Plugins of the same module share one cache
	// over it (Code), and compile over it one at a time: wazero races when
	// two runtimes compile the same module over one cache at once.
	CacheDir string
	// Budget, when set, counts the plugin's instances against the host's
	// memory budget (budget.go); nil counts nothing.
	Budget *Budget
	// Code shares compiled code with the other plugins of the host that
	// hold the same module (shared.go); nil compiles this plugin's own.
	Code *CodeCache
	// Logger receives the plugin's log calls and its WASI stdout/stderr.
	Logger hclog.Logger
	// HostFunctions are the functions the plugin may import besides Extism's
	// kernel and WASI.
	HostFunctions []extism.HostFunction
	// Env are the environment variables the plugin sees (none by default).
	Env map[string]string
	// ReadOnlyDirs maps host directories to the guest paths where the
	// plugin sees them, read-only. Each is opened with os.OpenRoot, so
	// "..", absolute paths and symlinks cannot reach outside it.
	ReadOnlyDirs map[string]string
	// WritableDirs maps host directories to the guest paths where the
	// plugin may read and write them. Each is opened with os.OpenRoot and
	// mounted as a rootFS, confined the same way; the plugin cannot create
	// symlinks or hard links in it.
	WritableDirs map[string]string
	// MaxCallsPerSecond caps the rate of calls; 0 is no cap.
	MaxCallsPerSecond float64
	// BreakerFailures failed calls in a row stop calls for BreakerCooldown;
	// 0 turns the breaker off.
	BreakerFailures int
	BreakerCooldown time.Duration

	// IdleTimeout is how long the plugin may go without a call before its
	// instances are released, and its compiled module too unless Code
	// keeps it (kept.go); 0 keeps them. A
	// hyper-mcp plugin keeps state in its instance, and is never released.
	IdleTimeout time.Duration
	// MinInstances, when above 0, keeps the compiled module and that many
	// idle instances through an idle timeout, for latency-critical plugins.
	// They are made at load (and at any activation after a release).
	MinInstances int
	// OnRelease, when set, is called after the plugin's instances have
	// been released, after its compiled module is freed (at the release,
	// or later when the kept module is dropped), and again once its source
	// module has been deflated: each time the Go heap holds garbage worth
	// handing back to the OS. It must not block.
	OnRelease func()

	// CompileTimeout bounds compiling the module (at load and at every
	// activation that does not find it compiled); 0 is
	// DefaultCompileTimeout.
	CompileTimeout time.Duration

	// WazeroChecks lets a module that the interrupt rewrite cannot handle
	// run under wazero's own checks, which see only loop heads: a call
	// tree without loops then outruns its deadline (config:
	// interrupt_checks = "wazero"). Without it such a module is refused.
	WazeroChecks bool

	// instrument rewrites the module for interrupt checks; nil is
	// interrupt.Instrument. Tests replace it to take the fallback path.
	instrument func([]byte, interrupt.Limits) ([]byte, error)
}

// Plugin is a loaded, ready plugin. Its methods are safe for concurrent use.
type Plugin struct {
	name           string
	timeout        time.Duration
	compileTimeout time.Duration
	maxOutputBytes int
	abiVersion     int
	flavor         Flavor
	exports        map[string]bool
	logger         hclog.Logger
	env            map[string]string
	mounts         []mount       // granted host directories, by guest path
	limiter        *rate.Limiter // nil: no cap
	breaker        *breaker
	outputLines    *outputBudget // WASI output lines for the log
	logLines       *outputBudget // Extism log calls for the log

	// Activation (lazy.go): the compiled module and its instances exist
	// only while the plugin is in use.
	maxInstances int
	idleTimeout  time.Duration
	minInstances int
	source       compileSource
	codes        *CodeCache
	budget       *Budget // nil: none
	memoryBytes  int64   // what an instance counts against budget (InstanceBytes)
	evictions    atomic.Int64
	evictable    atomic.Bool     // idle instances may be evicted: an mcphost plugin, loaded
	lifetime     context.Context // ends when the plugin closes
	stop         func()          // ends lifetime and the plugin's reservation in budget
	activity     sync.WaitGroup  // activations and deactivations under way

	actMu sync.Mutex
	act   *activation // nil while inactive
	kept  *keptCode   // the compiled module kept since a release (kept.go)
	// retired are interpreted activations replaced by their compiled one
	// while calls held the plugin: closed once no call does (interpret.go).
	retired []*activation
	// interpretUntilCompiled runs activations interpreted until the module
	// was compiled once (compiledOnce); upgrading: a compile for that is
	// under way (interpret.go).
	interpretUntilCompiled bool
	compiledOnce           atomic.Bool
	upgrading              bool
	activating             *pendingActivation
	calls                  int // calls holding act
	lastUsed               time.Time
	idleTimer              *time.Timer
	// deflateTimer deflates the kept module deflateDelay after a release
	// (scheduleDeflate); nil when none is pending.
	deflateTimer *time.Timer
	deflateDelay time.Duration
	closed       bool
	settled      bool // Idle was called: the idle timeout applies
	onRelease    func()
	activations  atomic.Int64
	releases     atomic.Int64
	instances    atomic.Int64 // instances made
	// beforeActivate, when set (by tests, before any call), runs at the
	// start of each activation after the load's.
	beforeActivate func()
	// described, for a plugin made from a Description (describe.go), is
	// what its first activation checks; nil after it.
	described *described
	// activationWait is the least a call waits for an activation
	// (MinActivationWait; tests lower it).
	activationWait time.Duration
}

// mount is a granted host directory, opened as an os.Root.
type mount struct {
	guest    string
	root     *os.Root
	writable bool
}

// tableElementBytes is what one table element costs the host: tables
// between them may hold as many elements as fit in the memory cap.
const tableElementBytes = 8

// exportNames are the ABI exports a plugin may provide.
var exportNames = []string{
	abi.ExportListTools, abi.ExportCallTool,
	abi.ExportListResources, abi.ExportListResourceTemplates, abi.ExportReadResource,
	abi.ExportListPrompts, abi.ExportGetPrompt, abi.ExportComplete,
}

// Load compiles a plugin, starts one instance to check its ABI version and
// exports, and returns it ready for calls. ctx bounds the whole load.
func Load(ctx context.Context, opts Options) (*Plugin, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if err := checkWasmHeader(opts.Wasm); err != nil {
		return nil, err
	}
	exports, err := exportedFunctions(opts.Wasm)
	if err != nil {
		return nil, fmt.Errorf("read the module's exports: %w", err)
	}
	maxInstances := instanceCap(opts.MaxInstances, detectFlavor(func(name string) bool { return exports[name] }))

	prepared, err := prepare(opts)
	if err != nil {
		return nil, err
	}
	mounts, err := openMounts(opts.ReadOnlyDirs, opts.WritableDirs)
	if err != nil {
		return nil, err
	}
	p := newPlugin(opts, maxInstances, mounts)
	p.useSource(prepared)
	wasm := prepared.wasm
	// The load compiles at once, so that a module wazero refuses is
	// refused here, with the load's context.
	a, err := p.compileActivation(ctx, wasm)
	p.source.wasm = wasm // deflated on its first release
	if err != nil {
		p.stop()
		closeMounts(mounts)
		return nil, err
	}
	p.act = a
	p.activations.Add(1)

	if err := p.inspect(ctx); err != nil {
		_ = p.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	p.evictable.Store(p.flavor == FlavorMCPHost)
	// min_instances are made at load, and at every activation after.
	p.warm(ctx, a)
	return p, nil
}

// instanceCap is the most instances a plugin of flavor may have when its
// config says max_instances = n (0: the default).
func instanceCap(n int, flavor Flavor) int {
	switch {
	case n > 0:
		return n
	case flavor != FlavorMCPHost:
		// hyper-mcp runs one instance of a plugin, which may keep state
		// from call to call (its tool_list_changed example counts the
		// tools it added); so does mcphost unless max_instances says
		// otherwise. A call that traps or times out still replaces it.
		return 1
	default:
		return max(2, runtime.NumCPU())
	}
}

// newPlugin makes the Plugin of opts, inactive, holding mounts; its
// source is the caller's to fill in.
func newPlugin(opts Options, maxInstances int, mounts []mount) *Plugin {
	codes := opts.Code
	if codes == nil {
		codes = NewCodeCache(0)
	}
	lifetime, stop := context.WithCancel(context.Background())
	p := &Plugin{
		env:            opts.Env,
		mounts:         mounts,
		breaker:        &breaker{threshold: opts.BreakerFailures, cooldown: opts.BreakerCooldown},
		outputLines:    newOutputBudget(),
		logLines:       newOutputBudget(),
		name:           opts.Name,
		timeout:        opts.Timeout,
		compileTimeout: cmp.Or(opts.CompileTimeout, DefaultCompileTimeout*compileTimeoutScale),
		activationWait: MinActivationWait,
		deflateDelay:   deflateDelay,
		maxOutputBytes: opts.MaxOutputBytes,
		logger:         opts.Logger,
		exports:        map[string]bool{},
		maxInstances:   maxInstances,
		idleTimeout:    opts.IdleTimeout,
		minInstances:   opts.MinInstances,
		onRelease:      opts.OnRelease,
		source: compileSource{
			config: opts.Config,
			key:    codeKey{cacheDir: opts.CacheDir}, // the rest set by useSource
		},
		codes:       codes,
		budget:      opts.Budget,
		memoryBytes: InstanceBytes(opts.MemoryMB),
		lifetime:    lifetime,
		stop:        stop,
	}
	if p.budget != nil {
		// One instance is the plugin's, whatever the others hold, from
		// its load until it is closed (or its load fails).
		r := p.budget.Reserve(p.name, p.memoryBytes)
		p.stop = func() { stop(); r.Release() }
	}
	if opts.MaxCallsPerSecond > 0 {
		p.limiter = rate.NewLimiter(rate.Limit(opts.MaxCallsPerSecond), max(1, int(opts.MaxCallsPerSecond)))
	}
	return p
}

// useSource makes prepared what p compiles from (but for its bytes, which
// the caller sets): at load, or at the first activation of a plugin made
// from a description. The code key names the rewritten module, so that
// plugins of the same module share its compiled code (shared.go).
func (p *Plugin) useSource(prepared *preparedModule) {
	p.source.runtime, p.source.interpreter, p.source.hostFuncs = prepared.runtime, prepared.interpreter, prepared.hostFuncs
	p.source.key.digest, p.source.key.interrupts = sha256.Sum256(prepared.wasm), prepared.interrupts
}

// preparedModule is a module made ready to compile: rewritten for
// interrupt checks, its imports redirected, with the host functions and
// runtime settings it is compiled with.
type preparedModule struct {
	wasm       []byte
	hostFuncs  []extism.HostFunction
	interrupts interrupts
	runtime    wazero.RuntimeConfig
	// interpreter is runtime's settings for wazero's interpreter, which
	// runs a module never compiled while the compiler works (interpret.go).
	interpreter wazero.RuntimeConfig
}

// prepare rewrites opts.Wasm for compiling (the load's work before the
// compile, done again for a plugin loaded from its description at its
// first activation).
func prepare(opts Options) (*preparedModule, error) {
	// A module is instrumented to check its deadline itself (package
	// interrupt), which costs a fraction of wazero's own checks and, unlike
	// them, also stops a call tree without loops. A module the rewrite
	// cannot handle completely is refused, unless the config opts into
	// wazero's checks for it. The two kinds compile into separate cache
	// directories: wazero's cache key ignores WithCloseOnContextDone, and
	// code compiled without checks must never be taken for code compiled
	// with them. Extism's kernel, which every instance runs beside the
	// plugin, is instrumented too (kernel.go).
	if err := instrumentKernel(); err != nil {
		return nil, err
	}
	// Nothing of the module reaches wazero before it is checked against
	// the module limits: wazero trusts what it decodes (2^32-1 locals in
	// a 1 KB file are an out-of-memory crash), and some shapes take it
	// minutes to compile. The check reads the module without allocating in
	// proportion to what it declares.
	if _, err := interrupt.CheckLimits(opts.Wasm, interrupt.DefaultModuleLimits); err != nil {
		return nil, fmt.Errorf("module refused before compiling: %w", err)
	}
	// A JavaScript plugin's source is handed to the engine by a host
	// function; the rewrite (or the stripping below) drops its section, so
	// that the plugins of one engine share its compiled code.
	jsSource, err := jsSourceOf(opts.Wasm)
	if err != nil {
		return nil, err
	}
	if opts.instrument == nil {
		opts.instrument = interrupt.Instrument
	}
	limits := interrupt.Limits{TableElements: uint32(min(opts.MemoryMB<<20/tableElementBytes, 1<<27))}
	limits.StackBytes, limits.StackReport = stackLimits(stackKB(opts))
	var wasm []byte // the module to compile, rewritten below
	hostFuncs, interrupts := opts.HostFunctions, interruptsInstrumented
	if instrumented, err := opts.instrument(opts.Wasm, limits); err == nil {
		wasm = instrumented
		hint := ""
		if jsSource != nil {
			hint = jsStackHint
		}
		hostFuncs = append(slices.Clip(hostFuncs), interruptCheck(), stackFunction(limits.StackBytes, hint))
	} else if errors.Is(err, interrupt.ErrUnsupported) && opts.WazeroChecks {
		stripped, serr := interrupt.StripCustomSections(opts.Wasm)
		if serr != nil {
			return nil, fmt.Errorf("read the module's sections: %w", serr)
		}
		wasm = stripped
		opts.Logger.Warn("cannot instrument the module's interrupt checks; running it under wazero's, which see loop heads only (interrupt_checks = \"wazero\")", "error", err)
		interrupts = interruptsWazero
	} else if errors.Is(err, interrupt.ErrUnsupported) {
		return nil, fmt.Errorf("cannot add deadline checks to the module (%w); interrupt_checks = \"wazero\" runs it under wazero's weaker checks, which cannot stop a call tree without loops (SECURITY.md)", err)
	} else {
		return nil, fmt.Errorf("refused by the interrupt rewrite: %w", err)
	}
	// (Only an instrumented module is given the interrupt check: the
	// rewrite refuses a module that imports it itself, and without the
	// rewrite such an import finds nothing to link to.)

	// Extism's built-in http_request is redirected to the host's own,
	// which applies the egress policy (imports.go). After the rewrite,
	// which refuses a module importing from "mcphost:" itself.
	wasm, err = renameImports(wasm, redirectedImports)
	if err != nil {
		return nil, fmt.Errorf("read the module's imports: %w", err)
	}
	if !slices.ContainsFunc(hostFuncs, isExtismHTTP) {
		hostFuncs = append(slices.Clip(hostFuncs), refuseExtismHTTP())
	}
	hostFuncs = append(slices.Clip(hostFuncs), kernelImports()...)
	hostFuncs = append(hostFuncs, kernelYield())
	hostFuncs = append(hostFuncs, envFunctions()...)
	hostFuncs = append(hostFuncs, bulkIOFunctions()...)
	if jsSource != nil {
		hostFuncs = append(hostFuncs, jsSourceFunctions(jsSource)...)
	}

	// On Linux each memory is an mmap reservation of its cap (memory.go,
	// passed to every instantiation). Where that is not available,
	// WithMemoryCapacityFromMax reserves a Go slice at the cap up front
	// (untouched pages cost no RSS) instead of growing it by copying: a
	// runaway allocation reaches the cap ~10x sooner and the host's RSS
	// stays near the cap instead of 2-3x it (measured; see RATIONALE.md).
	// The features are pinned to those whose encoding the interrupt rewrite
	// reads exactly as wazero does.
	settings := func(rc wazero.RuntimeConfig) wazero.RuntimeConfig {
		return rc.WithCoreFeatures(api.CoreFeaturesV2).
			WithCloseOnContextDone(interrupts == interruptsWazero).
			WithMemoryLimitPages(uint32(opts.MemoryMB) * 16). // 64 KiB pages
			WithMemoryCapacityFromMax(true)
	}
	return &preparedModule{wasm: wasm, hostFuncs: hostFuncs, interrupts: interrupts,
		runtime: settings(wazero.NewRuntimeConfig()), interpreter: settings(wazero.NewRuntimeConfigInterpreter())}, nil
}

// compile is extism.NewCompiledPlugin, bounded in time and interruptible,
// with a panic turned into an error: wazero's validator has panicked on
// malformed modules (an undefined function type in 1.12, which the rewrite
// now refuses first), and a plugin file must never take the host down.
//
// wazero checks its context between two functions only when it compiles
// with more than one worker, so compile asks for compileWorkers: then a
// compile ends soon after ctx does (shutdown, a reload's or a load's own
// deadline) or after CompileTimeout, instead of running to its end. No
// one function can hold it long: CheckLimits bounds what makes a function
// slow to compile (nesting, branches and locals) before any of it reaches
// wazero.
func compile(ctx context.Context, timeout time.Duration, m extism.Manifest, cfg extism.PluginConfig, funcs []extism.HostFunction) (compiled *extism.CompiledPlugin, err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("compile not done within %s: the module is refused", timeout))
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			compiled, err = nil, fmt.Errorf("the runtime failed on this module: %v", r)
		}
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
	}()
	ctx = experimental.WithCompilationWorkers(ctx, compileWorkers)
	return extism.NewCompiledPlugin(withCaptureListeners(ctx), m, cfg, funcs)
}

// DefaultCompileTimeout bounds the compilation of one module when
// Options.CompileTimeout is 0 (five times as long in a build with the race
// detector, race.go). A module within the limits of CheckLimits
// compiles in seconds (the largest example plugin, 4 MB of Go, in 1-5 s
// on 2 busy cores); one that takes longer is refused rather than left to
// hold a core.
const DefaultCompileTimeout = 60 * time.Second

// compileWorkers is how many goroutines compile one module: at least two,
// since wazero checks for cancellation only when it uses more than one.
var compileWorkers = max(2, min(4, runtime.NumCPU()))

// openMounts opens every granted directory as an os.Root, sorted by guest
// path so that every instance mounts them in the same order.
func openMounts(readOnly, writable map[string]string) ([]mount, error) {
	var mounts []mount
	for _, grant := range []struct {
		dirs     map[string]string
		writable bool
	}{{readOnly, false}, {writable, true}} {
		for hostDir, guest := range grant.dirs {
			r, err := os.OpenRoot(hostDir)
			if err != nil {
				closeMounts(mounts)
				return nil, fmt.Errorf("allowed_paths: %w", err)
			}
			mounts = append(mounts, mount{guest: guest, root: r, writable: grant.writable})
		}
	}
	slices.SortFunc(mounts, func(a, b mount) int { return strings.Compare(a.guest, b.guest) })
	return mounts, nil
}

// closeMounts closes the roots of mounts.
func closeMounts(mounts []mount) {
	for _, m := range mounts {
		m.root.Close()
	}
}

// openCache opens the compilation cache in the subdirectory sub of dir, or
// an in-memory cache when dir is "".
func openCache(dir, sub string) (wazero.CompilationCache, error) {
	if dir == "" {
		return wazero.NewCompilationCache(), nil
	}
	return wazero.NewCompilationCacheWithDir(filepath.Join(dir, sub))
}

// checkWasmHeader refuses what is clearly not a Wasm module, with a message
// a person can act on, before wazero reports a lower-level error.
func checkWasmHeader(b []byte) error {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return errors.New("not a WebAssembly module (missing the \\0asm header)")
	}
	return nil
}

// newInstance starts one instance with no access to the outside beyond its
// grants: only the granted directories and environment variables, WASI
// stdout/stderr to the log, sleeps bounded by the running call (sleep.go).
// Instantiating runs the module's start function, if it has one, under the
// plugin's timeout like any call.
func (p *Plugin) newInstance(ctx context.Context, compiled *extism.CompiledPlugin) (_ *instance, err error) {
	out := &logWriter{logger: p.logger, stream: "stdout", limit: p.outputLines}
	errw := &logWriter{logger: p.logger, stream: "stderr", limit: p.outputLines}
	sleep := &sleeper{}
	mc := wazero.NewModuleConfig().
		WithStdout(out).
		WithStderr(errw).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(sleep.sleep).
		WithRandSource(rand.Reader)
	for k, v := range p.env {
		mc = mc.WithEnv(k, v)
	}
	if len(p.mounts) > 0 {
		fsc := wazero.NewFSConfig()
		for _, m := range p.mounts {
			if !m.writable {
				fsc = fsc.WithFSMount(m.root.FS(), m.guest)
				continue
			}
			sfc, ok := fsc.(sysfs.FSConfig)
			if !ok {
				return nil, fmt.Errorf("mount %s: this wazero cannot mount a writable directory", m.guest)
			}
			fsc = sfc.WithSysFSMount(&rootFS{root: m.root}, m.guest)
		}
		mc = mc.WithFSConfig(fsc)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	// Extism's wrapper of a host function panics when the context has no
	// plugin, which is so while a start function runs; the interrupt check
	// does not use it, and a typed nil satisfies the wrapper.
	ctx = context.WithValue(ctx, extism.PluginCtxKey("plugin"), (*extism.Plugin)(nil))
	// The instance's memories are allocated by mem, through the context
	// Extism passes to wazero's InstantiateModule; they are freed with the
	// instance (instance.close), or here if it cannot be made.
	mem := newMemories()
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(*errCommit)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("instantiate: %w", ce)
		}
		if err != nil {
			_ = mem.release()
		}
	}()
	inst, err := compiled.Instance(mem.context(ctx), extism.PluginInstanceConfig{ModuleConfig: mc})
	out.flush() // what a start function wrote
	errw.flush()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("instantiate: start function interrupted (timeout %s): %w", p.timeout, ctx.Err())
		}
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	if err := mem.fallback(); err != nil {
		p.logger.Warn("an instance's memory is on the Go heap: it cannot be reserved outside it", "error", err)
	}
	inst.SetLogger(p.logPlugin)
	p.instances.Add(1)
	return &instance{Plugin: inst, mem: mem, output: []*logWriter{out, errw}, kernel: &kernelFuncs{}, direct: &directCall{}, sleep: sleep, maxOutput: p.maxOutputBytes, logLine: p.logPrefix}, nil
}

// inspect reads the ABI version and the exports from one instance.
func (p *Plugin) inspect(ctx context.Context) error {
	pool := p.act.pool
	inst, err := pool.get(ctx)
	if err != nil {
		return err
	}
	healthy := false
	defer func() { pool.put(inst, healthy) }()
	flavor, exports, version, err := p.probe(ctx, inst)
	if err != nil {
		return err
	}
	p.flavor, p.exports, p.abiVersion = flavor, exports, version
	healthy = true
	return nil
}

// probe reads from inst the plugin's flavor, the ABI exports it provides
// and the ABI version it declares, refusing a plugin that contributes
// nothing or declares another version.
func (p *Plugin) probe(ctx context.Context, inst *instance) (Flavor, map[string]bool, int, error) {
	flavor := detectFlavor(inst.FunctionExists)
	exports := map[string]bool{}
	for _, name := range exportNames {
		if inst.FunctionExists(name) {
			exports[name] = true
		}
	}
	if flavor == FlavorHyperMCPv1 {
		exports[abi.ExportListTools] = true
		exports[abi.ExportCallTool] = true
	}
	if !exports[abi.ExportListTools] && !exports[abi.ExportListResources] &&
		!exports[abi.ExportListResourceTemplates] && !exports[abi.ExportListPrompts] {
		return "", nil, 0, fmt.Errorf("exports none of %s, %s, %s, %s: it contributes nothing",
			abi.ExportListTools, abi.ExportListResources, abi.ExportListResourceTemplates, abi.ExportListPrompts)
	}
	if flavor != FlavorMCPHost {
		return flavor, exports, abi.Version, nil
	}
	callCtx, cancel := context.WithTimeout(ctx, p.timeout)
	version, _, err := inst.callExport(callCtx, abi.VersionExport, nil)
	cancel()
	inst.flushOutput()
	if err != nil {
		return "", nil, 0, fmt.Errorf("%s: %w", abi.VersionExport, err)
	}
	if int(version) != abi.Version {
		return "", nil, 0, fmt.Errorf("declares ABI version %d; this host supports version %d", version, abi.Version)
	}
	return flavor, exports, int(version), nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return p.name }

// ABIVersion returns the ABI version the plugin declared.
func (p *Plugin) ABIVersion() int { return p.abiVersion }

// Flavor returns the plugin ABI the module was written for.
func (p *Plugin) Flavor() Flavor { return p.flavor }

// Has reports whether the plugin provides the named export.
func (p *Plugin) Has(export string) bool { return p.exports[export] }

// Call runs export with input on a pooled instance under the plugin's
// deadline. It returns the plugin's output, or an error: *abi.Error when the
// plugin reported a protocol error itself, *CallError when the call failed.
func (p *Plugin) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	if !p.exports[export] {
		return nil, &CallError{Plugin: p.name, Export: export, Kind: KindMissingExport,
			Err: fmt.Errorf("plugin does not export %q", export)}
	}
	now := time.Now()
	if err := p.breaker.allow(now); err != nil {
		return nil, &CallError{Plugin: p.name, Export: export, Kind: KindBreakerOpen, Err: err}
	}
	if p.limiter != nil && !p.limiter.AllowN(now, 1) {
		return nil, &CallError{Plugin: p.name, Export: export, Kind: KindRateLimited,
			Err: fmt.Errorf("more than %g calls per second (max_calls_per_second)", float64(p.limiter.Limit()))}
	}
	out, err := p.call(ctx, export, input)
	var ce *CallError
	failed := errors.As(err, &ce) && countsForBreaker(ce.Kind)
	if p.breaker.record(time.Now(), failed, err) {
		p.logger.Error("plugin keeps failing; refusing calls for a while", "failures", p.breaker.threshold, "cooldown", p.breaker.cooldown, "last_error", err)
	}
	return out, err
}

// call runs one call on a pooled instance. The plugin's timeout bounds
// the call itself; waiting for an instance (or creating one) is bounded by
// the caller's context, so a slow instantiation under load does not eat a
// short deadline.
func (p *Plugin) call(ctx context.Context, export string, input []byte) ([]byte, error) {
	fn, input, err := p.adapt(export, input)
	if err != nil {
		return nil, &CallError{Plugin: p.name, Export: export, Kind: KindPluginError, Err: err}
	}
	a, err := p.acquire(ctx)
	if errors.Is(err, errActivationTimeout) {
		p.logger.Warn("plugin call failed", "export", export, "kind", KindTimeout, "error", err)
		return nil, &CallError{Plugin: p.name, Export: export, Kind: KindTimeout,
			Err: fmt.Errorf("waiting for the plugin to activate: not active in time (%s)", max(p.timeout, p.activationWait))}
	}
	if err != nil {
		return nil, p.failure(ctx, export, err)
	}
	defer p.release()
	pool := a.pool
	inst, err := pool.get(ctx)
	if err != nil {
		return nil, p.failure(ctx, export, fmt.Errorf("waiting for a free instance: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, p.callTimeout(ctx))
	defer cancel()
	ctx, span := telemetry.Start(ctx, p.name+" "+export, trace.WithAttributes(telemetry.Plugin.String(p.name), telemetry.Export.String(export)))
	rc, out, err := inst.callExport(ctx, fn, input)
	if err != nil {
		span.SetStatus(codes.Error, clip.Text(err.Error(), maxErrorTextBytes))
	}
	span.End()
	inst.flushOutput()
	var tooLarge *outputTooLargeError
	if errors.As(err, &tooLarge) {
		// output_write was asked for an output over the cap: the call
		// ended there, as one with such an output ends here.
		pool.put(inst, false)
		return nil, &CallError{Plugin: p.name, Export: export, Kind: KindOutputTooLarge, Err: tooLarge}
	}
	if err != nil {
		// A plugin-reported error leaves the instance usable; anything else
		// (trap, exit, interrupt) leaves it in an unknown state.
		// The error text the plugin set (callExport makes it a
		// *reportedError, within the cap) leaves the instance usable.
		msg := err.Error()
		_, reported := err.(*reportedError)
		reported = reported && ctx.Err() == nil
		if reported && len(msg) > p.maxOutputBytes {
			// The error text the plugin set (Extism's error_set) is output
			// it chose, capped like any: one of megabytes would otherwise
			// reach the client whole. Only that text: a trap's may be longer
			// than a small cap too (30 frames of function names the module
			// chose), and stays a trap.
			pool.put(inst, false)
			return nil, &CallError{Plugin: p.name, Export: export, Kind: KindOutputTooLarge,
				Err: fmt.Errorf("error text of %d bytes exceeds the cap of %d bytes (max_output_kb)", len(msg), p.maxOutputBytes)}
		}
		pool.put(inst, reported)
		if reported {
			return nil, p.reportedError(export, msg)
		}
		return nil, p.failure(ctx, export, err)
	}
	if len(out) > p.maxOutputBytes {
		// A huge output leaves a large memory behind that slows the next
		// call on this instance; replace it.
		pool.put(inst, false)
		return nil, &CallError{Plugin: p.name, Export: export, Kind: KindOutputTooLarge,
			Err: fmt.Errorf("output of %d bytes exceeds the cap of %d bytes (max_output_kb)", len(out), p.maxOutputBytes)}
	}
	// wazero interrupts a call when its context ends; one that ended just
	// as the call returned may have left the instance closed.
	pool.put(inst, ctx.Err() == nil)
	if rc != 0 {
		return nil, &CallError{Plugin: p.name, Export: export, Kind: KindPluginError,
			Err: fmt.Errorf("returned code %d without an error message", rc)}
	}
	return out, nil
}

// callTimeoutKey keys the timeout WithCallTimeout sets.
type callTimeoutKey struct{}

// WithCallTimeout gives the calls made under ctx the timeout d instead of
// their plugin's own: a task's run has its task_timeout.
func WithCallTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, callTimeoutKey{}, d)
}

// callTimeout is the deadline of a call made under ctx.
func (p *Plugin) callTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(callTimeoutKey{}).(time.Duration); ok && d > 0 {
		return d
	}
	return p.timeout
}

// reportedError turns the text a plugin set as its error into *abi.Error
// when it is the ABI's JSON error, or a CallError carrying the text. What
// reaches the client is kept short (maxErrorTextBytes): a message is
// truncated, data too long to keep is dropped.
func (p *Plugin) reportedError(export, text string) error {
	var e abi.Error
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if dec.Decode(&e) == nil && e.Code != 0 && e.Message != "" {
		if len(e.Data) > maxErrorTextBytes {
			note := fmt.Sprintf(" (error data of %d bytes dropped)", len(e.Data))
			e.Message = clip.Text(e.Message, maxErrorTextBytes-len(note)) + note
			e.Data = nil
		} else {
			e.Message = clip.Text(e.Message, maxErrorTextBytes)
		}
		return &e
	}
	return &CallError{Plugin: p.name, Export: export, Kind: KindPluginError, Err: errors.New(clip.Text(text, maxErrorTextBytes))}
}

// failure classifies an error of a call that did not complete.
func (p *Plugin) failure(ctx context.Context, export string, err error) error {
	kind := KindTrap
	switch {
	case errors.Is(err, ErrMemoryBudget) && !errors.Is(ctx.Err(), context.Canceled):
		kind = KindMemoryBudget
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		kind = KindTimeout
		err = fmt.Errorf("interrupted after the %s timeout", p.callTimeout(ctx))
	case errors.Is(ctx.Err(), context.Canceled):
		kind = KindCanceled
		err = errors.New("cancelled")
	case errors.Is(err, errPoolClosed):
		kind = KindClosed
	case errors.Is(err, ErrStaleDescription):
		kind = KindStale
	}
	ce := &CallError{Plugin: p.name, Export: export, Kind: kind, Err: err}
	args := []any{"export", export, "kind", kind, "error", clip.Text(err.Error(), maxErrorTextBytes)}
	if id := telemetry.TraceID(ctx); id != "" {
		args = append(args, "trace_id", id)
	}
	p.logger.Warn("plugin call failed", args...)
	return ce
}

// Kind classifies a failed call.
type Kind string

// Kinds of CallError.
const (
	KindTimeout        Kind = "timeout"
	KindCanceled       Kind = "canceled"
	KindTrap           Kind = "trap"
	KindPluginError    Kind = "plugin error"
	KindOutputTooLarge Kind = "output too large"
	KindMissingExport  Kind = "missing export"
	KindClosed         Kind = "closed"
	KindRateLimited    Kind = "rate limited"
	KindBreakerOpen    Kind = "breaker open"
	KindMemoryBudget   Kind = "memory budget"
	// KindStale: the plugin's module no longer matches the cached
	// description it was served from (describe.go); it is being reloaded.
	KindStale Kind = "stale description"
)

// CallError is a call into a plugin that did not produce an output.
type CallError struct {
	Plugin string
	Export string
	Kind   Kind
	Err    error
}

// Error implements error. Only the first line of the cause is kept: wazero
// appends a Wasm stack trace that belongs in the log, not in a client error.
// It is cut at maxErrorTextBytes: a trap's text holds names the module
// chose.
func (e *CallError) Error() string {
	msg := e.Err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Sprintf("plugin %q: %s: %s", e.Plugin, e.Export, clip.Text(msg, maxErrorTextBytes))
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Err }

// Bounds on what a plugin's WASI output may put in the host log: lines per
// second (shared by all instances of a plugin, bursts of twice that), and
// the length of one line.
const (
	outputLinesPerSecond = 50
	maxOutputLineBytes   = 2048
)

// logWriter sends a plugin's WASI output to the host log, a line at a
// time, within the plugin's budget of lines; what is over it is dropped,
// and the drop is logged once a second. A guest writes a line in as many
// fd_write calls as it likes (Go's runtime writes a panic a few bytes at a
// time), so a partial line waits for the rest until its newline, the end
// of the call (flush) or maxOutputLineBytes, whichever comes first; what a
// too-long line has beyond that is dropped.
type logWriter struct {
	logger hclog.Logger
	stream string
	limit  *outputBudget

	mu      sync.Mutex
	partial []byte // the line being written, without its newline
	cut     bool   // partial was logged at maxOutputLineBytes: drop the rest of the line
}

// outputBudget is a plugin's budget of output lines for the log.
type outputBudget struct {
	lines   *rate.Limiter
	dropLog *rate.Limiter
	dropped atomic.Int64
}

func newOutputBudget() *outputBudget {
	return &outputBudget{lines: rate.NewLimiter(outputLinesPerSecond, 2*outputLinesPerSecond), dropLog: rate.NewLimiter(1, 1)}
}

// take takes one line from the budget. When it is spent it says so in the
// log, at most once a second (what names the lines), and returns false.
func (b *outputBudget) take(logger hclog.Logger, what string) bool {
	if b.lines.Allow() {
		return true
	}
	n := b.dropped.Add(1)
	if b.dropLog.Allow() {
		logger.Warn("plugin writes too much output; dropping lines", "stream", what, "dropped_so_far", n)
	}
	return false
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if !w.cut {
			room := maxOutputLineBytes + 1 - len(w.partial)
			w.partial = append(w.partial, chunk[:min(len(chunk), room)]...)
			if len(w.partial) > maxOutputLineBytes {
				w.emit()
				w.cut = true
			}
		}
		if i < 0 {
			break
		}
		if !w.cut {
			w.emit()
		}
		w.cut = false
		b = b[i+1:]
	}
	return n, nil
}

// flush logs the partial line a call left, if any. The pool calls it when
// a call (or an instance's start) ends.
func (w *logWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.emit()
	}
	w.cut = false
}

// emit logs the partial line, within the budget, and empties it.
func (w *logWriter) emit() {
	if w.limit.take(w.logger, w.stream) {
		w.logger.Info("plugin output", "stream", w.stream, "line", clip.Text(string(w.partial), maxOutputLineBytes))
	}
	w.partial = w.partial[:0]
}

// logPlugin is an instance's Extism logger (log_info and the like): within
// the plugin's budget of log lines, as long as its WASI output's and apart
// from it, each message is one line of the host log, cut at
// maxOutputLineBytes. The message is a field of that line, not its text,
// so a message cannot pass for a line of the host's own. A level the host
// log does not record costs no budget.
func (p *Plugin) logPlugin(level extism.LogLevel, msg string) {
	l := extismLevel(level)
	if l < p.logger.GetLevel() || !p.logLines.take(p.logger, "log") {
		return
	}
	p.logger.Log(l, "plugin log", "line", clip.Text(msg, maxOutputLineBytes))
}

// logPrefix is logPlugin for a message of total bytes of which only
// prefix, its first maxOutputLineBytes or more, was read (envfuncs.go's
// log functions): the level and the budget are checked before the line
// is made, so a message the log drops costs no allocation.
func (p *Plugin) logPrefix(level extism.LogLevel, prefix []byte, total int) {
	l := extismLevel(level)
	if l < p.logger.GetLevel() || !p.logLines.take(p.logger, "log") {
		return
	}
	p.logger.Log(l, "plugin log", "line", clip.Prefix(prefix, total, maxOutputLineBytes))
}

var _ io.Writer = (*logWriter)(nil)

func extismLevel(l extism.LogLevel) hclog.Level {
	switch l {
	case extism.LogLevelTrace:
		return hclog.Trace
	case extism.LogLevelDebug:
		return hclog.Debug
	case extism.LogLevelInfo:
		return hclog.Info
	case extism.LogLevelWarn:
		return hclog.Warn
	default:
		return hclog.Error
	}
}
