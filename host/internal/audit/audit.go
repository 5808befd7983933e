// Package audit writes the host's audit log: one JSON object per line for
// every call a client makes into a plugin — who, what, when, the outcome and
// how long it took. Arguments are left out unless the config asks for them.
package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/internal/clip"
	"github.com/mcphost/mcphost/internal/regularfile"
)

// Entry is one line of the audit log.
type Entry struct {
	// Time is when the call started.
	Time time.Time `json:"time"`
	// Subject is the token's subject when the caller authenticated.
	Subject string `json:"subject,omitempty"`
	// Session is the MCP session ID (absent over stdio and in stateless mode).
	Session string `json:"session,omitempty"`
	// Client is the client's name from initialize, when known.
	Client string `json:"client,omitempty"`
	// Method is the MCP method: tools/call, resources/read, prompts/get or
	// completion/complete.
	Method string `json:"method"`
	// Plugin is the plugin that served the call ("" when none did).
	Plugin string `json:"plugin,omitempty"`
	// Profile is the [[profile]] the call came through ("" for /mcp).
	Profile string `json:"profile,omitempty"`
	// Name is the tool or prompt name, or the resource URI.
	Name string `json:"name,omitempty"`
	// Outcome is ok, tool_error, error, denied or cancelled.
	Outcome string `json:"outcome"`
	// DurationMS is how long the call took, in milliseconds.
	DurationMS float64 `json:"duration_ms"`
	// Error is the error message when the outcome is not ok, cut at
	// MaxErrorBytes (with a note of its length) when longer: a tool's error
	// text is the plugin's and may be as long as its output cap.
	Error string `json:"error,omitempty"`
	// Task is the id of the task (Tasks extension) the call created, or
	// whose round it was.
	Task string `json:"task,omitempty"`
	// Arguments are the call's arguments, only when the config asks.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// MaxErrorBytes bounds an entry's Error: a plugin cannot make the audit
// log grow by its output cap with every failed call.
const MaxErrorBytes = 1024

// Log appends entries to a writer, one JSON line each. It is safe for
// concurrent use.
type Log struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer // nil when the writer is not ours to close
}

// Open opens (creating, appending) the audit log file at path; "stderr"
// writes to stderr instead. Anything at path that is not a regular file (a
// FIFO, a device) is refused.
func Open(path string, stderr io.Writer) (*Log, error) {
	if path == "stderr" {
		return &Log{w: stderr}, nil
	}
	f, err := regularfile.OpenAppend(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	return &Log{w: f, closer: f}, nil
}

// Write appends e as one line. Lines are written whole: a concurrent Write
// never interleaves with it.
func (l *Log) Write(e Entry) error {
	e.Error = clip.Text(e.Error, MaxErrorBytes)
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit entry: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(line); err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	return nil
}

// Close closes the file, if Open opened one.
func (l *Log) Close() error {
	if l.closer == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closer.Close()
}
