package host

// The request path, in one place. A request passes these steps in this
// order (outermost first); each one may answer it without going further.
//
// Over HTTP (httpChain), before go-sdk decodes anything:
//
//	H1 originGuard.wrap     Host and Origin headers: 403 for another host or a foreign page (DNS rebinding); CORS for allowed origins (preflights answered here)
//	H2 auth.Middleware      [server.auth]: a valid bearer token, else 401 (the metadata is mounted outside)
//	H3 guardBatches         reads a POST body, once for every step (413 past go-sdk's limit); 400 for a batch the session may not send
//	H4 checkToolScopes      [server.auth]: tool names decoded from that body; 403 insufficient_scope for a tools/call the token's scopes do not reach
//	H5 limitSessions        stateful: 503 + Retry-After for a POST that would open a session past [server] max_sessions (or, with auth, its user's max_sessions_per_user)
//	H6 trackIdleSessions    stateful: cancels the requests of a session go-sdk's idle timer closes
//	H7 endRequestsOnDelete  DELETE: cancels the session's requests first, so go-sdk's close does not wait on them
//	H8 coalescePriming      stateful POST: go-sdk's priming event leaves with the answer (primeflush.go)
//	   go-sdk's Streamable HTTP handler: session, JSON-RPC decoding, one MCP request each
//
// Over stdio, ServeStdio's stdioBatches filter stands where H3 does.
//
// Then, for every MCP request whatever the transport (mcpMiddleware, in
// the order go-sdk's AddReceivingMiddleware runs them):
//
//	   searchCalls     through a search profile: call_tool becomes the tools/call of the tool it names (search.go)
//	M0 traceRequests   [server.telemetry]/OTEL_*: the request's span and mcp.server.operation.duration (trace.go)
//	M1 revisionFields  drops ttlMs/cacheScope from results for sessions before 2026-07-28
//	M2 resolve         looks the target up once: catalog snapshot + plugin generation, into ctx
//	M3 observe         metrics and the audit log of calls that reach a plugin
//	M4 limitInFlight   at most maxInFlightPerSession requests per session
//	M5 enforceScopes   [server.auth]: lists filtered and items refused by the token's scopes
//	M6 countInFlight   counts the request and ties it to its session's and the host's life
//	M7 taskMethods     serves tasks/get, tasks/update, tasks/cancel; a tools/call the plugin runs as a task gets the task (tasks.go)
//	M8 skillMethods    serves skills/list, skills/get, resources/directory/read (skills.go)
//	   searchDispatch  through a search profile: go-sdk gets call_tool back, whose handler calls callTool with the inner request
//	   go-sdk's multi-round-trip middleware (idle: see below), then its dispatch (tool input checked against the schema)
//	   the handler (handlers.go): callTool, readResource, getPrompt, complete, subscribe;
//	   for a session before 2026-07-28, callTool, readResource and getPrompt ask the
//	   client every round of a plugin's inputRequests themselves (rounds.go), so
//	   go-sdk's middleware, which asks one round only, never sees them;
//	   route (catalog.go) takes a reference on the target's generation, for one round
//	   -> bridge (MCP <-> plugin ABI) -> the plugin generation's instance pool -> a Wasm instance
//
// The catalog is loaded once per MCP request (M2), and once more per HTTP
// POST when H4 checks tool scopes: H4 runs before go-sdk has decoded the
// request, so it cannot hand its lookup on. route looks again only when
// the generation M2 found was retired meanwhile (a reload).
//
// docs/architecture.md draws the whole path of a tools/call.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/audit"
	"github.com/mcphost/mcphost/host/internal/auth"
	"github.com/mcphost/mcphost/host/internal/clip"
)

