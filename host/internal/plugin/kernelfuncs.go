package plugin

import (
	"context"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/host/internal/hostfn"
)

// Extism go-sdk answers a plugin's import of a kernel function (alloc,
// input_length, output_set, …) with a wrapper that looks the function up
// in the instance's kernel on every call: wazero's ExportedFunction, which
// builds a new function with its own zeroed stack each time, 12-15 KB to
// allocate, clear and collect per kernel call (docs/extism-kernel-
// functions.md). The host redirects those imports (imports.go) to
// kernelImports, which call the same kernel functions, kept per instance in
// a kernelFuncs: each is built once in an instance's life instead of once
// per call. What the host itself asks of the kernel around a call (reset,
// input, output and error) stays in Extism's hands and still builds a
// function each time; that part only the upstream patch removes.

// kernelImportModule is the import module the kernel functions are
// redirected to. Its "mcphost:" prefix is reserved: the interrupt rewrite
// refuses a module that imports from it itself.
const kernelImportModule = "mcphost:kernel"

// kernelImport is a kernel function a plugin may import and its signature,
// as Extism declares it. Extism implements input_load_u64, load_u64 and
// store_u64 in Go, without the kernel: they are not here.
type kernelImport struct {
	name            string
	params, results []api.ValueType
}

var (
	i64 = api.ValueTypeI64
	i32 = api.ValueTypeI32
)

// kernelImportList are the kernel functions redirected, in the order of
// kernelFuncs.fns.
var kernelImportList = [...]kernelImport{
	{"alloc", []api.ValueType{i64}, []api.ValueType{i64}},
	{"free", []api.ValueType{i64}, nil},
	{"load_u8", []api.ValueType{i64}, []api.ValueType{i32}},
	{"input_load_u8", []api.ValueType{i64}, []api.ValueType{i32}},
	{"store_u8", []api.ValueType{i64, i32}, nil},
	{"input_set", []api.ValueType{i64, i64}, nil},
	{"output_set", []api.ValueType{i64, i64}, nil},
	{"input_length", nil, []api.ValueType{i64}},
	{"input_offset", nil, []api.ValueType{i64}},
	{"output_length", nil, []api.ValueType{i64}},
	{"output_offset", nil, []api.ValueType{i64}},
	{"length", []api.ValueType{i64}, []api.ValueType{i64}},
	{"length_unsafe", []api.ValueType{i64}, []api.ValueType{i64}},
	{"reset", nil, nil},
	{"error_set", []api.ValueType{i64}, nil},
	{"error_get", nil, []api.ValueType{i64}},
	{"memory_bytes", nil, []api.ValueType{i64}},
}

// kernelRedirects maps each kernel import of extism:host/env to the same
// name in kernelImportModule.
func kernelRedirects() map[importName]importName {
	m := make(map[importName]importName, len(kernelImportList))
	for _, k := range kernelImportList {
		m[importName{extismEnv, k.name}] = importName{kernelImportModule, k.name}
	}
	return m
}

// kernelFuncs are one instance's kernel functions, built on first use. An
// instance runs one call at a time, and a kernel function never calls out
// of the kernel, so none of them is ever entered while it runs: one
// function each is enough (wazero's api.Function may be called any number
// of times, one call at a time). They die with the instance, which is
// discarded after any call that did not end cleanly (a trap, an exit, a
// timeout), so a function is never reused after a failed call.
type kernelFuncs struct {
	kernel api.Module // the instance's kernel, once seen
	fns    [len(kernelImportList)]api.Function
}

// runningKey is the context key of the instance a call runs on: its
// kernelFuncs (here) and its directCall (directcall.go) are found through
// it, one context value per call.
type runningKey struct{}

// withRunning returns ctx carrying inst, for a call on it.
func withRunning(ctx context.Context, inst *instance) context.Context {
	return context.WithValue(ctx, runningKey{}, inst)
}

