package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/clip"
	"github.com/mcphost/mcphost/host/internal/eventstore"
)

// MCPPath is where the Streamable HTTP transport serves MCP.
const MCPPath = "/mcp"

// HTTPHandler returns the Streamable HTTP handler for this host's server,
// mounted at MCPPath, for a server listening on listenAddr. Requests whose
// Host header is not the listen address (or, for a server on loopback, a
// loopback name at any port, as a local reverse proxy sends), or whose
// Origin is neither the listen address (localhost at its port) nor one of
// [server] allowed_origins, get 403:
// this is what stops a web page from reaching a local server through DNS
// rebinding. A JSON-RPC batch the session may not send gets 400 with a
// JSON-RPC error before go-sdk sees it (see guardBatches).
func (h *Host) HTTPHandler(listenAddr string) http.Handler {
	settings := h.settings
	opts := &mcp.StreamableHTTPOptions{
		Stateless:      settings.Stateless,
		SessionTimeout: settings.SessionTimeout,
		Logger:         slogFor(h.logger.Named("http")),
	}
	if !opts.Stateless {
		// Lets a client resume a stream the server closed (SEP-1699), or
		// one its network dropped, without losing the response. Not
		// go-sdk's MemoryEventStore, which keeps an entry for every call a
		// session ever made (RATIONALE.md, "The event store").
		opts.EventStore = eventstore.New()
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server }, opts)
	mux := http.NewServeMux()
	if h.auth != nil {
		// The metadata is public: outside the chain's token check.
		h.auth.Mount(mux)
	}
	// One session cap for /mcp and every profile.
	limit := newSessionLimit(settings.MaxSessions, settings.MaxSessionsPerUser, h.sessions)
	mux.Handle(MCPPath, h.httpChain(mcpHandler, listenAddr, opts.Stateless, opts.SessionTimeout, limit, nil))
	mux.Handle(MCPPath+"/{profile}", &profileHandlers{h: h, listenAddr: listenAddr, opts: opts, limit: limit, built: map[*profile]http.Handler{}})
	if settings.Metrics.Listen == "" {
		h.addOps(mux)
	}
	return mux
}

// profileHandlers serves /mcp/{profile}: each profile's own Streamable
// HTTP handler (its own sessions) behind its own chain, built at its first
// request; an unknown profile gets 404 with a JSON-RPC error naming it.
type profileHandlers struct {
	h          *Host
	listenAddr string
	opts       *mcp.StreamableHTTPOptions
	limit      *sessionLimit

	mu    sync.Mutex
	built map[*profile]http.Handler
}

// codeUnknownProfile is the JSON-RPC error code of a request to a profile
// the config does not define (server-defined range).
const codeUnknownProfile = -32004

func (ph *profileHandlers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("profile")
	p := ph.h.profileNamed(name)
	if p == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write(rpcErrorBody(codeUnknownProfile, fmt.Sprintf("unknown profile %q: the config defines %s", clip.Text(name, 100), profileList(ph.h.ProfileNames()))))
		return
	}
	ph.handler(p).ServeHTTP(w, r)
}

// handler returns p's handler, building it the first time; handlers of
// profiles no longer served are dropped then.
func (ph *profileHandlers) handler(p *profile) http.Handler {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	if hd := ph.built[p]; hd != nil {
		return hd
	}
	for q := range ph.built {
		if ph.h.profileNamed(q.name) != q {
			delete(ph.built, q)
		}
	}
	opts := *ph.opts
	if !opts.Stateless {
		opts.EventStore = eventstore.New()
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.server }, &opts)
	hd := ph.h.httpChain(mcpHandler, ph.listenAddr, opts.Stateless, opts.SessionTimeout, ph.limit, p)
	ph.built[p] = hd
	return hd
}

// profileList words the profiles a config defines, for an error.
func profileList(names []string) string {
	if len(names) == 0 {
		return "no [[profile]]"
	}
	return "the profiles " + strings.Join(names, ", ")
}

// ServeStreamableHTTP serves MCP over Streamable HTTP on ln until ctx is
// done, then stops accepting, lets requests in flight finish for at most
// grace, and returns. ln is listening already, so clients may connect
// before it is called. (Not ServeHTTP: that name is http.Handler's.)
func (h *Host) ServeStreamableHTTP(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{
		Handler:           h.HTTPHandler(ln.Addr().String()),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	h.draining.Store(true)
	if delay := h.settings.DrainDelay; delay > 0 {
		// Keep serving while /readyz says unready, so a load balancer's
		// health check moves new requests elsewhere first.
		h.logger.Info("draining: /readyz reports unready; still serving", "for", delay)
		time.Sleep(delay)
	}
	h.logger.Info("shutting down: no new connections; waiting for requests in flight", "grace", grace, "in_flight", h.inflight.Load())
	graceCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- srv.Shutdown(graceCtx) }()
	// Shutdown closes the listener and idle connections, but a session's
	// SSE stream never goes idle: once no MCP request is running, end the
	// sessions so their streams close too. Requests still running when the
	// grace ends are cancelled first: a session's Close waits for them, and
	// one may be waiting for an answer its client never sends.
	h.waitIdle(graceCtx)
	if n := h.inflight.Load(); n > 0 {
		h.logger.Warn("requests still running after the grace period; cancelling them", "in_flight", n)
	}
	h.requests.stop(errShuttingDown)
	for ss := range h.sessions() {
		ss.Close()
	}
	err := <-shutdownDone
	if errors.Is(err, context.DeadlineExceeded) {
		srv.Close()
		err = nil
	}
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// waitIdle returns when no MCP request is being handled, or ctx is done.
func (h *Host) waitIdle(ctx context.Context) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for h.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
