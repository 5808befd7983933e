package plugin

import (
	"context"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/interrupt"
)

// ErrStackLimit is what a call that went past its plugin's stack_kb fails
// with (wrapped, naming the limit).
var ErrStackLimit = errors.New("call stack exceeds the plugin's limit")

// stackDiscardBytes is the call stack (as the interrupt rewrite estimates
// it) past which an instance is discarded after its call rather than kept
// idle: wazero keeps a call's stack at its largest for the life of the
// instance, so idle instances would otherwise keep what their deepest
// call took. The plugins of this repository stay well below it (their
// deepest calls estimate at up to ~1.1 MiB; see RATIONALE.md, "Call stacks").
const stackDiscardBytes = 2 << 20

// stackLimits returns the interrupt rewrite's stack accounting for a
// plugin whose instances may use stackKB KiB of call stack.
func stackLimits(stackKB int) (limit, report uint32) {
	limit = uint32(min(stackKB, interrupt.MaxStackBytes>>10)) << 10
	return limit, min(limit, stackDiscardBytes)
}

// jsStackHint ends the stack error of a JavaScript plugin: the engine's
// interpreter recurses in C once per JavaScript call, and the rewrite
// estimates that frame at ~112 KiB (its real frame is ~6 KiB; RATIONALE.md,
// "Call stacks" and "JavaScript plugins"), so the limit, not QuickJS's own
// RangeError, is what a deep JavaScript recursion meets first.
const jsStackHint = "; in JavaScript each nested function call counts ~112 KiB of it (about 73 calls deep at the default 8192): raise stack_kb for deeper recursion"

// stackFunction is the host function an instrumented module calls when
// its estimated call stack passes the mark the module holds: the call
// stops with ErrStackLimit past limit bytes (its message ending with
// hint), and otherwise the instance is marked to be discarded after the
// call and the next mark returned.
func stackFunction(limit uint32, hint string) extism.HostFunction {
	f := extism.NewHostFunctionWithStack(interrupt.StackImportName,
		func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
			used := api.DecodeU32(stack[0])
			if inst := running(ctx); inst != nil {
				inst.deepStack = true
			}
			if used > limit {
				panic(fmt.Errorf("%w: call stack exceeds %d KiB (stack_kb)%s", ErrStackLimit, limit>>10, hint))
			}
			// Called again only when the stack grows by another eighth of
			// the limit, and always before it passes the limit.
			stack[0] = api.EncodeU32(min(limit, used+limit/8))
		}, []extism.ValueType{extism.ValueTypeI32}, []extism.ValueType{extism.ValueTypeI32})
	f.SetNamespace(interrupt.ImportModule)
	return f
}

// stackKB is the plugin's stack_kb, or its default.
func stackKB(opts Options) int {
	if opts.StackKB > 0 {
		return opts.StackKB
	}
	return config.DefaultStackKB
}
