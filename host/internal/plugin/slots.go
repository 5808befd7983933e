package plugin

import (
	"context"
	"runtime"
	"sync"
)

// BackgroundCompiles is how many modules the host compiles at once in the
// background (the host's preparation of plugins, and the compiles that
// replace interpreted activations): a quarter of the CPUs, at least one,
// so that calls keep the rest. (A compile itself uses compileWorkers
// goroutines.)
var BackgroundCompiles = max(1, runtime.NumCPU()/4)

// compileSlots bounds background compiles, and serves the urgent first: a
// compile for a plugin that calls already use (one running interpreted)
// goes before one that only prepares a plugin no call has asked for.
type compileSlots struct {
	mu     sync.Mutex
	free   int
	urgent []chan struct{}
	later  []chan struct{}
}

func newCompileSlots(n int) *compileSlots { return &compileSlots{free: n} }

// acquire waits for a slot (urgent ones are handed out first) or for ctx;
// the caller releases a slot it got.
func (s *compileSlots) acquire(ctx context.Context, urgent bool) error {
	s.mu.Lock()
	if s.free > 0 && (urgent || len(s.urgent) == 0) {
		s.free--
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if urgent {
		s.urgent = append(s.urgent, ch)
	} else {
		s.later = append(s.later, ch)
	}
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-ch: // handed a slot meanwhile: give it on
			s.releaseLocked()
		default:
			s.urgent = removeWaiter(s.urgent, ch)
			s.later = removeWaiter(s.later, ch)
		}
		return ctx.Err()
	}
}

// release frees a slot, to the first urgent waiter, else the first other.
func (s *compileSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *compileSlots) releaseLocked() {
	for _, q := range []*[]chan struct{}{&s.urgent, &s.later} {
		if len(*q) > 0 {
			ch := (*q)[0]
			*q = (*q)[1:]
			close(ch)
			return
		}
	}
	s.free++
}

func removeWaiter(q []chan struct{}, ch chan struct{}) []chan struct{} {
	for i, c := range q {
		if c == ch {
			return append(q[:i], q[i+1:]...)
		}
	}
	return q
}
