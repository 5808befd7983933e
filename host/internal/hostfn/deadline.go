package hostfn

import (
	"context"
	"fmt"

	extism "github.com/extism/go-sdk"
)

// The interrupt rewrite counts a call of a host function as one tick of
// the guest's budget, whatever the function does: a plugin calling one
// that takes 5 ms in a loop would run 1,024 of them (5 s) between two of
// its interrupt checks. So every host function of the host checks the
// call's deadline itself before it does anything (CheckDeadline), and
// what it reads from or writes to the plugin's memory is bounded: a call
// ends within one host function's bounded work of its deadline.

// CheckDeadline ends the call (a panic, which wazero turns into the
// call's error, as the interrupt check does) when the call's context has
// ended: its deadline passed or it was cancelled. fn names the host
// function in the error.
func CheckDeadline(ctx context.Context, fn string) {
	if err := ctx.Err(); err != nil {
		panic(fmt.Errorf("call interrupted in %s: %w", fn, err))
	}
}

// readBlock returns a copy of the Extism memory block at offset, which
// must be at most limit bytes long; its length is read first, so a longer
// block is refused without reading it. The kernel is called with the
// call's context (its deadline applies there too).
func readBlock(ctx context.Context, p *extism.CurrentPlugin, offset uint64, limit uint64) ([]byte, error) {
	n, err := p.LengthWithContext(ctx, offset)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("payload of %d bytes exceeds %d", n, limit)
	}
	b, ok := p.Memory().Read(uint32(offset), uint32(n))
	if !ok {
		return nil, fmt.Errorf("block [%d, %d+%d) is outside Extism's memory", offset, offset, n)
	}
	return append([]byte(nil), b...), nil
}

// writeBlock copies b into a new Extism memory block and returns its
// offset, calling the kernel with the call's context.
func writeBlock(ctx context.Context, p *extism.CurrentPlugin, b []byte) (uint64, error) {
	offset, err := p.AllocWithContext(ctx, uint64(len(b)))
	if err != nil {
		return 0, err
	}
	if !p.Memory().Write(uint32(offset), b) {
		return 0, fmt.Errorf("block [%d, %d+%d) is outside Extism's memory", offset, offset, len(b))
	}
	return offset, nil
}
