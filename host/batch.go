package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC batches and work per session.
//
// MCP revision 2025-03-26 allowed JSON-RPC batches; 2025-06-18 removed them.
// go-sdk refuses a batch only by the Mcp-Protocol-Version header, which a
// client may leave out (go-sdk then assumes 2025-03-26), and queues every
// call of an accepted batch at once, however many. So the host checks a
// batch itself before go-sdk sees it — against the revision the session
// was initialized with, not only the header — and bounds what one request
// and one session may ask for.
const (
	// maxBatchLength is the most messages one JSON-RPC batch may hold.
	maxBatchLength = 100
	// maxInFlightPerSession is the most requests one session may have
	// handled at once; more are refused with codeTooManyRequests.
	maxInFlightPerSession = 100
	// codeTooManyRequests is the JSON-RPC error code of a request refused
	// because its session has maxInFlightPerSession requests in flight, in
	// the server-defined range (go-sdk uses -32001 to -32005 and -32020 to
	// -32022 itself; its client takes -32003 for "client is closing").
	codeTooManyRequests = -32010
)

// batchRevision reports whether revision, as a session was initialized
// with, allows JSON-RPC batches: 2025-03-26 and 2024-11-05 (which go-sdk
// treats alike); later ones do not, and a revision the server does not know
// is negotiated to a later one.
func batchRevision(revision string) bool {
	return revision == "2025-03-26" || revision == "2024-11-05"
}

// isBatch reports whether body, one JSON-RPC message or a batch, is a batch.
func isBatch(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '['
}

// inspectBatch returns why the batch in body must be refused whatever the
// session ("" if it need not): more than maxBatchLength messages, an
// initialize request (2025-03-26: it "MUST NOT be part of a JSON-RPC
// batch"), or anything this check cannot read — what it cannot read it
// does not let through. It stops reading at the first reason.
func inspectBatch(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return "malformed JSON-RPC batch"
	}
	n := 0
	for dec.More() {
		if n++; n > maxBatchLength {
			return fmt.Sprintf("a JSON-RPC batch may hold at most %d messages", maxBatchLength)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Sprintf("malformed JSON-RPC batch: %v", err)
		}
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return fmt.Sprintf("malformed JSON-RPC message #%d in the batch: %v", n, err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
			return "initialize must not be part of a JSON-RPC batch"
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Sprintf("malformed JSON-RPC batch: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "malformed JSON-RPC batch: data after the closing bracket"
	}
	if n == 0 {
		return "empty JSON-RPC batch"
	}
	return ""
}

// sessionBatchRefusal returns why ss may not send a batch ("" if it may):
// it is not initialized yet, or not with a revision that has batches.
func sessionBatchRefusal(ss *mcp.ServerSession) string {
	if ss == nil {
		return "a JSON-RPC batch needs an initialized session"
	}
	p := ss.InitializeParams()
	if p == nil {
		return "a JSON-RPC batch needs an initialized session"
	}
	if !batchRevision(p.ProtocolVersion) {
		return fmt.Sprintf("JSON-RPC batches are not part of MCP after revision 2025-03-26, and this session was initialized with %q: send one message at a time", p.ProtocolVersion)
	}
	return ""
}

// rpcErrorBody is a JSON-RPC error response without an ID (id null), as
// JSON-RPC answers a request it cannot take as a whole.
func rpcErrorBody(code int64, message string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, &jsonrpc.Error{Code: code, Message: message}})
	return b
}

