package host

import (
	"sync"
	"time"
)

// RelistInterval is the least time between the end of one relist of a
// plugin (reading its lists again after it announced a change) and the
// start of the next. A plugin announcing without pause (from every call,
// or from its own list calls) is relisted at most about once a second:
// each relist reads its lists, diffs the catalog and may notify every
// client, and a flood of them took the host's reload lock from file
// reloads and filled the log. Announcements meanwhile are not lost: they
// are merged into the one relist pending for the plugin.
const RelistInterval = time.Second

// announcements collects the list changes plugins announce, merged per
// plugin, for the background loop. announce never blocks and never drops
// one: what a plugin announces again before the loop took it is already
// there. Its methods are safe for concurrent use.
type announcements struct {
	mu      sync.Mutex
	pending map[string]map[string]bool // plugin -> kinds of list
	wake    chan struct{}              // capacity 1: something is pending
}

func newAnnouncements() *announcements {
	return &announcements{pending: map[string]map[string]bool{}, wake: make(chan struct{}, 1)}
}

// announce records that plugin's list of kind changed, and reports
// whether that is news (not already pending).
func (a *announcements) announce(plugin, kind string) bool {
	a.mu.Lock()
	kinds := a.pending[plugin]
	if kinds == nil {
		kinds = map[string]bool{}
		a.pending[plugin] = kinds
	}
	news := !kinds[kind]
	kinds[kind] = true
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default: // already signalled
	}
	return news
}

// take returns what was announced since the last take.
func (a *announcements) take() map[string]map[string]bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	taken := a.pending
	a.pending = map[string]map[string]bool{}
	return taken
}

// relistSchedule decides when each plugin that announced a change is
// relisted: debounce after its first announcement (so a burst is one
// relist), and never sooner than RelistInterval after its previous relist
// ended. A plugin has at most one relist pending, which later
// announcements join without moving it later, so that a plugin announcing
// without pause is still relisted, about once per RelistInterval. It is
// used by the background loop alone.
type relistSchedule struct {
	interval time.Duration
	due      map[string]time.Time
	kinds    map[string]map[string]bool
	last     map[string]time.Time // when the plugin's last relist ended
}

func newRelistSchedule(interval time.Duration) *relistSchedule {
	return &relistSchedule{interval: interval, due: map[string]time.Time{}, kinds: map[string]map[string]bool{}, last: map[string]time.Time{}}
}

// add merges announced (plugin -> kinds) into the pending relists.
func (s *relistSchedule) add(announced map[string]map[string]bool, now time.Time) {
	for plugin, kinds := range announced {
		if s.kinds[plugin] == nil {
			s.kinds[plugin] = map[string]bool{}
			due := now.Add(debounce)
			if next := s.last[plugin].Add(s.interval); next.After(due) {
				due = next
			}
			s.due[plugin] = due
		}
		for k := range kinds {
			s.kinds[plugin][k] = true
		}
	}
}

// ready removes and returns the relists due at now (nil when none).
func (s *relistSchedule) ready(now time.Time) map[string]map[string]bool {
	var out map[string]map[string]bool
	for plugin, due := range s.due {
		if due.After(now) {
			continue
		}
		if out == nil {
			out = map[string]map[string]bool{}
		}
		out[plugin] = s.kinds[plugin]
		delete(s.due, plugin)
		delete(s.kinds, plugin)
	}
	return out
}

// done records that the relists of plugins ended at now.
func (s *relistSchedule) done(plugins map[string]map[string]bool, now time.Time) {
	for plugin := range plugins {
		s.last[plugin] = now
	}
}

// next returns when the earliest pending relist is due; false when none
// is pending.
func (s *relistSchedule) next() (time.Time, bool) {
	var first time.Time
	for _, due := range s.due {
		if first.IsZero() || due.Before(first) {
			first = due
		}
	}
	return first, !first.IsZero()
}

// forget drops what the schedule keeps of plugins no longer configured.
func (s *relistSchedule) forget(configured func(string) bool) {
	for plugin := range s.last {
		if !configured(plugin) {
			delete(s.last, plugin)
		}
	}
}