// running returns the instance ctx carries, or nil.
func running(ctx context.Context) *instance {
	inst, _ := ctx.Value(runningKey{}).(*instance)
	return inst
}

// function returns kernel function i of kernel, built once.
func (k *kernelFuncs) function(kernel api.Module, i int) api.Function {
	if k.kernel != kernel {
		// Not this instance's kernel (never so: an instance has one kernel
		// for its life): start over rather than call another's functions.
		k.kernel, k.fns = kernel, [len(k.fns)]api.Function{}
	}
	if k.fns[i] == nil {
		k.fns[i] = kernel.ExportedFunction(kernelImportList[i].name)
	}
	return k.fns[i]
}

// kernelImports are the host functions the redirected kernel imports reach.
// Each calls the kernel function of the running instance with the call's
// context (its deadline and the kernel's own interrupt checks apply, as
// through Extism's wrapper); a failure panics, which wazero turns into the
// call's error, as Extism's wrapper does. The instance's kernel is the one
// Extism puts in the context of every call (extism.PluginCtxKey("extism"),
// which Extism's own wrappers read); the functions are kept in the
// instance's kernelFuncs when the context carries the instance
// (Plugin.call), and looked up each time otherwise (calls at load).
func kernelImports() []extism.HostFunction {
	fns := make([]extism.HostFunction, len(kernelImportList))
	for i, k := range kernelImportList {
		fn := extism.NewHostFunctionWithStack(k.name, func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
			hostfn.CheckDeadline(ctx, k.name)
			kernel, ok := ctx.Value(extism.PluginCtxKey("extism")).(api.Module)
			if !ok {
				panic(fmt.Errorf("%s: no Extism kernel in the call's context", k.name))
			}
			var f api.Function
			if inst := running(ctx); inst != nil {
				f = inst.kernel.function(kernel, i)
				if i == kernelOutputSet {
					inst.io.written, inst.io.output = false, nil // output_set sets it last
				}
			} else {
				f = kernel.ExportedFunction(k.name)
			}
			if f == nil {
				panic(fmt.Errorf("%s: not in Extism's kernel", k.name))
			}
			if err := f.CallWithStack(ctx, stack); err != nil {
				panic(err)
			}
		}, k.params, k.results)
		fn.SetNamespace(kernelImportModule)
		fns[i] = fn
	}
	return fns
}

// kernelYieldName is the function of kernelImportModule that the
// instrumented kernel calls every interrupt.Budget loop iterations and
// function entries (kernel.go redirects its import of WASI's sched_yield
// here).
const kernelYieldName = "yield"

// kernelYield is what the instrumented kernel calls when its budget is
// spent. In a call with a deadline (every call the host makes, and every
// kernel call a host function makes) it ends the call once the deadline
// has passed, and returns 1, which tells the kernel to keep its fuel: the
// deadline bounds the kernel, so a legitimate transfer of any size
// through it finishes within the deadline. Without a deadline (Extism's
// own calls into the kernel from Go, with context.Background) it returns
// 0, as WASI's sched_yield does, and the kernel spends a unit of its fuel
// (interrupt.KernelFuel), the backstop that bounds those calls. Either
// way the goroutine returns to Go, where it can be preempted.
//
// Extism calls a host function only with a context that holds its
// plugin: the kernel yielding in a call made with context.Background
// fails that call ("Invalid context"). The host makes every kernel call
// with the call's context; only Extism's own SetInput, in the first call
// of each instance, runs without, on a fresh kernel where reset, alloc
// and input_set stay well under one budget.
func kernelYield() extism.HostFunction {
	fn := extism.NewHostFunctionWithStack(kernelYieldName, func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
		if _, ok := ctx.Deadline(); !ok {
			stack[0] = 0
			return
		}
		hostfn.CheckDeadline(ctx, "Extism's kernel")
		stack[0] = 1
	}, nil, []api.ValueType{i32})
	fn.SetNamespace(kernelImportModule)
	return fn
}