// httpChain wraps go-sdk's Streamable HTTP handler in the host's HTTP
// middleware, H1 to H8 above (H1 sees a request first).
//
// p is the profile the chain serves (nil: /mcp): H4 looks tool names up in
// its view, and, with [server.auth], a token without the profile's scopes
// is refused (403 insufficient_scope) right after H2.
func (h *Host) httpChain(mcpHandler http.Handler, listenAddr string, stateless bool, sessionTimeout time.Duration, limit *sessionLimit, p *profile) http.Handler {
	// Built inside out: each wrap goes in front of the one before.
	handler := h.endRequestsOnDelete(mcpHandler) // H7
	if !stateless {
		handler = h.endRequestsOnDelete(coalescePriming(mcpHandler)) // H8, H7
		handler = h.trackIdleSessions(sessionTimeout, handler)       // H6
		handler = h.limitSessions(limit, handler)                    // H5
	}
	if h.auth != nil {
		handler = h.checkToolScopes(p, handler) // H4
	}
	handler = h.guardBatches(handler) // H3
	if h.auth != nil {
		if p != nil {
			handler = h.checkProfileScopes(p, handler) // H2, a profile's scopes
		}
		handler = h.auth.Middleware(handler) // H2
	}
	guard := newOriginGuard(listenAddr, h.settings.AllowedOrigins)
	guard.logger = h.logger
	return guard.wrap(handler) // H1
}

// mcpMiddleware is the host's receiving middleware, M0 to M7 above, in the
// order go-sdk's AddReceivingMiddleware takes it (the first runs first).
// p is the profile the server serves (nil: /mcp): resolve looks requests
// up in its view, and observe labels them with its name.
func (h *Host) mcpMiddleware(p *profile) []mcp.Middleware {
	mw := []mcp.Middleware{h.traceRequests, revisionFields, h.resolve(p), h.observe(p), h.limitInFlight, h.enforceScopes, h.countInFlight, h.taskMethods, h.skillMethods(p)}
	if p != nil {
		// Tool search's call_tool is the call of the tool it names, for
		// every step between these two (search.go).
		mw = append(append([]mcp.Middleware{h.searchCalls(p)}, mw...), searchDispatch)
	}
	return mw
}

// originGuard refuses requests addressed to another host or sent by a page
// from another origin, and lets the pages of the origins it accepts call
// the server from a browser (CORS): it answers their preflights and adds
// the Access-Control headers to every response they get.
type originGuard struct {
	hosts   []string // acceptable Host header values
	origins []string // acceptable Origin header values
	// anyLoopbackHost accepts a loopback name (localhost, 127.0.0.1, [::1])
	// at any port as Host, when the server listens on loopback (or on every
	// address): a reverse proxy on the same machine forwards its own port
	// in Host. Such a name is never one an attacker's DNS can rebind, which
	// is what the Host check is for; go-sdk and the Python SDK accept them
	// alike.
	anyLoopbackHost bool
	// logger gets a warning for a refused origin, at most once a second.
	logger   hclog.Logger
	lastWarn atomic.Int64 // unix nanos of the last warning
}

// CORS: what a browser page of an allowed origin may send and read.
const (
	corsAllowMethods  = "GET, POST, DELETE, OPTIONS"
	corsExposeHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After"
	corsMaxAge        = "7200" // seconds a browser may keep a preflight's answer (Chromium's cap)
)

// corsRequestHeaders are the request headers MCP clients send, in lower
// case (as browsers list them in Access-Control-Request-Headers); any
// "mcp-" header is allowed too (Mcp-Method, Mcp-Name and the 2026-07-28
// revision's Mcp-Param-* headers).
var corsRequestHeaders = []string{
	"accept", "authorization", "content-type", "last-event-id",
	"traceparent", "tracestate", "baggage",
}

func newOriginGuard(listenAddr string, extraOrigins []string) *originGuard {
	g := &originGuard{}
	host, port, err := net.SplitHostPort(listenAddr)
	if err != nil {
		host, port = listenAddr, ""
	}
	names := []string{host}
	ip := net.ParseIP(host)
	if host == "" || host == "localhost" || (ip != nil && (ip.IsLoopback() || ip.IsUnspecified())) {
		names = append(names, "localhost", "127.0.0.1", "[::1]", "::1")
		g.anyLoopbackHost = true
	}
	for _, n := range names {
		hostport := n
		if port != "" {
			hostport = net.JoinHostPort(strings.Trim(n, "[]"), port)
		}
		g.hosts = append(g.hosts, strings.ToLower(hostport))
		g.origins = append(g.origins, "http://"+strings.ToLower(hostport), "https://"+strings.ToLower(hostport))
	}
	for _, o := range extraOrigins {
		g.origins = append(g.origins, strings.ToLower(o))
		if u, err := url.Parse(o); err == nil {
			g.hosts = append(g.hosts, strings.ToLower(u.Host))
		}
	}
	return g
}

