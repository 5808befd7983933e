package plugin

import (
	"context"
	"testing"
	"time"
)

// TestCompileSlotsServeTheUrgentFirst: with the one slot taken, a waiter
// for a plugin in use gets it before one that waited longer to prepare a
// plugin; a waiter that gives up leaves the queue, and a slot handed to it
// meanwhile goes on.
func TestCompileSlotsServeTheUrgentFirst(t *testing.T) {
	s := newCompileSlots(1)
	if err := s.acquire(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 2)
	later := make(chan struct{})
	go func() {
		if err := s.acquire(context.Background(), false); err == nil {
			order <- "later"
			s.release()
		}
		close(later)
	}()
	for !waiting(s, false) {
		time.Sleep(time.Millisecond)
	}
	gaveUp, cancel := context.WithCancel(context.Background())
	cancelled := make(chan error)
	go func() { cancelled <- s.acquire(gaveUp, true) }()
	for !waiting(s, true) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-cancelled; err == nil {
		t.Fatal("a cancelled wait got a slot")
	}
	urgent := make(chan struct{})
	go func() {
		if err := s.acquire(context.Background(), true); err == nil {
			order <- "urgent"
			s.release()
		}
		close(urgent)
	}()
	for !waiting(s, true) {
		time.Sleep(time.Millisecond)
	}
	s.release()
	<-urgent
	<-later
	if first, second := <-order, <-order; first != "urgent" || second != "later" {
		t.Fatalf("served %s then %s, want urgent then later", first, second)
	}
	if s.free != 1 {
		t.Fatalf("%d slots free at the end, want 1", s.free)
	}
}

func waiting(s *compileSlots, urgent bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if urgent {
		return len(s.urgent) > 0
	}
	return len(s.later) > 0
}
