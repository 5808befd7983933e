package plugin

import (
	"context"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/host/internal/jsplugin"
)

// A JavaScript plugin is the shared engine module with the plugin's source
// in a custom section (package jsplugin, ABI.md §17). The interrupt rewrite
// drops that section from the module it compiles, so every plugin on the
// same engine has the same code key and shares one compiled module
// (shared.go); the source reaches the engine through these two host
// functions, given only to a module that carries the section.

// Names of the two functions, in module hostfn.Namespace.
const (
	jsSourceLengthName = "js_source_length"
	jsSourceReadName   = "js_source_read"
)

// jsSourceFunctions returns js_source_length () -> i64, the source's length
// in bytes, and js_source_read (dst i32, offset i64, n i32), which copies
// source[offset, offset+n) to dst in the plugin's memory. Like input_read,
// js_source_read traps on a range outside the source or the memory, copying
// nothing, and both check the call's deadline.
func jsSourceFunctions(source []byte) []extism.HostFunction {
	length := extism.NewHostFunctionWithStack(jsSourceLengthName, func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
		hostfn.CheckDeadline(ctx, jsSourceLengthName)
		stack[0] = uint64(len(source))
	}, nil, []api.ValueType{i64})

	read := extism.NewHostFunctionWithStack(jsSourceReadName, func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
		hostfn.CheckDeadline(ctx, jsSourceReadName)
		_, mem := callMemory(ctx, jsSourceReadName)
		ptr, offset, n := uint64(api.DecodeU32(stack[0])), stack[1], uint64(api.DecodeU32(stack[2]))
		if offset > uint64(len(source)) || n > uint64(len(source))-offset {
			panic(fmt.Errorf("%s: source bytes [%d, %d+%d) are out of range: the source is %d bytes",
				jsSourceReadName, offset, offset, n, len(source)))
		}
		if size := uint64(mem.Size()); ptr+n > size {
			panic(fmt.Errorf("%s: destination [%d, %d+%d) is outside the plugin's memory of %d bytes",
				jsSourceReadName, ptr, ptr, n, size))
		}
		dst, ok := mem.Read(uint32(ptr), uint32(n))
		if !ok {
			panic(fmt.Errorf("%s: could not write [%d, %d+%d) of the plugin's memory", jsSourceReadName, ptr, ptr, n))
		}
		copyChunked(ctx, jsSourceReadName, dst, source[offset:offset+n])
	}, []api.ValueType{i32, i64, i32}, nil)

	fns := []extism.HostFunction{length, read}
	for i := range fns {
		fns[i].SetNamespace(hostfn.Namespace)
	}
	return fns
}

// jsSourceOf returns the JavaScript source wasm carries, nil when it is no
// JavaScript plugin; the error refuses the module (two sections, or a
// source over jsplugin.MaxSourceBytes).
func jsSourceOf(wasm []byte) ([]byte, error) {
	source, found, err := jsplugin.Find(wasm)
	if err != nil {
		return nil, fmt.Errorf("JavaScript plugin refused: %w", err)
	}
	if !found {
		return nil, nil
	}
	if len(source) == 0 {
		return nil, fmt.Errorf("JavaScript plugin refused: its %s section is empty", jsplugin.SectionName)
	}
	return source, nil
}
