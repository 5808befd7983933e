package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/mcphost/mcphost/abi"
)

// Extism's Plugin.CallWithContext builds a new function (a call engine with
// its own zeroed stack, 12-15 KB) for the export and for each of the six
// kernel calls around it, on every call: most of what a call of a small
// plugin costs the host (docs/extism-kernel-functions.md). The function
// that would let the host keep them, the instance's main module, is private
// to Extism; wazero hands it over to a function listener, though, and a
// listener can be put on a few functions only.
//
// So the exports mcphost calls get a listener (captureFactory, given to
// wazero with the compile): while an instance's first call runs through
// CallWithContext as before (which also runs the guest runtime's
// initialisation, once), the listener takes the instance's main module and
// kernel into its directCall. From then on the instance's calls run
// through callDirect, which does what CallWithContext does, step by step
// (v1.7.1), with the export's function and the kernel's kept per instance.
// The other functions of the module are compiled without listener code.

// directCall is what one instance needs to be called without
// CallWithContext, captured during its first call. It belongs to one
// instance and dies with it: an instance is discarded after any call that
// did not end cleanly, so nothing here is used after a failed call.
type directCall struct {
	// calling is the export the instance's call through CallWithContext
	// runs now ("" when none): the listener captures only from it.
	calling string
	main    api.Module // the instance's main module; nil until captured
	kernel  api.Module // the instance's Extism kernel
	exports map[string]api.Function
	// running: a call is in callDirect. An instance runs one call at a
	// time and no host function calls back into it; were one to, it would
	// go through CallWithContext, as before, rather than reuse a function
	// that is running.
	running bool
	stack   [2]uint64 // for the kernel calls
}

// ready reports whether the instance can be called directly.
func (d *directCall) ready() bool { return d.main != nil && !d.running }

// captureListener takes the calling module (the instance's main module)
// and the kernel Extism put in the call's context, when an export of an
// instance still being called through CallWithContext starts.
type captureListener struct{}

// Before implements experimental.FunctionListener.
func (captureListener) Before(ctx context.Context, mod api.Module, def api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	inst := running(ctx)
	if inst == nil {
		return
	}
	d := inst.direct
	if d.main != nil || d.calling == "" || !slices.Contains(def.ExportNames(), d.calling) {
		return
	}
	kernel, ok := ctx.Value(extism.PluginCtxKey("extism")).(api.Module)
	if !ok || kernel == nil || mod == nil {
		return // not as Extism v1.7.1 calls: the instance stays on CallWithContext
	}
	d.main, d.kernel = mod, kernel
}

// After implements experimental.FunctionListener: when the export an
// instance's call through CallWithContext runs returns, the error text and
// output it set are bounded before Extism reads them (boundResults).
func (captureListener) After(ctx context.Context, _ api.Module, def api.FunctionDefinition, _ []uint64) {
	boundExtismResults(ctx, def)
}

// Abort implements experimental.FunctionListener: an export that ended
// with WASI's exit code 0 succeeded, for Extism, which then reads its
// error text and output: they are bounded first, as in After.
func (captureListener) Abort(ctx context.Context, _ api.Module, def api.FunctionDefinition, err error) {
	if exit, ok := err.(*sys.ExitError); ok && exit.ExitCode() == 0 {
		boundExtismResults(ctx, def)
	}
}

// boundExtismResults runs boundResults for the instance ctx runs when def
// is the export its call through CallWithContext runs (not in callDirect,
// which calls boundResults itself).
func boundExtismResults(ctx context.Context, def api.FunctionDefinition) {
	inst := running(ctx)
	if inst == nil || inst.direct.calling == "" || !slices.Contains(def.ExportNames(), inst.direct.calling) {
		return
	}
	inst.boundResults(ctx)
}

// boundResults bounds what the plugin's export, which has just returned,
// left in the kernel for the host to read: an error text or an output
// (output_set) over the cap is recorded (io.tooLarge) and cleared from
// the kernel unread, so that neither Extism nor callDirect copies it out
// of the plugin's memory (a plugin could set one of gigabytes); an output
// that output_write replaced is cleared too (it is not used). Whether an
// error text is set is recorded (io.errSet): only then is the call's
// error the plugin's report rather than a failure. Sticky within a call:
// an export calling another listened export is checked at each return.
func (inst *instance) boundResults(ctx context.Context) {
	defer func() {
		if r := recover(); r != nil {
			err, ok := r.(error)
			if !ok {
				err = fmt.Errorf("%v", r)
			}
			inst.io.resultErr = fmt.Errorf("read the call's error text and output: %w", err)
		}
	}()
	k := kernelOf(ctx, "the call's results")
	limit := uint64(inst.io.maxOutput)
	inst.io.errSet = false
	if offset := k.call(kernelErrorGet); offset != 0 {
		n := k.length(offset)
		if n > limit {
			if inst.io.tooLarge == nil {
				inst.io.tooLarge = &outputTooLargeError{what: "error text", size: int(n), limit: inst.io.maxOutput}
			}
			k.call(kernelErrorSet, 0)
		} else {
			inst.io.errSet = n > 0
		}
	}
	if n := k.call(kernelOutputLength); inst.io.written || n > limit {
		if !inst.io.written && inst.io.tooLarge == nil {
			inst.io.tooLarge = &outputTooLargeError{size: int(n), limit: inst.io.maxOutput}
		}
		k.call(kernelOutputSet, k.call(kernelOutputOffset), 0)
		if k.call(kernelOutputLength) != 0 {
			panic(errors.New("the kernel kept an output the host cleared"))
		}
	}
}

