package plugin

import (
	"context"
	"sync/atomic"
	"time"
)

// sleeper is an instance's WASI sleep (poll_oneoff on a clock, which Go's
// time.Sleep and most languages' sleeps become). wazero's default returns
// at once, and a guest that sleeps then spins on the clock instead,
// burning a core until its deadline; this one waits on the host's clock,
// but only during a call, and never past the call's end: its deadline or
// cancellation (a cancelled task) wakes it. Outside a call (a start
// function) it still returns at once.
type sleeper struct {
	// done holds the running call's ctx.Done(), a nil channel between
	// calls. A channel is pointer-shaped: storing it allocates nothing, on
	// a path every call takes.
	done atomic.Value
}

// noCall is what done holds between calls.
var noCall = (<-chan struct{})(nil)

// sleep is the wazero sys.Nanosleep of the instance.
func (s *sleeper) sleep(ns int64) {
	done, _ := s.done.Load().(<-chan struct{})
	if done == nil || ns <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// begin lets the instance sleep while ctx lasts; end ends that, when the
// call returns.
func (s *sleeper) begin(ctx context.Context) { s.done.Store(ctx.Done()) }

// end: see begin.
func (s *sleeper) end() { s.done.Store(noCall) }
