package host

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Causes of a request's cancellation by the host.
var (
	errShuttingDown  = errors.New("mcphost is shutting down")
	errSessionClosed = errors.New("the client's session was closed")
)

// requestTracker knows every MCP request being handled, by session, so
// that what waits on a client — a sampling, elicitation or roots request
// the client never answers, from go-sdk's multi-round-trip middleware or a
// hyper-mcp plugin's blocking host function — ends when the session ends
// or the host shuts down. go-sdk's ServerSession.Close waits for the
// requests in flight, and a request waits for the client's answer: without
// this, closing such a session (DELETE, shutdown) never returns.
type requestTracker struct {
	mu sync.Mutex
	// stopped, once set, cancels every request, those to come included.
	stopped  error
	sessions map[mcp.Session]map[*trackedRequest]struct{}
}

type trackedRequest struct {
	cancel context.CancelCauseFunc
	// user is the token's user the request came with ("" without one): a
	// DELETE ends only the requests of its own user, as go-sdk ends only
	// the sessions of their user.
	user string
}

// track returns ctx cancelled also when the request's session is closed or
// the host stops, and the function to call when the request is done.
func (t *requestTracker) track(ctx context.Context, req mcp.Request) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	r := &trackedRequest{cancel: cancel}
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		r.user = extra.TokenInfo.UserID
	}
	s := req.GetSession()
	t.mu.Lock()
	if t.stopped != nil {
		t.mu.Unlock()
		cancel(t.stopped)
		return ctx, func() {}
	}
	if t.sessions == nil {
		t.sessions = map[mcp.Session]map[*trackedRequest]struct{}{}
	}
	if t.sessions[s] == nil {
		t.sessions[s] = map[*trackedRequest]struct{}{}
	}
	t.sessions[s][r] = struct{}{}
	t.mu.Unlock()
	return ctx, func() {
		t.mu.Lock()
		delete(t.sessions[s], r)
		if len(t.sessions[s]) == 0 {
			delete(t.sessions, s)
		}
		t.mu.Unlock()
		cancel(nil)
	}
}

// stop cancels every request in flight, and every one to come, with cause.
func (t *requestTracker) stop(cause error) {
	t.mu.Lock()
	if t.stopped == nil {
		t.stopped = cause
	}
	var all []*trackedRequest
	for _, rs := range t.sessions {
		for r := range rs {
			all = append(all, r)
		}
	}
	t.mu.Unlock()
	for _, r := range all {
		r.cancel(cause)
	}
}

// anyUser, as endSession's user, ends the requests of every user.
const anyUser = "\x00any"

// endSession cancels the requests in flight of the session with the given
// ID that came from user or from no user (or all, for anyUser).
func (t *requestTracker) endSession(id, user string) int {
	var ended []*trackedRequest
	t.mu.Lock()
	for s, rs := range t.sessions {
		ss, ok := s.(*mcp.ServerSession)
		if !ok || ss.ID() != id {
			continue
		}
		for r := range rs {
			if r.user == "" || r.user == user || user == anyUser {
				ended = append(ended, r)
			}
		}
	}
	t.mu.Unlock()
	for _, r := range ended {
		r.cancel(errSessionClosed)
	}
	return len(ended)
}

// busy reports whether the session with the given ID has requests in
// flight.
func (t *requestTracker) busy(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for s := range t.sessions {
		if ss, ok := s.(*mcp.ServerSession); ok && ss.ID() == id {
			return true
		}
	}
	return false
}

// endSessionOf cancels every request in flight of session s.
func (t *requestTracker) endSessionOf(s mcp.Session) {
	t.mu.Lock()
	var ended []*trackedRequest
	for r := range t.sessions[s] {
		ended = append(ended, r)
	}
	t.mu.Unlock()
	for _, r := range ended {
		r.cancel(errSessionClosed)
	}
}

// idleSessions mirrors go-sdk's idle-session timer (session_timeout):
// a session is idle while none of its POSTs is open, and go-sdk closes it
// once idle for the timeout. go-sdk's Close then waits for the session's
// requests, and one may wait on a client that went away mid-call (its POST
// dropped): the host cancels the requests of a session idle that long, so
// that the close goes through. The timers run no goroutine until they fire.
type idleSessions struct {
	timeout time.Duration
	busy    func(id string) bool // whether the session has requests in flight
	end     func(id string)      // cancels the session's requests
	mu      sync.Mutex
	byID    map[string]*idleSession
}

type idleSession struct {
	open  int         // POSTs being served
	timer *time.Timer // running while open == 0
}

// begin counts one more POST of session id being served.
func (s *idleSessions) begin(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[string]*idleSession{}
	}
	e := s.byID[id]
	if e == nil {
		e = &idleSession{}
		s.byID[id] = e
	}
	e.open++
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
}

// done counts one POST of session id less; the last starts the idle timer.
func (s *idleSessions) done(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil {
		return
	}
	if e.open--; e.open > 0 {
		return
	}
	if !s.busy(id) {
		// Nothing to cancel (and an ID go-sdk does not know keeps no
		// entry): a later request comes with a POST of its own.
		delete(s.byID, id)
		return
	}
	var timer *time.Timer
	timer = time.AfterFunc(s.timeout, func() {
		s.mu.Lock()
		current := s.byID[id] == e && e.timer == timer
		if current {
			delete(s.byID, id)
		}
		s.mu.Unlock()
		if current {
			s.end(id)
		}
	})
	e.timer = timer
}

// forget drops session id (deleted by its client).
func (s *idleSessions) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.byID[id]; e != nil {
		if e.timer != nil {
			e.timer.Stop()
		}
		delete(s.byID, id)
	}
}
