package host

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
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

// endSession cancels the requests in flight of the session with the given
// ID that came from user or from no user.
func (t *requestTracker) endSession(id, user string) int {
	var ended []*trackedRequest
	t.mu.Lock()
	for s, rs := range t.sessions {
		ss, ok := s.(*mcp.ServerSession)
		if !ok || ss.ID() != id {
			continue
		}
		for r := range rs {
			if r.user == "" || r.user == user {
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

// countInFlight is a receiving middleware that counts requests (not
// notifications) being handled, and ties each to its session's life and the
// host's (see requestTracker).
func (h *Host) countInFlight(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		h.inflight.Add(1)
		defer h.inflight.Add(-1)
		ctx, done := h.requests.track(ctx, req)
		defer done()
		return next(ctx, method, req)
	}
}

// endRequestsOnDelete cancels, before go-sdk closes a session on the
// client's DELETE, the session's requests in flight: go-sdk's Close waits
// for them, and one waiting on that client's answer would never end. The
// requests ended are those go-sdk would let this caller end (same token
// user, or a session without one).
func (h *Host) endRequestsOnDelete(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
			user := ""
			if info := mcpauth.TokenInfoFromContext(r.Context()); info != nil {
				user = info.UserID
			}
			if n := h.requests.endSession(id, user); n > 0 {
				h.logger.Debug("session deleted: cancelling its requests in flight", "requests", n)
			}
		}
		next.ServeHTTP(w, r)
	})
}
