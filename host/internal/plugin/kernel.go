package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	_ "unsafe" // for go:linkname

	_ "github.com/extism/go-sdk" // defines extismKernel

	"github.com/mcphost/mcphost/host/internal/interrupt"
)

// extismKernel is Extism's kernel module (extism-runtime.wasm), which the
// go-sdk embeds and compiles into every plugin's runtime. Each instance
// of a plugin gets an instance of it, which holds the plugin's input,
// output and error and allocates in its own memory.
//
// A plugin can write anywhere in that memory with the documented kernel
// functions (store_u64), and so corrupt the kernel's list of blocks until
// its next alloc or length loops forever, inside the kernel, where the
// plugin's own interrupt checks do not reach. Extism offers no way to
// supply another kernel, so the host replaces this variable, once, with
// the kernel rewritten by interrupt.InstrumentKernel (see RATIONALE.md,
// "The Extism kernel is instrumented too"). go-sdk reads it only when it
// compiles a plugin (NewCompiledPlugin), which instrumentKernel precedes.
//
//go:linkname extismKernel github.com/extism/go-sdk.extismRuntimeWasm
var extismKernel []byte

var (
	kernelOnce sync.Once
	kernelErr  error
)

// instrumentKernel replaces Extism's kernel with its instrumented copy, the
// first time it is called; every later call returns the first one's
// result. A plugin must not be compiled when it fails.
func instrumentKernel() error {
	kernelOnce.Do(func() {
		out, err := interrupt.InstrumentKernel(extismKernel)
		if err != nil {
			kernelErr = fmt.Errorf("instrument Extism's kernel: %w", err)
			return
		}
		// The kernel's checks call the host's kernelYield, which sees the
		// call's deadline, instead of WASI's sched_yield, which does not.
		instrumented := out
		out, err = renameImports(instrumented, map[importName]importName{
			{"wasi_snapshot_preview1", "sched_yield"}: {kernelImportModule, kernelYieldName},
		})
		if err == nil && bytes.Equal(out, instrumented) {
			err = errors.New("it does not import sched_yield")
		}
		if err != nil {
			kernelErr = fmt.Errorf("redirect Extism's kernel's yield: %w", err)
			return
		}
		extismKernel = out
	})
	return kernelErr
}
