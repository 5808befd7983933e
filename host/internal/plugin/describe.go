package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/go-hclog"
)

// A plugin can be made from its Description, kept from an earlier load
// (the host's description cache), without reading, rewriting, compiling or
// instantiating its module: FromDescription. Its first activation does that
// work, and before any call is served on it checks that the module is still
// the one described: the bytes fetched are the host's to verify (digest),
// and the first instance must show the same flavor, exports and ABI
// version, and answer every list call of the description with the very
// bytes recorded. Anything else fails the activation with
// ErrStaleDescription and calls the plugin's OnStale.

// ErrStaleDescription is the error of an activation whose module no longer
// matches the description the plugin was made from.
var ErrStaleDescription = errors.New("the plugin no longer matches its cached description")

// StaleDescription is an ErrStaleDescription that says which description
// the plugin does not match.
type StaleDescription struct {
	// Text is the error's text, e.g. "the plugin does not match the
	// description its module ships".
	Text string
}

func (e StaleDescription) Error() string { return e.Text }

// Is makes a StaleDescription an ErrStaleDescription.
func (e StaleDescription) Is(target error) bool { return target == ErrStaleDescription }

// ErrListsDiffer is the ErrStaleDescription of a module that is the one
// described but lists otherwise: its lists depend on something the
// description's key does not cover (files, the clock).
var ErrListsDiffer = errors.New("it lists otherwise with the same module")

// Description is what loading a plugin learned about it, enough to list
// what it offers and to route calls to it without an instance.
type Description struct {
	// ABIVersion is the ABI version the plugin declared.
	ABIVersion int `json:"abi_version"`
	// Flavor is the ABI the module was written for.
	Flavor Flavor `json:"flavor"`
	// Exports are the ABI exports it provides, sorted.
	Exports []string `json:"exports"`
	// Lists are the list calls made at the load and what they returned,
	// in order.
	Lists []ListCall `json:"lists"`
}

// ListCall is one call of a list export and its output.
type ListCall struct {
	Export string `json:"export"`
	Input  []byte `json:"input,omitempty"`
	Output []byte `json:"output"`
}

// Describe returns the plugin's Description, with no list calls: the
// host records those as it makes them.
func (p *Plugin) Describe() Description {
	return Description{ABIVersion: p.abiVersion, Flavor: p.flavor, Exports: slices.Sorted(maps.Keys(p.exports))}
}

// described is what a plugin made from a Description needs at its first
// activation.
type described struct {
	desc  Description
	opts  Options // for prepare; Wasm is fetched
	fetch func(context.Context) ([]byte, error)
	hooks DescribedHooks
}

// DescribedHooks tell the maker of a plugin made from a description how its
// first activation went. Neither may block: they run in the activation.
type DescribedHooks struct {
	// OnStale is called when the first activation finds the module changed
	// (the error wraps ErrStaleDescription).
	OnStale func(error)
	// OnVerified is called when the first activation found the module and
	// its lists to be the ones described.
	OnVerified func()
	// Stale is the error a call gets when the module does not match (nil:
	// ErrStaleDescription).
	Stale error
	// InterpretFirst runs the first activation in wazero's interpreter
	// while the module compiles (interpret.go): for a module most likely
	// never compiled here.
	InterpretFirst bool
}

// FromDescription makes the plugin of opts (whose Wasm is ignored) from d
// without touching its module. fetch, called at the first activation,
// returns the module's bytes; it must fail, wrapping ErrStaleDescription,
// when they are not the bytes d was made from. hooks hear how the first
// activation went. Only a plugin of FlavorMCPHost may be made so.
func FromDescription(opts Options, d Description, fetch func(context.Context) ([]byte, error), hooks DescribedHooks) (*Plugin, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if d.Flavor != FlavorMCPHost {
		return nil, fmt.Errorf("a %s plugin is not made from a description", d.Flavor)
	}
	mounts, err := openMounts(opts.ReadOnlyDirs, opts.WritableDirs)
	if err != nil {
		return nil, err
	}
	p := newPlugin(opts, instanceCap(opts.MaxInstances, d.Flavor), mounts)
	p.flavor, p.abiVersion = d.Flavor, d.ABIVersion
	for _, e := range d.Exports {
		if !slices.Contains(exportNames, e) {
			p.stop()
			closeMounts(mounts)
			return nil, fmt.Errorf("description lists an unknown export %q", e)
		}
		p.exports[e] = true
	}
	opts.Wasm = nil
	p.described = &described{desc: d, opts: opts, fetch: fetch, hooks: hooks}
	p.interpretUntilCompiled = hooks.InterpretFirst
	// Lists come from the description: the idle timeout applies from the
	// first activation on.
	p.settled = true
	p.evictable.Store(true) // an mcphost plugin, as checked above
	return p, nil
}

