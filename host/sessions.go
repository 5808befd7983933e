package host

import (
	"iter"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
// open, and, with [server.auth], while the token's user holds fewer than
// perUser. It counts the sessions go-sdk holds, initialized or not, plus
// the requests it admitted that go-sdk has not answered yet (each may be
// making one). go-sdk holds a new session before it writes the answer that
// names it, and drops it at the end of that request unless it initialized
// it: so no session escapes the count, and a request's session is counted
// twice only until its answer, which ends its reservation
// (sessionRecorder) and is also when a client can first ask for another.
// A user's sessions are those go-sdk holds that owners records as theirs
// (from the answer's Mcp-Session-Id), plus that user's admitted requests
// not yet answered. Counting is O(open sessions), done once per request
// that would open a session, never for requests of open sessions.
type sessionLimit struct {
	max, perUser int
	sessions     func() iter.Seq[*mcp.ServerSession] // go-sdk's open sessions

	mu       sync.Mutex
	opening  int                      // admitted requests go-sdk has not answered yet
	owners   map[string]*sessionOwner // session ID -> its user, for sessions opened with a token
	openedBy map[string]int           // user -> their admitted requests not yet answered
	sweep    uint64                   // the count that last saw each owners entry's session
	refused  int                      // refusals not yet in a warning
	lastWarn time.Time                // of the last warning
}

// sessionOwner is the user who opened a session, and the count of admit
// that last found the session open (older entries are of ended sessions).
type sessionOwner struct {
	user string
	seen uint64
}

// newSessionLimit returns the limit of max sessions, perUser of them per
// token user, counted among sessions; max <= 0 (settings not read from a
// file) is config.DefaultMaxSessions and perUser <= 0 the smaller of
// config.DefaultMaxSessionsPerUser and max: there is no way to turn the
// caps off.
func newSessionLimit(max, perUser int, sessions func() iter.Seq[*mcp.ServerSession]) *sessionLimit {
	if max <= 0 {
		max = config.DefaultMaxSessions
	}
	if perUser <= 0 {
		perUser = min(config.DefaultMaxSessionsPerUser, max)
	}
	return &sessionLimit{max: max, perUser: perUser, sessions: sessions, owners: map[string]*sessionOwner{}, openedBy: map[string]int{}}
}

// admit reserves room for one more session of user ("" without auth: no
// per-user cap), or reports which cap refuses it ("max_sessions" or
// "max_sessions_per_user"), and returns the refusals since the last
// warning when this one is to be logged at warn level (0 when not). It
// forgets the owners of sessions that have ended.
func (l *sessionLimit) admit(user string) (refusedBy string, warn int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep++
	open, mine := 0, 0
	for ss := range l.sessions() {
		open++
		if o := l.owners[ss.ID()]; o != nil {
			o.seen = l.sweep
			if user != "" && o.user == user {
				mine++
			}
		}
	}
	maps.DeleteFunc(l.owners, func(_ string, o *sessionOwner) bool { return o.seen != l.sweep })
	switch {
	case user != "" && mine+l.openedBy[user] >= l.perUser:
		refusedBy = "max_sessions_per_user"
	case open+l.opening >= l.max:
		refusedBy = "max_sessions"
	default:
		l.opening++
		if user != "" {
			l.openedBy[user]++
		}
		return "", 0
	}
	l.refused++
	if now := time.Now(); now.Sub(l.lastWarn) >= sessionWarnEvery {
		warn, l.refused, l.lastWarn = l.refused, 0, now
	}
	return refusedBy, warn
}

// answered ends a reservation of admit when go-sdk answers the request,
// with the session it opened (id) or none (""): go-sdk holds a session it
// names in that answer, so from now on it counts among the open ones (and
// as user's); an answer without one leaves no session behind. A request
// still finishing is then not counted beside its session, nor when it
// made none (go-sdk's client sends a POST without a session before its
// initialize).
func (l *sessionLimit) answered(id, user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id != "" && user != "" {
		l.owners[id] = &sessionOwner{user: user, seen: l.sweep}
	}
	l.opening--
	l.release(user)
}

// done ends a reservation of admit for user ("" for none) that go-sdk
// never answered: no session of it is left.
func (l *sessionLimit) done(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opening--
	l.release(user)
}

// release ends user's part of a reservation (nothing for ""); l.mu held.
func (l *sessionLimit) release(user string) {
	if user == "" {
		return
	}
	if l.openedBy[user]--; l.openedBy[user] <= 0 {
		delete(l.openedBy, user)
	}
}

// sessionRecorder is the ResponseWriter of a POST that may open a session
// (of a token's user, or of nobody without auth): when go-sdk writes its
// answer's header, with an Mcp-Session-Id (it does for an initialize that
// made a session) or not, it tells the limit (sessionLimit.answered)
// before the answer goes out, ending the request's reservation there.
type sessionRecorder struct {
	http.ResponseWriter
	limit    *sessionLimit
	user     string
	answered bool // the header is written, and the limit told
}

func (w *sessionRecorder) note() {
	if !w.answered {
		w.answered = true
		w.limit.answered(w.Header().Get("Mcp-Session-Id"), w.user)
	}
}

// done ends the request's reservation, once it is served, if its answer
// did not (limit.done).
func (w *sessionRecorder) done() {
	if !w.answered {
		w.limit.done(w.user)
	}
}

// WriteHeader implements http.ResponseWriter.
func (w *sessionRecorder) WriteHeader(code int) {
	w.note()
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *sessionRecorder) Write(b []byte) (int, error) {
	w.note()
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher, for a writer that asserts it.
func (w *sessionRecorder) Flush() {
	w.note()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController (go-sdk flushes through one) the
// writer underneath.
func (w *sessionRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
