package plugin

import (
	"context"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/host/internal/hostfn"
)

// Through Extism's kernel a plugin reads its input 8 bytes per host call
// (input_load_u64) and writes its output with alloc, one store_u64 per 8
// bytes and output_set: ~35 host calls for a 275-byte envelope, ~13,000
// for a 100 KB resource. input_read and output_write (ABI.md §7) move
// each in one call, between the call's input and output, which the host
// holds, and the plugin's own linear memory.
//
// A host function is an extism.HostFunction, which is not given the
// calling module; the instance running the call is in the call's context
// (running), with its main module captured at the start of its first
// export call (directcall.go) and the call's input and output in its
// callIO (set by callExport for the call's length).

// Names of the two functions, in module hostfn.Namespace.
const (
	inputReadName   = "input_read"
	outputWriteName = "output_write"
)

// callIO is the input and output of the call an instance runs, for
// input_read and output_write. It lives for one call: callExport sets it
// and clears it when the call returns.
type callIO struct {
	active    bool   // a call runs through callExport
	input     []byte // the call's input (the caller's; never written)
	maxOutput int    // the plugin's output cap (max_output_kb)
	written   bool   // output_write set the output last
	output    []byte // what output_write copied out, when written

	// What boundResults found when the export returned (directcall.go).
	errSet    bool                 // the plugin set an error text, within the cap
	tooLarge  *outputTooLargeError // the error text or output it set is over the cap
	resultErr error                // the kernel could not be asked
}

// outputTooLargeError is what output_write panics with when asked to set
// an output over the cap: the call ends, as a call whose output is over
// the cap does, with KindOutputTooLarge (Plugin.call).
// So is an output or error text the plugin set through the kernel over
// the cap (boundResults): what names it is what ("" for "output").
type outputTooLargeError struct {
	what        string
	size, limit int
}

func (e *outputTooLargeError) Error() string {
	what := e.what
	if what == "" {
		what = "output"
	}
	return fmt.Sprintf("%s of %d bytes exceeds the cap of %d bytes (max_output_kb)", what, e.size, e.limit)
}

// callMemory returns the instance ctx runs and its main module's memory,
// or panics with an error naming fn: the functions work only inside an
// export call the host made through callExport, once the module is
// captured.
func callMemory(ctx context.Context, fn string) (*instance, api.Memory) {
	inst := running(ctx)
	if inst == nil || !inst.io.active {
		panic(fmt.Errorf("%s: called outside an export call of the host (at instantiation or from a start function)", fn))
	}
	if inst.direct.main == nil {
		panic(fmt.Errorf("%s: the plugin's memory is not reachable in this call (the export is not one the host listens to)", fn))
	}
	mem := inst.direct.main.Memory()
	if mem == nil {
		panic(fmt.Errorf("%s: the plugin has no linear memory", fn))
	}
	return inst, mem
}

// bulkIOFunctions are input_read and output_write, provided to every
// plugin. Both trap (panic) on a range outside the input or the plugin's
// memory, copying nothing: a plugin never gets a partial copy.
func bulkIOFunctions() []extism.HostFunction {
	inputRead := extism.NewHostFunctionWithStack(inputReadName, func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
		hostfn.CheckDeadline(ctx, inputReadName)
		inst, mem := callMemory(ctx, inputReadName)
		ptr, offset, length := uint64(api.DecodeU32(stack[0])), stack[1], uint64(api.DecodeU32(stack[2]))
		input := inst.io.input
		if offset > uint64(len(input)) || length > uint64(len(input))-offset {
			panic(fmt.Errorf("%s: input bytes [%d, %d+%d) are out of range: the input is %d bytes",
				inputReadName, offset, offset, length, len(input)))
		}
		if size := uint64(mem.Size()); ptr+length > size {
			panic(fmt.Errorf("%s: destination [%d, %d+%d) is outside the plugin's memory of %d bytes",
				inputReadName, ptr, ptr, length, size))
		}
		dst, ok := mem.Read(uint32(ptr), uint32(length))
		if !ok {
			panic(fmt.Errorf("%s: could not write [%d, %d+%d) of the plugin's memory", inputReadName, ptr, ptr, length))
		}
		copyChunked(ctx, inputReadName, dst, input[offset:offset+length])
	}, []api.ValueType{i32, i64, i32}, nil)

	outputWrite := extism.NewHostFunctionWithStack(outputWriteName, func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
		hostfn.CheckDeadline(ctx, outputWriteName)
		inst, mem := callMemory(ctx, outputWriteName)
		ptr, length := uint64(api.DecodeU32(stack[0])), uint64(api.DecodeU32(stack[1]))
		if size := uint64(mem.Size()); ptr+length > size {
			panic(fmt.Errorf("%s: source [%d, %d+%d) is outside the plugin's memory of %d bytes",
				outputWriteName, ptr, ptr, length, size))
		}
		if length > uint64(inst.io.maxOutput) {
			panic(&outputTooLargeError{size: int(length), limit: inst.io.maxOutput})
		}
		b, ok := mem.Read(uint32(ptr), uint32(length))
		if !ok {
			panic(fmt.Errorf("%s: could not read [%d, %d+%d) of the plugin's memory", outputWriteName, ptr, ptr, length))
		}
		// A copy: the plugin may overwrite its memory before the call ends.
		// Only the last output_write of a call counts, so its buffer is
		// reused (a plugin writing 64 MiB 1,000 times allocates it once).
		// Not across calls: beginIO starts each call with none.
		out := inst.io.output[:0]
		if cap(out) < len(b) {
			out = make([]byte, 0, len(b))
		}
		inst.io.written = false // until the copy is whole
		inst.io.output = out[:len(b)]
		copyChunked(ctx, outputWriteName, inst.io.output, b)
		inst.io.written = true
	}, []api.ValueType{i32, i32}, nil)

	fns := []extism.HostFunction{inputRead, outputWrite}
	for i := range fns {
		fns[i].SetNamespace(hostfn.Namespace)
	}
	return fns
}

// copyChunk is how many bytes copyChunked copies between two checks of
// the deadline: ~1 ms of copying.
const copyChunk = 4 << 20

// copyChunked copies src into dst (of the same length) a chunk at a time,
// checking the call's deadline before each: a copy of up to 4 GiB ends
// within one chunk of the deadline.
func copyChunked(ctx context.Context, fn string, dst, src []byte) {
	for len(src) > 0 {
		hostfn.CheckDeadline(ctx, fn)
		n := copy(dst, src[:min(len(src), copyChunk)])
		dst, src = dst[n:], src[n:]
	}
}

// beginIO readies inst's callIO for a call with input; the returned
// function clears it.
func (inst *instance) beginIO(input []byte) func() {
	inst.io = callIO{active: true, input: input, maxOutput: inst.maxOutput}
	return func() { inst.io = callIO{} }
}

// writtenOutput returns the output of a call that ended with err and
// Extism's output out: out when output_write did not set the output last;
// else what it set, or none when the call failed (callers drop the output
// of a failed call; both call paths return the same).
func (inst *instance) writtenOutput(out []byte, err error) []byte {
	switch {
	case !inst.io.written:
		return out
	case err != nil:
		return []byte{}
	default:
		return inst.io.output
	}
}
