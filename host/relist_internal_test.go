package host

import (
	"testing"
	"time"
)

// TestRelistSchedule: a plugin's first announcement is due after the
// debounce; more announcements join it without moving it; the next is due
// no sooner than the interval after the relist ended; plugins are
// scheduled apart.
func TestRelistSchedule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := newRelistSchedule(time.Second)
	s.add(map[string]map[string]bool{"a": {"tools": true}}, t0)
	for i := range 100 { // a flood: the relist stays due when it was
		s.add(map[string]map[string]bool{"a": {"prompts": true}}, t0.Add(time.Duration(i)*time.Millisecond))
	}
	if due, ok := s.next(); !ok || !due.Equal(t0.Add(debounce)) {
		t.Fatalf("next = %v, %v; want %v", due, ok, t0.Add(debounce))
	}
	if got := s.ready(t0.Add(debounce - time.Millisecond)); got != nil {
		t.Fatalf("ready before due: %v", got)
	}
	got := s.ready(t0.Add(debounce))
	if len(got) != 1 || !got["a"]["tools"] || !got["a"]["prompts"] {
		t.Fatalf("ready = %v, want a with tools and prompts", got)
	}
	ended := t0.Add(200 * time.Millisecond)
	s.done(got, ended)

	s.add(map[string]map[string]bool{"a": {"tools": true}, "b": {"tools": true}}, ended)
	if got := s.ready(ended.Add(debounce)); len(got) != 1 || got["b"] == nil {
		t.Fatalf("ready = %v, want b only (a waits for the interval)", got)
	}
	if due, ok := s.next(); !ok || !due.Equal(ended.Add(time.Second)) {
		t.Fatalf("a is due %v, %v; want %v", due, ok, ended.Add(time.Second))
	}
	s.forget(func(name string) bool { return name == "b" })
	if _, ok := s.last["a"]; ok {
		t.Error("forget kept a plugin no longer configured")
	}
}