// httpBatchRefusal returns why the session of r may not send a batch (""
// if it may, or if go-sdk will refuse r anyway: an unknown session).
func (h *Host) httpBatchRefusal(r *http.Request) string {
	if h.settings.Stateless {
		return "JSON-RPC batches are not part of MCP after revision 2025-03-26, and this server is stateless (revision 2026-07-28): send one message per request"
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !batchRevision(v) {
		return fmt.Sprintf("JSON-RPC batches are not part of MCP after revision 2025-03-26, and this request is for %q: send one message per request", v)
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return "a JSON-RPC batch needs an initialized session (initialize must not be part of a batch)"
	}
	for ss := range h.sessions() {
		if ss.ID() == id {
			return sessionBatchRefusal(ss)
		}
	}
	return ""
}

// sessionLimits counts the requests each session has in flight.
type sessionLimits struct {
	mu       sync.Mutex
	inFlight map[mcp.Session]int // no entry: none
}

// acquire counts one more request of s, unless s has max in flight.
func (l *sessionLimits) acquire(s mcp.Session, max int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[s] >= max {
		return false
	}
	if l.inFlight == nil {
		l.inFlight = map[mcp.Session]int{}
	}
	l.inFlight[s]++
	return true
}

// release counts one request of s less.
func (l *sessionLimits) release(s mcp.Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[s]--; l.inFlight[s] <= 0 {
		delete(l.inFlight, s)
	}
}

// stdioBatches stands between a client's stdio stream and go-sdk's
// transport, which reads it: every message passes through unchanged,
// except a JSON-RPC batch that must be refused (the session is not
// initialized with a revision that has batches, or inspectBatch refuses
// it), which is answered on out with a JSON-RPC error and dropped. go-sdk
// itself would accept a batch of any length from a 2025-03-26 session, and
// end the whole session on a batch from a later one.
//
// It splits the stream into messages as go-sdk does (JSON values, each
// followed by a newline), with the same per-message limit. It tells calls
// of every call it passes on, and answers a call itself while calls is
// draining (stdiodrain.go).
type stdioBatches struct {
	dec     *json.Decoder
	limit   *frameLimit
	out     io.Writer // shared with go-sdk's writes, whole messages at a time
	calls   *stdioCalls
	logger  hclog.Logger
	session atomic.Pointer[mcp.ServerSession] // nil until connected
	// connected is closed once session is set (or will never be): go-sdk
	// reads messages before Connect returns the session, so a batch read
	// by then waits for it rather than be judged without it.
	connected chan struct{}
	pending   []byte // the rest of the message being passed on
	err       error  // once set, returned by every Read
}

func newStdioBatches(in io.Reader, out io.Writer, calls *stdioCalls, logger hclog.Logger) *stdioBatches {
	limit := &frameLimit{r: in, max: mcp.DefaultMaxLineLength}
	return &stdioBatches{dec: json.NewDecoder(limit), limit: limit, out: out, calls: calls, logger: logger, connected: make(chan struct{})}
}

// connect gives the filter its session (nil when Connect failed).
func (f *stdioBatches) connect(ss *mcp.ServerSession) {
	if ss != nil {
		f.session.Store(ss)
	}
	close(f.connected)
}

// Read implements io.Reader for go-sdk's transport.
func (f *stdioBatches) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.pending, f.err = f.next()
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// next reads one message and returns what to pass on: the message and a
// newline, or nothing for a batch it refused.
func (f *stdioBatches) next() ([]byte, error) {
	f.limit.reset()
	var raw json.RawMessage
	if err := f.dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("read a message from the client: %w", err)
	}
	// As go-sdk: a message must end its line.
	var b [1]byte
	if n, _ := f.dec.Buffered().Read(b[:]); n > 0 && b[0] != '\n' && b[0] != '\r' {
		return nil, errors.New("read a message from the client: invalid trailing data after it")
	}
	if !isBatch(raw) {
		if refuse, id := f.calls.incoming(raw); refuse {
			return nil, f.refuseWhileDraining(shuttingDownAnswer(id))
		}
		return append(raw, '\n'), nil
	}
	<-f.connected
	refusal := sessionBatchRefusal(f.session.Load())
	if refusal == "" {
		refusal = inspectBatch(raw)
	}
	if refusal == "" {
		return f.passBatch(raw)
	}
	f.logger.Warn("JSON-RPC batch refused", "transport", "stdio", "bytes", len(raw), "reason", refusal)
	if _, err := f.out.Write(append(rpcErrorBody(jsonrpc.CodeInvalidRequest, refusal), '\n')); err != nil {
		return nil, fmt.Errorf("answer a refused batch: %w", err)
	}
	return nil, nil
}

// passBatch returns a batch inspectBatch let through, told to calls
// message by message: while draining, its calls are answered here (one
// batch of answers) and the rest passes on.
func (f *stdioBatches) passBatch(raw json.RawMessage) ([]byte, error) {
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, fmt.Errorf("read a batch from the client: %w", err)
	}
	var kept, refused []json.RawMessage
	for _, m := range msgs {
		if refuse, id := f.calls.incoming(m); refuse {
			refused = append(refused, shuttingDownAnswer(id))
		} else {
			kept = append(kept, m)
		}
	}
	if len(refused) == 0 {
		return append(raw, '\n'), nil
	}
	answers, _ := json.Marshal(refused)
	if err := f.refuseWhileDraining(answers); err != nil {
		return nil, err
	}
	if len(kept) == 0 {
		return nil, nil
	}
	rest, _ := json.Marshal(kept)
	return append(rest, '\n'), nil
}

// refuseWhileDraining writes the answer to calls refused because the host
// is shutting down.
func (f *stdioBatches) refuseWhileDraining(answer []byte) error {
	f.logger.Debug("request refused: shutting down", "transport", "stdio")
	if _, err := f.out.Write(append(answer, '\n')); err != nil {
		return fmt.Errorf("answer a request refused while shutting down: %w", err)
	}
	return nil
}

// frameLimit bounds what the decoder may read for one message.
type frameLimit struct {
	r      io.Reader
	max, n int
}

func (l *frameLimit) Read(p []byte) (int, error) {
	if l.n >= l.max {
		return 0, fmt.Errorf("a message from the client exceeds %d bytes", l.max)
	}
	if len(p) > l.max-l.n {
		p = p[:l.max-l.n]
	}
	n, err := l.r.Read(p)
	l.n += n
	return n, err
}

func (l *frameLimit) reset() { l.n = 0 }

// syncWriter serializes writes from go-sdk and from stdioBatches, and
// tells calls of each message written (an answer ends its call).
type syncWriter struct {
	mu    sync.Mutex
	w     io.Writer
	calls *stdioCalls
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	n, err := w.w.Write(p)
	w.mu.Unlock()
	w.calls.written(p)
	return n, err
}
