//go:build mcphost_kernel_io

package sdk

import (
	"encoding/binary"

	"github.com/extism/go-pdk"
)

// Built with -tags mcphost_kernel_io, the SDK moves a call's input and
// output through Extism's kernel, as before ABI draft 7: a plugin that
// loads on a host without input_read and output_write, one call per 8
// bytes (BenchmarkExtismFloor, which calls a plugin through Extism alone,
// builds plugins/everything so).
//
// The Extism kernel functions the SDK calls itself, to move a call's input
// and output in 8-byte words only. go-pdk moves the last len%8 bytes one
// at a time, and each of those is a call into Extism's kernel module, the
// most expensive kind of host call (the host builds a wazero function for
// each one); up to 14 of them per call.

//go:wasmimport extism:host/env input_length
func kernelInputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func kernelInputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env alloc
func kernelAlloc(length uint64) uint64

//go:wasmimport extism:host/env store_u64
func kernelStoreU64(offset, value uint64)

//go:wasmimport extism:host/env output_set
func kernelOutputSet(offset, length uint64)

// readInput returns the call's input. A length that is not a multiple of 8
// ends with a word read at length-8, overlapping the one before.
func readInput() []byte {
	n := kernelInputLength()
	if n < 8 {
		return pdk.Input()
	}
	buf := make([]byte, n)
	for i := uint64(0); i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], kernelInputLoadU64(i))
	}
	if n%8 != 0 {
		binary.LittleEndian.PutUint64(buf[n-8:], kernelInputLoadU64(n-8))
	}
	return buf
}

// writeOutput sets b as the call's output, written the same way.
func writeOutput(b []byte) {
	n := uint64(len(b))
	if n < 8 {
		pdk.Output(b)
		return
	}
	offset := kernelAlloc(n)
	for i := uint64(0); i+8 <= n; i += 8 {
		kernelStoreU64(offset+i, binary.LittleEndian.Uint64(b[i:]))
	}
	if n%8 != 0 {
		kernelStoreU64(offset+n-8, binary.LittleEndian.Uint64(b[n-8:]))
	}
	kernelOutputSet(offset, n)
}