func (g *originGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(g.hosts, strings.ToLower(r.Host)) && !(g.anyLoopbackHost && isLoopbackHost(r.Host)) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not this server's address", r.Host), http.StatusForbidden)
			return
		}
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		if !slices.Contains(g.origins, strings.ToLower(origin)) {
			g.warnRefused(origin, r)
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed (add it to [server] allowed_origins)", origin), http.StatusForbidden)
			return
		}
		hdr := w.Header()
		hdr.Set("Access-Control-Allow-Origin", origin)
		hdr.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hdr.Set("Access-Control-Allow-Methods", corsAllowMethods)
			if allowed := corsAllowedHeaders(r.Header.Values("Access-Control-Request-Headers")); allowed != "" {
				hdr.Set("Access-Control-Allow-Headers", allowed)
			}
			hdr.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		hdr.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		next.ServeHTTP(w, r)
	})
}

// corsAllowedHeaders is the Access-Control-Allow-Headers answer to a
// preflight's Access-Control-Request-Headers: those of them MCP uses
// (corsRequestHeaders, or mcp-*), in the order asked. A header outside
// them is left out, and the browser then does not send the request.
func corsAllowedHeaders(requested []string) string {
	var allowed []string
	for _, line := range requested {
		for name := range strings.SplitSeq(line, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "" && (strings.HasPrefix(name, "mcp-") || slices.Contains(corsRequestHeaders, name)) && !slices.Contains(allowed, name) {
				allowed = append(allowed, name)
			}
		}
	}
	return strings.Join(allowed, ", ")
}

// warnRefused logs a refused origin at warn level, naming it, at most once
// a second (a hostile page can send many).
func (g *originGuard) warnRefused(origin string, r *http.Request) {
	if g.logger == nil {
		return
	}
	now := time.Now().UnixNano()
	if last := g.lastWarn.Load(); now-last < int64(time.Second) || !g.lastWarn.CompareAndSwap(last, now) {
		return
	}
	g.logger.Warn("request from a browser origin that is not allowed refused (add it to [server] allowed_origins if it is yours)",
		"origin", clip.Text(origin, 200), "method", r.Method, "remote", r.RemoteAddr)
}

