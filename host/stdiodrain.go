package host

// A graceful end over stdio. On SIGTERM, `mcphost serve` over HTTP stops
// taking connections and lets the requests in flight finish within a
// grace period; over stdio the session used to be closed at once, its
// calls cancelled. go-sdk's ServerSession.Close cannot drain either: it
// refuses new calls, but also every write from then on, the answers of
// the calls it waits for included (a refused write even cancels them).
// So the host drains below go-sdk, where it sees every message: the calls
// the client sent and the answers written to it (stdioCalls). While
// draining, a new call is answered by the host with codeShuttingDown and
// never reaches go-sdk; notifications (a cancellation) and the client's
// answers to the host's requests (sampling, elicitation, roots asked by a
// call in flight) pass on as before. Once every call read has its answer
// written, or the grace is over, ServeStdio closes the session.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// codeShuttingDown is the JSON-RPC error code of a call refused because
// the host is shutting down: go-sdk's own for a call that arrives while a
// connection closes (jsonrpc2.ErrServerClosing, "server is closing").
const codeShuttingDown = -32004

// shuttingDownMessage is the message of a call refused while draining.
const shuttingDownMessage = "server is closing: mcphost is shutting down and takes no new requests"

// stdioCalls knows the calls of a stdio session read from the client and
// not yet answered, by JSON-RPC ID. stdioBatches reports each message it
// passes on (incoming) and syncWriter each one written (written); once
// drain is called, incoming refuses calls, and the channel drain returned
// is closed when none is left unanswered.
type stdioCalls struct {
	mu       sync.Mutex
	pending  map[jsonrpc.ID]struct{}
	draining bool
	idle     chan struct{} // made by drain; closed once draining with nothing pending
}

func newStdioCalls() *stdioCalls {
	return &stdioCalls{pending: map[jsonrpc.ID]struct{}{}}
}

// incoming is told of one message from the client (not a batch), and
// reports whether to refuse it: a call while draining, whose ID it
// returns. Any other call is counted as pending.
func (c *stdioCalls) incoming(msg []byte) (refuse bool, id jsonrpc.ID) {
	id, method := messageHeader(msg)
	if !method || !id.IsValid() {
		return false, id // a notification, or the client's answer to the host
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return true, id
	}
	c.pending[id] = struct{}{}
	return false, id
}

// written is told of what was written to the client: one message, or a
// batch of answers, followed by a newline. An answer (an ID, no method)
// ends its call.
func (c *stdioCalls) written(p []byte) {
	p = bytes.TrimSpace(p)
	if len(p) > 0 && p[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(p, &batch); err != nil {
			return
		}
		for _, m := range batch {
			c.written(m)
		}
		return
	}
	id, method := messageHeader(p)
	if method || !id.IsValid() {
		return // the host's request or notification, or an answer without an ID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, id)
	c.checkIdle()
}

// drain refuses every call from now on, and returns a channel closed once
// every call read before has been answered.
func (c *stdioCalls) drain() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.draining {
		c.draining = true
		c.idle = make(chan struct{})
		c.checkIdle()
	}
	return c.idle
}

// checkIdle closes idle when draining and nothing is pending; c.mu held.
func (c *stdioCalls) checkIdle() {
	if c.draining && len(c.pending) == 0 {
		select {
		case <-c.idle:
		default:
			close(c.idle)
		}
	}
}

// count returns how many calls await their answer.
func (c *stdioCalls) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// messageHeader returns the ID of a JSON-RPC message (an object), valid
// only for a non-null ID, and whether it has a method (a request or
// notification, not an answer). A message in go-sdk's encoding — every
// answer the host writes, however long its result — is read only as far
// as its ID and the key after it (goSDKHeader); any other is read as JSON,
// keys matching exactly, unlike encoding/json's struct fields (go-sdk's
// decoder is strict too). A message it cannot read gives an invalid ID.
func messageHeader(msg []byte) (id jsonrpc.ID, method bool) {
	if id, method, ok := goSDKHeader(msg); ok {
		return id, method
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(msg, &fields); err != nil {
		return jsonrpc.ID{}, false
	}
	_, method = fields["method"]
	if raw, ok := fields["id"]; ok {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return jsonrpc.ID{}, false
		}
		made, err := jsonrpc.MakeID(v)
		if err != nil {
			return jsonrpc.ID{}, false
		}
		id = made
	}
	return id, method
}

// goSDKPrefix is how go-sdk's encoding of a message with an ID begins.
var goSDKPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// goSDKHeader is messageHeader for a message in go-sdk's own encoding
// (every answer the host writes, and the requests of go-sdk's clients):
// `{"jsonrpc":"2.0","id":` then a plain string or integer ID, then
// `"method"`, `"result"` or `"error"`. ok is false for anything else
// (messageHeader then reads it as JSON): the fast path costs no
// allocation beyond the ID's.
func goSDKHeader(msg []byte) (id jsonrpc.ID, method, ok bool) {
	rest, found := bytes.CutPrefix(msg, goSDKPrefix)
	if !found || len(rest) == 0 {
		return jsonrpc.ID{}, false, false
	}
	var v any
	if rest[0] == '"' {
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 || bytes.IndexByte(rest[1:end+1], '\\') >= 0 {
			return jsonrpc.ID{}, false, false
		}
		v, rest = string(rest[1:end+1]), rest[end+2:]
	} else {
		end := bytes.IndexByte(rest, ',')
		if end < 0 {
			return jsonrpc.ID{}, false, false
		}
		n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
		if err != nil {
			return jsonrpc.ID{}, false, false
		}
		v, rest = float64(n), rest[end:]
	}
	switch {
	case bytes.HasPrefix(rest, []byte(`,"method":`)):
		method = true
	case bytes.HasPrefix(rest, []byte(`,"result":`)), bytes.HasPrefix(rest, []byte(`,"error":`)):
	default:
		return jsonrpc.ID{}, false, false
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return jsonrpc.ID{}, false, false
	}
	return id, method, true
}

// shuttingDownAnswer is the error answer, with the call's ID, to a call
// refused while draining.
func shuttingDownAnswer(id jsonrpc.ID) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id.Raw(), &jsonrpc.Error{Code: codeShuttingDown, Message: shuttingDownMessage}})
	return b
}
