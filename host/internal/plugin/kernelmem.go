package plugin

import (
	"context"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"
)

// kernelAccess reaches the Extism kernel of the call a host function runs
// in: its functions, called with the call's context (so the kernel's
// deadline checks apply, kernelfuncs.go), and its memory, where Extism
// keeps the blocks a plugin passes to host functions. Every failure
// panics with an error naming fn, which ends the call, as Extism's own
// host functions do.
type kernelAccess struct {
	ctx    context.Context
	fn     string
	kernel api.Module
	inst   *instance // nil outside a call of the host's (a start function)
}

// kernelOf returns the kernel of the call ctx runs, for host function fn.
func kernelOf(ctx context.Context, fn string) kernelAccess {
	kernel, ok := ctx.Value(extism.PluginCtxKey("extism")).(api.Module)
	if !ok || kernel == nil {
		panic(fmt.Errorf("%s: no Extism kernel in the call's context", fn))
	}
	return kernelAccess{ctx: ctx, fn: fn, kernel: kernel, inst: running(ctx)}
}

// call calls kernel function i (an index of kernelImportList) with args
// and returns its result, if it has one.
func (k kernelAccess) call(i int, args ...uint64) uint64 {
	var f api.Function
	if k.inst != nil {
		f = k.inst.kernel.function(k.kernel, i)
	} else {
		f = k.kernel.ExportedFunction(kernelImportList[i].name)
	}
	if f == nil {
		panic(fmt.Errorf("%s: %s is not in Extism's kernel", k.fn, kernelImportList[i].name))
	}
	var stack [2]uint64
	copy(stack[:], args)
	if err := f.CallWithStack(k.ctx, stack[:]); err != nil {
		panic(fmt.Errorf("%s: Extism's %s: %w", k.fn, kernelImportList[i].name, err))
	}
	return stack[0]
}

// length returns the length of the block at offset (0 when there is
// none), without reading it.
func (k kernelAccess) length(offset uint64) uint64 { return k.call(kernelLength, offset) }

// free frees the block at offset.
func (k kernelAccess) free(offset uint64) { k.call(kernelFree, offset) }

// view returns n bytes of the kernel's memory from offset, not copied:
// valid until the kernel's memory is next written or grown.
func (k kernelAccess) view(offset, n uint64) []byte {
	b, ok := k.kernel.Memory().Read(uint32(offset), uint32(n))
	if !ok || offset > 1<<32 || n > 1<<32 {
		panic(fmt.Errorf("%s: block [%d, %d+%d) is outside Extism's memory", k.fn, offset, offset, n))
	}
	return b
}

// write copies b into a new block and returns its offset.
func (k kernelAccess) write(b []byte) uint64 {
	offset := k.call(kernelAlloc, uint64(len(b)))
	if len(b) > 0 && (offset == 0 || !k.kernel.Memory().Write(uint32(offset), b)) {
		panic(fmt.Errorf("%s: could not write %d bytes into Extism's memory", k.fn, len(b)))
	}
	return offset
}