// isLoopbackHost reports whether a Host header names a loopback address
// (localhost, 127.0.0.0/8, ::1), at any port or none.
func isLoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// guardBatches is HTTP middleware in front of go-sdk's Streamable HTTP
// handler. It reads a POST body whole (readBody), and refuses a JSON-RPC
// batch with 400 and a JSON-RPC error (-32600) when the server is
// stateless (revision 2026-07-28), when the Mcp-Protocol-Version header or
// the session's initialized revision is after 2025-03-26, when it opens a
// session or its session is not initialized, or when inspectBatch finds it
// too long or unreadable. Other requests reach next with the same bytes.
func (h *Host) guardBatches(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		r.Header.Del(requestIDHeader) // the host's own (trace.go)
		r.Header.Del(stdioHeader)
		if isBatch(body) {
			refusal := h.httpBatchRefusal(r)
			if refusal == "" {
				refusal = inspectBatch(body)
			}
			if refusal != "" {
				h.logger.Warn("JSON-RPC batch refused", "session", r.Header.Get("Mcp-Session-Id"), "bytes", len(body), "reason", refusal)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(rpcErrorBody(jsonrpc.CodeInvalidRequest, refusal))
				return
			}
		} else {
			h.markRequestID(r, body)
			if id, mismatch := taskHeaderMismatch(r, body); mismatch != "" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(rpcErrorBodyFor(id, codeHeaderMismatch, mismatch))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// bufferedBody is a request body read whole by readBody: go-sdk reads it
// as any body, and a later step takes its bytes without reading it again.
type bufferedBody struct {
	bytes.Reader
	data []byte
}

// Close implements io.Closer.
func (*bufferedBody) Close() error { return nil }

// readBody returns r's body whole, reading it at most once however many
// steps ask: the first reads it, up to go-sdk's own limit
// (mcp.DefaultMaxRequestBodyBytes; a larger body gets 413 as go-sdk would
// answer), and puts the bytes back as r.Body for the next. When it cannot,
// it has answered w and returns false.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	const maxBody = mcp.DefaultMaxRequestBodyBytes
	if b, ok := r.Body.(*bufferedBody); ok {
		return b.data, true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body.Close()
	if err != nil {
		http.Error(w, "Bad Request: read body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if len(body) > maxBody {
		http.Error(w, fmt.Sprintf("Request Entity Too Large: body exceeds %d bytes", maxBody), http.StatusRequestEntityTooLarge)
		return nil, false
	}
	b := &bufferedBody{data: body}
	b.Reset(body)
	r.Body = b
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return body, true
}

// checkToolScopes refuses, with HTTP 403 insufficient_scope, a tools/call
// for a tool the request's token has not the scopes for, before go-sdk
// queues it, and counts and audits each refusal: the request never reaches
// the MCP server, where calls are otherwise observed. It takes the body
// guardBatches read (readBody), decodes the tool names as go-sdk will see
// them (auth.ToolCalls: 400 for what it cannot read), and looks every name
// of a batch up in one catalog; one refused call refuses the whole batch.
// It is the only tool-scope check before go-sdk (TestAuthToolScopesRefusedBeforeGoSDK).
// Through a search profile, a call of call_tool is checked as the call of
// the tool it names (auth.ToolCallsThrough).
func (h *Host) checkToolScopes(p *profile, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		names, err := auth.ToolCallsThrough(body, searchThrough(p))
		if err != nil {
			http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(names) > 0 {
			info := mcpauth.TokenInfoFromContext(r.Context())
			if info == nil {
				h.auth.Unauthorized(w)
				return
			}
			c := h.currentCatalog(p) // one catalog for every call of a batch
			for _, name := range names {
				if required := c.toolScopes(name); !auth.HasScopes(info, required) {
					h.logger.Debug("tools/call refused: insufficient scope", "tool", name, "subject", auth.Subject(info), "required", required, "profile", profileName(p))
					h.recordRefusal(r, c, p, info, name, required)
					h.auth.InsufficientScope(w, required, "tool "+name+" needs more scope")
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// recordRefusal counts and audits a tools/call refused for its scopes.
func (h *Host) recordRefusal(r *http.Request, c *catalog, p *profile, info *mcpauth.TokenInfo, tool string, required []string) {
	pluginName := ""
	if e, ok := c.tools[tool]; ok {
		pluginName = e.plugin.cfg.Name
	}
	h.metrics.calls.WithLabelValues("tools/call", pluginName, tool, "denied", profileName(p)).Inc()
	if h.audit == nil {
		return
	}
	err := h.audit.Write(audit.Entry{
		Time: time.Now().UTC(), Subject: auth.Subject(info), Session: r.Header.Get("Mcp-Session-Id"),
		Method: "tools/call", Plugin: pluginName, Name: tool, Outcome: "denied", Profile: profileName(p),
		Error: fmt.Sprintf("insufficient scope: tool %q needs scopes %v", tool, required),
	})
	if err != nil {
		h.logger.Error("audit log", "error", err)
	}
}

// limitSessions refuses, while max sessions are open, a request that
// would open another — a POST without Mcp-Session-Id: go-sdk makes a
// session for every such POST, whatever it carries, and keeps it when the
// POST initializes it — with HTTP 503, Retry-After and a JSON-RPC error
// (codeTooManySessions) naming max_sessions, before go-sdk makes one. With
// [server.auth] it refuses one alike (naming max_sessions_per_user) while
// the token's user holds perUser sessions, and records the session such a
// POST opens as that user's (sessionRecorder). Requests of open sessions,
// and DELETEs ending them, always pass (so do GETs, which go-sdk refuses
// without a session). Only for the stateful transport: stateless serving
// has no sessions. The count: sessionLimit.
func (h *Host) limitSessions(limit *sessionLimit, next http.Handler) http.Handler {
	messages := map[string]string{
		"max_sessions":          fmt.Sprintf("too many sessions open (max_sessions = %d): try again later, or end an unused session (DELETE)", limit.max),
		"max_sessions_per_user": fmt.Sprintf("too many sessions open for this user (max_sessions_per_user = %d): end an unused session of yours (DELETE), or try again later", limit.perUser),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		user := ""
		if info := mcpauth.TokenInfoFromContext(r.Context()); info != nil && h.auth != nil {
			user = info.UserID
		}
		refusedBy, warn := limit.admit(user)
		if refusedBy != "" {
			h.metrics.sessionsRefused.Inc()
			if warn > 0 {
				h.logger.Warn("new session refused: "+refusedBy+" are open", "max_sessions", limit.max, "max_sessions_per_user", limit.perUser, "user", user, "refused_since_last_warning", warn, "remote", r.RemoteAddr)
			} else {
				h.logger.Debug("new session refused: "+refusedBy+" are open", "max_sessions", limit.max, "max_sessions_per_user", limit.perUser, "user", user, "remote", r.RemoteAddr)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", sessionRetryAfter)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write(rpcErrorBody(codeTooManySessions, messages[refusedBy]))
			return
		}
		rec := &sessionRecorder{ResponseWriter: w, limit: limit, user: user}
		defer rec.done()
		next.ServeHTTP(rec, r)
	})
}

// trackIdleSessions follows the POSTs of each session for idle, when
// sessions time out (timeout > 0).
func (h *Host) trackIdleSessions(timeout time.Duration, next http.Handler) http.Handler {
	if timeout <= 0 {
		return next
	}
	idle := &idleSessions{timeout: timeout, busy: h.requests.busy, end: func(id string) {
		if n := h.requests.endSession(id, anyUser); n > 0 {
			h.logger.Info("session idle past session_timeout: cancelling its requests in flight", "requests", n)
		}
	}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		switch {
		case id == "":
		case r.Method == http.MethodPost:
			idle.begin(id)
			defer idle.done(id)
		case r.Method == http.MethodDelete:
			defer idle.forget(id)
		}
		next.ServeHTTP(w, r)
	})
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

// revisionFields is a receiving middleware that sends each revision only
// its own fields: go-sdk's results carry ttlMs and cacheScope (not
// omitted when empty) to every session; a session of an earlier revision
// gets the result without them.
func revisionFields(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || !cacheableMethods[method] {
			return res, err
		}
		if v, ok := req.(interface{ ProtocolVersion() string }); ok && v.ProtocolVersion() >= revisionCacheable {
			return res, nil
		}
		return withoutCache(res), nil
	}
}

// resolve is a receiving middleware that looks up, once, what a request
// names (its target: the current catalog, and the plugin generation
// serving its tool, prompt, resource or completion reference) and puts it
// in ctx, where observe, enforceScopes and the handler (route) read it.
// Lists get a target too, for enforceScopes to filter them by the same
// catalog.
//
// p is the profile the request came through (nil: /mcp): its view is the
// catalog, so a name p does not serve is as unknown as a name no plugin
// serves.
func (h *Host) resolve(p *profile) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if !scopedMethods[method] {
				return next(ctx, method, req)
			}
			tc := &targetContext{Context: ctx, target: h.currentCatalog(p).lookup(req)}
			tc.target.profile = p
			return next(tc, method, req)
		}
	}
}

// observe is a receiving middleware: metrics and the audit log for every
// request that reaches a plugin, and a count of sessions started; both
// carry the profile p the request came through ("" for /mcp).
func (h *Host) observe(p *profile) mcp.Middleware {
	profile := profileName(p)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/initialized" {
				h.metrics.sessions.Inc()
			}
			if !observedMethods[method] {
				return next(ctx, method, req)
			}
			began := time.Now()
			name := requestTarget(req)
			res, err := next(ctx, method, req)
			took := time.Since(began)
			// After the call: the handler updates the target when it had to
			// look the request up again (see route).
			pluginName := targetOf(ctx).pluginName()

			outcome, message := outcomeOf(ctx, res, err)
			h.metrics.calls.WithLabelValues(method, pluginName, metricName(method, name), outcome, profile).Inc()
			h.metrics.duration.WithLabelValues(method, pluginName, metricName(method, name), profile).Observe(took.Seconds())
			if h.audit != nil {
				e := audit.Entry{
					Time: began.UTC(), Method: method, Plugin: pluginName, Name: name, Profile: profile,
					Outcome: outcome, DurationMS: float64(took.Microseconds()) / 1000, Error: message,
				}
				if extra := req.GetExtra(); extra != nil {
					e.Subject = auth.Subject(extra.TokenInfo)
				}
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
					e.Session = ss.ID()
					if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
						e.Client = p.ClientInfo.Name
					}
				}
				if h.auditArguments {
					e.Arguments = requestArguments(req)
				}
				if created, ok := res.(*taskResult); ok {
					e.Task = created.TaskID
				}
				if err := h.audit.Write(e); err != nil {
					h.logger.Error("audit log", "error", err)
				}
			}
			return res, err
		}
	}
}

