//go:build !mcphost_kernel_io

package sdk

import (
	"unsafe"

	"github.com/extism/go-pdk"
)

// A call's input and output move in one host call each: input_read copies
// the input into the plugin's own memory, output_write sets the output
// from it (module extism:host/user, ABI.md §7, draft 7). Through Extism's
// kernel they took one call per 8 bytes (input_load_u64; alloc, store_u64
// and output_set), ~35 calls for a 275-byte envelope; -tags
// mcphost_kernel_io still builds that way (kernel_io_wasip1.go), for hosts
// before draft 7.

//go:wasmimport extism:host/env input_length
func kernelInputLength() uint64

//go:wasmimport extism:host/user input_read
func hostInputRead(ptr unsafe.Pointer, offset uint64, length uint32)

//go:wasmimport extism:host/user output_write
func hostOutputWrite(ptr unsafe.Pointer, length uint32)

// readInput returns the call's input.
func readInput() []byte {
	n := kernelInputLength()
	if n == 0 {
		return pdk.Input()
	}
	buf := make([]byte, n)
	hostInputRead(unsafe.Pointer(unsafe.SliceData(buf)), 0, uint32(n))
	return buf
}

// writeOutput sets b as the call's output.
func writeOutput(b []byte) {
	hostOutputWrite(unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)))
}
