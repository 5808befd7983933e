package plugin

import (
	"context"
	"fmt"

	extism "github.com/extism/go-sdk"

	"github.com/mcphost/mcphost/host/internal/interrupt"
)

// interrupts says how a plugin's calls are stopped when their context ends.
type interrupts string

const (
	// interruptsInstrumented: the module was rewritten by package interrupt
	// and calls interruptCheck every interrupt.Budget loop iterations and
	// function entries.
	interruptsInstrumented interrupts = "interrupt-v1"
	// interruptsWazero: wazero's WithCloseOnContextDone, which checks on
	// every loop iteration.
	interruptsWazero interrupts = "wazero-checks"
)

// interruptCheck is the host function an instrumented module calls when its
// budget is spent: it stops the call if the call's context has ended, and
// otherwise hands out the next budget. Returning to Go here is also what
// lets the Go scheduler preempt a goroutine that runs a long Wasm loop.
func interruptCheck() extism.HostFunction {
	f := extism.NewHostFunctionWithStack(interrupt.ImportName,
		func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
			if err := ctx.Err(); err != nil {
				panic(fmt.Errorf("call interrupted: %w", err))
			}
			stack[0] = interrupt.Budget
		}, nil, []extism.ValueType{extism.ValueTypeI32})
	f.SetNamespace(interrupt.ImportModule)
	return f
}