// limitInFlight is a receiving middleware that refuses a request (not a
// notification) when its session already has maxInFlightPerSession being
// handled, with codeTooManyRequests: however a client sends requests — in
// batches or many HTTP POSTs at once — one session cannot queue unbounded
// work in the host.
func (h *Host) limitInFlight(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		s := req.GetSession()
		if !h.perSession.acquire(s, maxInFlightPerSession) {
			h.logger.Debug("request refused: too many in flight in its session", "method", method, "limit", maxInFlightPerSession)
			return nil, &jsonrpc.Error{
				Code:    codeTooManyRequests,
				Message: fmt.Sprintf("too many requests in flight in this session (at most %d): wait for answers before sending more", maxInFlightPerSession),
			}
		}
		defer h.perSession.release(s)
		return next(ctx, method, req)
	}
}

// enforceScopes is a receiving middleware, active when requests carry a
// verified token ([server.auth]): lists leave out what the token's scopes
// do not reach, and a request for such an item is refused.
func (h *Host) enforceScopes(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if h.auth == nil || !scopedMethods[method] {
			return next(ctx, method, req)
		}
		t := targetOf(ctx)
		if t == nil { // not through resolve
			fresh := h.catalog.Load().lookup(req)
			t = &fresh
		}
		if err := h.scopeRefusal(method, req, t); err != nil {
			return nil, err
		}
		info := tokenInfo(req)
		c := t.catalog
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.ListToolsResult:
			r.Tools = slices.DeleteFunc(r.Tools, func(t *mcp.Tool) bool {
				e, ok := c.tools[t.Name]
				return ok && !auth.HasScopes(info, pluginScopes(e.plugin, e.tool.PluginName))
			})
		case *mcp.ListPromptsResult:
			r.Prompts = slices.DeleteFunc(r.Prompts, func(p *mcp.Prompt) bool {
				e, ok := c.prompts[p.Name]
				return ok && !auth.HasScopes(info, pluginScopes(e.plugin, ""))
			})
		case *mcp.ListResourcesResult:
			r.Resources = slices.DeleteFunc(r.Resources, func(rs *mcp.Resource) bool {
				e, ok := c.resources[rs.URI]
				if f := c.skills.file(rs.URI); f != nil {
					e.plugin, ok = f.plugin, true
				}
				return ok && !auth.HasScopes(info, pluginScopes(e.plugin, ""))
			})
		case *mcp.ListResourceTemplatesResult:
			r.ResourceTemplates = slices.DeleteFunc(r.ResourceTemplates, func(t *mcp.ResourceTemplate) bool {
				e, ok := c.templates[t.URITemplate]
				return ok && !auth.HasScopes(info, pluginScopes(e.plugin, ""))
			})
		}
		return res, nil
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