// reportedError is the error text a plugin set (Extism's error_set) for a
// call that returned: its report, not a failure of the call.
type reportedError struct{ text string }

func (e *reportedError) Error() string { return e.text }

// results turns what a call returned into what callExport returns, once
// boundResults has run: an error text or output over the cap, or the
// kernel failing to say, fail the call; the error text the plugin set is
// a *reportedError, alone (joined with a failure to read the output, it
// is not).
func (inst *instance) results(rc uint32, out []byte, err error) (uint32, []byte, error) {
	switch {
	case inst.io.resultErr != nil:
		return 1, []byte{}, inst.io.resultErr
	case inst.io.tooLarge != nil:
		return 1, []byte{}, inst.io.tooLarge
	}
	if _, joined := err.(interface{ Unwrap() []error }); err != nil && !joined && inst.io.errSet {
		if _, ok := err.(*reportedError); !ok {
			err = &reportedError{text: err.Error()}
		}
	}
	return rc, out, err
}

// listenedExports are the exports that get a listener: every name
// Plugin.call may call (after compat.go's adapt), and the version export
// probe calls (so that input_read and output_write reach the plugin's
// memory in every call the host makes).
var listenedExports = append(slices.Clip(exportNames), v1Describe, v1Call, abi.VersionExport)

// captureFactory puts a captureListener on the functions exported under a
// name of listenedExports, and none on any other function (wazero then
// compiles no listener code into it).
type captureFactory struct{}

// NewFunctionListener implements experimental.FunctionListenerFactory.
func (captureFactory) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	for _, name := range def.ExportNames() {
		if slices.Contains(listenedExports, name) {
			return captureListener{}
		}
	}
	return nil
}

// withCaptureListeners returns ctx for compiling a plugin: wazero reads the
// listener factory from the context of CompileModule.
func withCaptureListeners(ctx context.Context) context.Context {
	return experimental.WithFunctionListenerFactory(ctx, captureFactory{})
}

// The kernel functions a call uses, as indexes of kernelImportList.
var (
	kernelReset        = kernelIndex("reset")
	kernelAlloc        = kernelIndex("alloc")
	kernelInputSet     = kernelIndex("input_set")
	kernelErrorGet     = kernelIndex("error_get")
	kernelLength       = kernelIndex("length")
	kernelOutputOffset = kernelIndex("output_offset")
	kernelOutputLength = kernelIndex("output_length")
	kernelOutputSet    = kernelIndex("output_set")
	kernelFree         = kernelIndex("free")
	kernelErrorSet     = kernelIndex("error_set")
)

func kernelIndex(name string) int {
	for i, k := range kernelImportList {
		if k.name == name {
			return i
		}
	}
	panic("no kernel function " + name)
}

// kernelCall calls kernel function i of the instance with d.stack.
func (inst *instance) kernelCall(ctx context.Context, i int) error {
	f := inst.kernel.function(inst.direct.kernel, i)
	if f == nil {
		return fmt.Errorf("%s: not in Extism's kernel", kernelImportList[i].name)
	}
	return f.CallWithStack(ctx, inst.direct.stack[:])
}

// callExport runs export on the instance with input: through callDirect
// once the instance's functions are captured, through Extism's
// CallWithContext until then. Every call the host makes of a plugin's
// export goes through it: input_read and output_write (bulkio.go) work
// only there. The output is what output_write set, when it set it last.
func (inst *instance) callExport(ctx context.Context, export string, input []byte) (uint32, []byte, error) {
	d := inst.direct
	ctx = withRunning(ctx, inst)
	if inst.io.active {
		// A host function calling back into the instance (none does): the
		// outer call's input and output stay as they are.
		return 1, []byte{}, fmt.Errorf("%s: the instance is already running a call", export)
	}
	defer inst.beginIO(input)()
	if inst.sleep != nil {
		inst.sleep.begin(ctx)
		defer inst.sleep.end()
	}
	if d.ready() {
		return inst.results(inst.callDirect(ctx, export, input))
	}
	calling := d.calling
	d.calling = export
	defer func() { d.calling = calling }()
	rc, out, err := inst.CallWithContext(ctx, export, input)
	return inst.results(rc, inst.writtenOutput(out, err), err)
}

