package plugin

import (
	"context"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"
)

// instance is one instance of a plugin: Extism's plugin, and the linear
// memories of its modules (Extism's kernel and the plugin's own).
//
// On Linux each memory is an mmap reservation of its cap outside the Go
// heap (see memory_linux.go), unmapped by close: a discarded instance's
// memory goes back to the system at once, instead of waiting for the
// garbage collector while every trap adds another cap's worth. Elsewhere
// the memories are wazero's own, Go slices, and close only closes.
type instance struct {
	*extism.Plugin
	mem    *memories    // nil: wazero's memories
	output []*logWriter // its WASI stdout and stderr
	kernel *kernelFuncs // its kernel's functions, kept (kernelfuncs.go)
	direct *directCall  // its main module and exports, kept (directcall.go)
	sleep  *sleeper     // its WASI sleep, bounded by the running call (sleep.go)
	io     callIO       // the running call's input and output (bulkio.go)
	// maxOutput is the plugin's output cap, which output_write applies.
	maxOutput int
	// logLine logs a message of the plugin's Extism log functions of
	// which the host read prefix, of total bytes (Plugin.logPrefix).
	logLine func(level extism.LogLevel, prefix []byte, total int)
	// deepStack: a call went deep enough that wazero now keeps a large
	// stack for the instance (stack.go); the pool discards it.
	deepStack bool
}

// flushOutput logs what the instance wrote to stdout and stderr without
// ending the line: a call is over, and the next may be much later.
func (i *instance) flushOutput() {
	for _, w := range i.output {
		w.flush()
	}
}

// close closes the instance and then frees its memories. The instance must
// not be running and must never run again: the pool calls it only on an
// instance it holds, once the call on it has returned.
func (i *instance) close(ctx context.Context) error {
	err := i.Plugin.Close(ctx)
	if ferr := i.mem.release(); ferr != nil {
		err = errors.Join(err, fmt.Errorf("free the instance's memory: %w", ferr))
	}
	return err
}

// errCommit is what a memory allocator panics with when it cannot make a
// new memory's first pages accessible: wazero takes a nil answer there for
// a bug and indexes it. newInstance recovers it as an error.
type errCommit struct{ err error }

func (e *errCommit) Error() string { return e.err.Error() }
