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
	done atomic.Pointer[<-chan struct{}] // the running call's ctx.Done(), nil between calls
}

// sleep is the wazero sys.Nanosleep of the instance.
func (s *sleeper) sleep(ns int64) {
	done := s.done.Load()
	if done == nil || ns <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-*done:
	}
}

// during lets the instance sleep while ctx lasts; the function it returns
// ends that, when the call returns.
func (s *sleeper) during(ctx context.Context) func() {
	done := ctx.Done()
	s.done.Store(&done)
	return func() { s.done.Store(nil) }
}
