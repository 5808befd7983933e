package host

import (
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/internal/config"
)

const (
	// codeTooManySessions is the JSON-RPC error code of a request refused
	// because max_sessions sessions are open (server-defined range, beside
	// codeTooManyRequests).
	codeTooManySessions = -32011
	// sessionRetryAfter is the Retry-After (seconds) of that refusal:
	// sessions end at unforeseeable times (a client's DELETE,
	// session_timeout), so a client tries again soon, each try costing one
	// count of the sessions.
	sessionRetryAfter = "5"
	// sessionWarnEvery is how often, at most, a refusal is logged at warn
	// level; the others are counted into the next warning (and logged at
	// debug), so a client opening sessions in a loop cannot flood the log.
	sessionWarnEvery = time.Minute
)

// sessionLimit admits new stateful HTTP sessions while fewer than max are
// open. It counts the sessions go-sdk holds, initialized or not, plus the
// requests it admitted that go-sdk has not answered yet (each may be
// making one). go-sdk holds a new session before it answers the request
// that made it, and drops it when that request ends unless it initialized
// it: so no session escapes the count, and a request's session is counted
// twice only until its answer, which is also when a client can first ask
// for another (limitSessions ends the reservation there). Counting is
// O(open sessions), done once per request that would open a session, never
// for requests of open sessions.
type sessionLimit struct {
	max   int
	count func() int // sessions go-sdk holds now

	mu       sync.Mutex
	opening  int       // admitted requests go-sdk has not answered yet
	refused  int       // refusals not yet in a warning
	lastWarn time.Time // of the last warning
}

// newSessionLimit returns the limit of max sessions, counted by count;
// max <= 0 (settings not read from a file) is config.DefaultMaxSessions:
// there is no way to turn the cap off.
func newSessionLimit(max int, count func() int) *sessionLimit {
	if max <= 0 {
		max = config.DefaultMaxSessions
	}
	return &sessionLimit{max: max, count: count}
}

// admit reserves room for one more session, or reports false when max are
// open (or being opened) and returns the refusals since the last warning
// when this one is to be logged at warn level (0 when not).
func (l *sessionLimit) admit() (ok bool, warn int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count()+l.opening < l.max {
		l.opening++
		return true, 0
	}
	l.refused++
	if now := time.Now(); now.Sub(l.lastWarn) >= sessionWarnEvery {
		warn, l.refused, l.lastWarn = l.refused, 0, now
	}
	return false, warn
}

// done ends a reservation of admit: the session it may have made is now
// counted among the open ones, or was closed.
func (l *sessionLimit) done() {
	l.mu.Lock()
	l.opening--
	l.mu.Unlock()
}

// openSessions counts the sessions of the host's MCP server, initialized
// or not: go-sdk holds one from the first POST of a new session, and drops
// it at the end of that POST unless it initialized it.
func (h *Host) openSessions() int {
	n := 0
	for range h.server.Sessions() {
		n++
	}
	return n
}
