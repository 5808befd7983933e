package host

import "github.com/modelcontextprotocol/go-sdk/mcp"

// WaitRetired waits until every retired plugin generation has been closed
// (for tests that count what old generations leave behind).
func (h *Host) WaitRetired() { h.retiring.Wait() }

// StateUsage returns how many scopes of plugin state the host holds and
// their bytes.
func (h *Host) StateUsage() (scopes int, bytes int64) { return h.state.Usage() }

// SweepState drops the state of sessions that ended now, as the
// background loop does every stateSweepInterval.
func (h *Host) SweepState() { h.state.Sweep() }

// MaxInputRounds is how many times one request of a client before
// 2026-07-28 may call its plugin (maxInputRounds).
const MaxInputRounds = maxInputRounds

// ProfileServer returns the MCP server of the profile name (nil when none
// is served), to connect a client in memory.
func (h *Host) ProfileServer(name string) *mcp.Server {
	if p := h.profileNamed(name); p != nil {
		return p.server
	}
	return nil
}
