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
// open. It counts the sessions go-sdk holds that are initialized, plus the
// requests it admitted that are still being served (each may be making
// one): go-sdk keeps a session past its first POST only when that POST
// initialized it, so no session escapes the count, and one admitted and
// initialized meanwhile is counted twice, never less than once, until its
// first POST ends. Counting is O(open sessions), done once per request
// that would open a session, never for requests of open sessions.
type sessionLimit struct {
	max   int
	count func() int // initialized sessions open now

	mu       sync.Mutex
	opening  int       // admitted requests without a session still being served
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

// initializedSessions counts the sessions of the host's MCP server that
// have been initialized.
func (h *Host) initializedSessions() int {
	n := 0
	for ss := range h.server.Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}
