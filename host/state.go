package host

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/pluginstate"
)

// Plugin state per client session (the state_get and state_set host
// functions; package pluginstate, abi/ABI.md §7 "State that outlives an
// instance"): the host holds it, in memory, in one scope per plugin name
// and session. This file decides what "session" is for a request, and
// when a session's state is dropped.

// stateSweepInterval is how often the background loop drops the state of
// sessions that ended (stateful HTTP sessions end without telling the
// host: a DELETE, session_timeout). A new scope also sweeps first, and a
// stdio connection's state goes when it closes.
const stateSweepInterval = time.Minute

// newStateStore returns the store of plugin state of at most maxMB MiB
// ([server] max_state_mb); maxMB <= 0 (a config not read from a file) is
// config.DefaultMaxStateMB. The host gives it the server's sessions once
// it has made its server.
func newStateStore(maxMB int) *pluginstate.Store {
	if maxMB <= 0 {
		maxMB = config.DefaultMaxStateMB
	}
	return pluginstate.New(maxMB, nil)
}

// stateSession returns the session whose scope of plugin state a request
// reaches, nil for the plugin's one shared scope:
//   - over Streamable HTTP (the request has HTTP headers), the stateful
//     session, which Mcp-Session-Id names: go-sdk keeps one ServerSession
//     per session ID. Served stateless ([server] stateless, revision
//     2026-07-28), every request is its own short-lived session (go-sdk
//     makes one per POST and closes it after), so there is no session to
//     key by: all stateless requests share the plugin's scope, as they
//     would share the memory of the reference server's single process;
//   - otherwise (stdio, an in-memory transport) the connection, which is
//     the session (ServerSession.ID() is "" there);
//   - no session at all (a call outside a request): the shared scope.
func (h *Host) stateSession(session *mcp.ServerSession, extra *mcp.RequestExtra) *mcp.ServerSession {
	if session == nil {
		return nil
	}
	overHTTP := extra != nil && extra.Header != nil
	if overHTTP && (h.settings.Stateless || session.ID() == "") {
		return nil
	}
	return session
}

// dropStateOf drops the state of the plugins that left the config (were
// in was, are not in now) or whose state was turned off (state_kb = 0).
func (h *Host) dropStateOf(was []*loadedPlugin, now []config.Plugin) {
	stays := map[string]bool{}
	for _, pc := range now {
		if pc.StateKB > 0 {
			stays[pc.Name] = true
		}
	}
	for _, lp := range was {
		if !stays[lp.cfg.Name] {
			h.state.DropPlugin(lp.cfg.Name)
		}
	}
	for _, pc := range now {
		if pc.StateKB <= 0 {
			h.state.DropPlugin(pc.Name)
		}
	}
}