// callDirect is Extism go-sdk v1.7.1's Plugin.CallWithContext with the
// instance's kept functions, in the same order and with the same results
// and errors. Three differences: the input is set under the call's context
// (Extism uses context.Background, so that its three kernel calls escape
// the deadline), Extism's debug line "Calling function" is not logged, and
// an output set last by output_write (bulkio.go) is returned without
// reading Extism's.
// Extism's tracing (traceCtx) is not reproduced: mcphost never sets an
// observe adapter.
func (inst *instance) callDirect(ctx context.Context, name string, data []byte) (uint32, []byte, error) {
	d := inst.direct
	if d.main.IsClosed() {
		return 0, nil, errors.New("module is closed")
	}
	d.running = true
	defer func() { d.running = false }()
	ctx = context.WithValue(ctx, extism.PluginCtxKey("extism"), d.kernel)
	if inst.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, inst.Timeout)
		defer cancel()
	}
	ctx = context.WithValue(ctx, extism.PluginCtxKey("plugin"), inst.Plugin)

	// SetInput: reset, alloc, write, input_set.
	if err := inst.kernelCall(ctx, kernelReset); err != nil {
		return 1, []byte{}, errors.New("reset")
	}
	d.stack[0] = uint64(len(data))
	if err := inst.kernelCall(ctx, kernelAlloc); err != nil {
		return 1, []byte{}, err
	}
	offset := d.stack[0]
	mem := d.kernel.Memory()
	mem.Write(uint32(offset), data)
	d.stack[0], d.stack[1] = offset, uint64(len(data))
	_ = inst.kernelCall(ctx, kernelInputSet) // (Extism ignores its error too)
	ctx = context.WithValue(ctx, extism.InputOffsetKey("inputOffset"), offset)

	f := d.exports[name]
	if f == nil {
		f = d.main.ExportedFunction(name)
		if f == nil {
			return 1, []byte{}, fmt.Errorf("unknown function: %s", name)
		}
		if d.exports == nil {
			d.exports = map[string]api.Function{}
		}
		d.exports[name] = f
	}
	if n := len(f.Definition().ResultTypes()); n > 1 {
		return 1, []byte{}, fmt.Errorf("function %s has %v results, expected 0 or 1", name, n)
	}

	res, err := f.Call(ctx)
	// A WASI exit: code 0 is success; the exit code is the result.
	if exitErr, ok := err.(*sys.ExitError); ok {
		code := exitErr.ExitCode()
		if code == 0 {
			err = nil
		}
		if len(res) == 0 {
			res = []uint64{api.EncodeU32(code)}
		}
	}
	var rc uint32
	switch {
	case len(res) > 0:
		rc = api.DecodeU32(res[0])
	case err != nil:
		rc = 1
	}
	if err != nil {
		return rc, []byte{}, err
	}
	// An error text or output over the cap is cleared unread.
	inst.boundResults(ctx)
	if inst.io.resultErr != nil || inst.io.tooLarge != nil {
		return rc, []byte{}, nil // callExport's results returns the failure
	}

	// GetErrorWithContext: error_get, length; a failure reads as no error.
	var returnErr error
	if inst.kernelCall(ctx, kernelErrorGet) == nil && d.stack[0] != 0 {
		errOffset := d.stack[0]
		if inst.kernelCall(ctx, kernelLength) == nil {
			if msg, _ := mem.Read(uint32(errOffset), uint32(d.stack[0])); len(msg) > 0 {
				returnErr = &reportedError{text: string(msg)}
			}
		}
	}

	if inst.io.written {
		// output_write set the output last: Extism's is not read.
		return rc, inst.writtenOutput(nil, returnErr), returnErr
	}

	// GetOutputWithContext: output_offset, output_length, a copy.
	outputErr := func(err error) (uint32, []byte, error) {
		e := fmt.Errorf("failed to get output: %v", err)
		if returnErr != nil {
			return rc, []byte{}, errors.Join(returnErr, e)
		}
		return rc, []byte{}, e
	}
	if err := inst.kernelCall(ctx, kernelOutputOffset); err != nil {
		return outputErr(err)
	}
	outOffset := d.stack[0]
	if err := inst.kernelCall(ctx, kernelOutputLength); err != nil {
		return outputErr(err)
	}
	out, _ := mem.Read(uint32(outOffset), uint32(d.stack[0]))
	return rc, slices.Clone(out), returnErr
}
