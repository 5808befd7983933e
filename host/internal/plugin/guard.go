package plugin

import (
	"fmt"
	"sync"
	"time"
)

// breaker stops calling a plugin that keeps failing: after `threshold`
// failed calls in a row (traps, timeouts, oversized outputs — not errors
// the plugin reported itself, nor cancellations) it refuses calls for
// `cooldown`, then lets one through; a success closes it again.
type breaker struct {
	threshold int
	cooldown  time.Duration

	mu        sync.Mutex
	failures  int
	openUntil time.Time
	lastErr   string
}

// allow reports whether a call may run, or the error refusing it.
func (b *breaker) allow(now time.Time) error {
	if b.threshold == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.openUntil) {
		return fmt.Errorf("stopped after %d failed calls in a row (last: %s); calls resume in %s",
			b.failures, b.lastErr, b.openUntil.Sub(now).Round(time.Millisecond))
	}
	return nil
}

// record notes the outcome of a call; failed is a failure that counts.
// It reports whether this failure opened the breaker.
func (b *breaker) record(now time.Time, failed bool, err error) bool {
	if b.threshold == 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !failed {
		b.failures = 0
		return false
	}
	b.failures++
	b.lastErr = err.Error()
	if b.failures >= b.threshold {
		b.openUntil = now.Add(b.cooldown)
		return true
	}
	return false
}

// countsForBreaker is whether a failed call of this kind says the plugin is
// broken (as opposed to the request or the client).
func countsForBreaker(k Kind) bool {
	return k == KindTrap || k == KindTimeout || k == KindOutputTooLarge
}