// describedSource fetches and prepares the module of a plugin made from a
// description, for its first activation; it becomes the plugin's source.
func (p *Plugin) describedSource(ctx context.Context) ([]byte, error) {
	d := p.described
	wasm, err := d.fetch(ctx)
	if err == nil && checkWasmHeader(wasm) != nil {
		err = fmt.Errorf("%w: %w", p.staleError(), checkWasmHeader(wasm))
	}
	if err != nil {
		if errors.Is(err, ErrStaleDescription) && d.hooks.OnStale != nil {
			d.hooks.OnStale(err)
		}
		return nil, err
	}
	opts := d.opts
	opts.Wasm = wasm
	prepared, err := prepare(opts)
	if err != nil {
		return nil, err
	}
	p.source.mu.Lock()
	p.source.wasm, p.source.deflated = prepared.wasm, false
	p.useSource(prepared)
	p.source.mu.Unlock()
	return prepared.wasm, nil
}

// Matches reports whether d describes what live, a description of the
// same module taken from a live load, does: the same flavor, ABI version
// and exports, and the same output for every list call, in order. The
// error says what differs.
func (d Description) Matches(live Description) error {
	if d.Flavor != live.Flavor {
		return fmt.Errorf("it describes a %s plugin, the module is a %s one", d.Flavor, live.Flavor)
	}
	if d.ABIVersion != live.ABIVersion {
		return fmt.Errorf("it describes ABI version %d, the module declares %d", d.ABIVersion, live.ABIVersion)
	}
	if !slices.Equal(d.Exports, live.Exports) {
		return fmt.Errorf("it describes the exports %v, the module has %v", d.Exports, live.Exports)
	}
	if len(d.Lists) != len(live.Lists) {
		return fmt.Errorf("it records %d list calls, listing the module took %d", len(d.Lists), len(live.Lists))
	}
	for i, c := range d.Lists {
		if c.Export != live.Lists[i].Export || !bytes.Equal(c.Output, live.Lists[i].Output) {
			return fmt.Errorf("%s answers otherwise than described (list call %d)", live.Lists[i].Export, i+1)
		}
	}
	return nil
}

// staleError is the error that says the module does not match the
// plugin's description.
func (p *Plugin) staleError() error {
	if s := p.described.hooks.Stale; s != nil {
		return s
	}
	return ErrStaleDescription
}

// checkDescribed checks a's first instance against the description the
// plugin was made from: the same flavor, exports and ABI version, and the
// same output for every list call recorded.
func (p *Plugin) checkDescribed(ctx context.Context, a *activation) error {
	d := p.described.desc
	inst, err := a.pool.get(ctx)
	if err != nil {
		return err
	}
	healthy := false
	defer func() { a.pool.put(inst, healthy) }()
	flavor, exports, version, err := p.probe(ctx, inst)
	if err != nil {
		return err
	}
	if flavor != d.Flavor || version != d.ABIVersion || !slices.Equal(slices.Sorted(maps.Keys(exports)), d.Exports) {
		return fmt.Errorf("%w: its flavor, ABI version or exports changed", p.staleError())
	}
	for _, c := range d.Lists {
		callCtx, cancel := context.WithTimeout(ctx, p.timeout)
		_, out, err := inst.callExport(callCtx, c.Export, c.Input)
		cancel()
		inst.flushOutput()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Export, err)
		}
		if !bytes.Equal(out, c.Output) {
			return fmt.Errorf("%w: %s now answers differently (%w)", p.staleError(), c.Export, ErrListsDiffer)
		}
	}
	healthy = true
	return nil
}

// firstActivation does, for a plugin made from a description, what its
// first activation adds: it checks a and, when a does not match, closes it
// and calls onStale. Once a matches, later activations are ordinary. The
// caller is activate, which runs one at a time.
func (p *Plugin) firstActivation(ctx context.Context, a *activation) error {
	hooks := p.described.hooks
	err := p.checkDescribed(ctx, a)
	if err == nil {
		if hooks.OnVerified != nil {
			hooks.OnVerified()
		}
		return nil
	}
	_ = a.close(context.WithoutCancel(ctx))
	if errors.Is(err, ErrStaleDescription) && hooks.OnStale != nil {
		hooks.OnStale(err)
	}
	return err
}
