package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi"
)

// The envelope is decoded in one pass over JSON that validJSON has
// checked once, instead of one json.Unmarshal per layer (envelope,
// params, arguments), each of which validates its bytes before decoding
// them. In the Wasm guest that repeated scanning was most of the SDK's own
// work for a small call (BENCHMARKS.md, issue 18). Values the SDK does not
// look at stay as sub-slices of the input, without copies. Keys match as
// encoding/json matches them (case-insensitively; the last duplicate
// wins).

// decodeEnvelope decodes input, the JSON the host sent, into in.
func decodeEnvelope(input []byte, in *envelope) error {
	if !validJSON(input) {
		var v any // for encoding/json's error, which names what is wrong and where
		if err := json.Unmarshal(input, &v); err != nil {
			return err
		}
		return errors.New("invalid JSON")
	}
	m, err := objectMembers(input, "input")
	for err == nil && m.next() {
		switch {
		case m.key.is("request"):
			in.Request = m.val
		case m.key.is("context"):
			err = decodeContext(m.val, &in.Context)
		}
	}
	return err
}

// decodeContext decodes val, the envelope's context, into c.
func decodeContext(val []byte, c *envelopeContext) error {
	m, err := objectMembers(val, "context")
	for err == nil && m.next() {
		switch {
		case m.key.is("id"):
			c.ID = m.val
		case m.key.is("_meta"):
			c.Meta = m.val
		case m.key.is("clientCapabilities"):
			c.ClientCapabilities = m.val
		case m.key.is("uriTemplate"):
			// Decoded into a variable of its own, here and below: a pointer
			// into c that reached encoding/json would move c, and so every
			// envelope, to the heap.
			t := c.URITemplate
			err = jsonString(m.val, "context.uriTemplate", &t)
			c.URITemplate = t
		case m.key.is("uriVariables"):
			vars := c.URIVariables
			err = jsonInto(m.val, "context.uriVariables", &vars)
			c.URIVariables = vars
		case m.key.is("traceparent"):
			v := c.TraceParent
			err = jsonString(m.val, "context.traceparent", &v)
			c.TraceParent = v
		case m.key.is("tracestate"):
			v := c.TraceState
			err = jsonString(m.val, "context.tracestate", &v)
			c.TraceState = v
		case m.key.is("task"):
			task := new(abi.TaskContext)
			err = jsonInto(m.val, "context.task", task)
			c.Task = task
		}
	}
	return err
}

// toolCallParams are the params of call_tool as the SDK uses them: the
// arguments and _meta stay JSON until a handler decodes them.
type toolCallParams struct {
	Name           string
	Arguments      json.RawMessage
	Meta           json.RawMessage
	InputResponses map[string]json.RawMessage
	RequestState   string
}

// decodeToolCall decodes req, the request of a call_tool envelope that
// decodeEnvelope has accepted (so valid JSON), into p.
func decodeToolCall(req json.RawMessage, p *toolCallParams) error {
	m, err := objectMembers(req, "request")
	for err == nil && m.next() {
		switch {
		// Decoded into variables of their own, as in decodeContext.
		case m.key.is("name"):
			name := p.Name
			err = jsonString(m.val, "name", &name)
			p.Name = name
		case m.key.is("arguments"):
			p.Arguments = m.val
		case m.key.is("_meta"):
			p.Meta = m.val
		case m.key.is("inputResponses"):
			responses := p.InputResponses
			err = jsonInto(m.val, "inputResponses", &responses)
			p.InputResponses = responses
		case m.key.is("requestState"):
			state := p.RequestState
			err = jsonString(m.val, "requestState", &state)
			p.RequestState = state
		}
	}
	return err
}

func isNull(val []byte) bool { return string(val) == "null" }

// jsonString decodes val, a valid JSON value, into *s; null leaves *s as
// it is, as encoding/json does.
func jsonString(val []byte, what string, s *string) error {
	switch {
	case isNull(val):
		return nil
	case val[0] != '"':
		return errors.New(what + " is not a string")
	case bytes.IndexByte(val, '\\') < 0 && utf8.Valid(val):
		*s = string(val[1 : len(val)-1])
		return nil
	}
	return jsonInto(val, what, s)
}

// jsonInto decodes val with encoding/json, naming what in its error.
func jsonInto(val []byte, what string, v any) error {
	if err := json.Unmarshal(val, v); err != nil {
		return errors.New(what + ": " + err.Error())
	}
	return nil
}

// members iterates over the members of a JSON object that is valid JSON,
// without allocating (in the Wasm guest, a string per key and a closure
// per object were most of what decoding an envelope allocated).
type members struct {
	obj []byte
	i   int // where the next member starts; -1 after the last
	key jsonKey
	val []byte
}

// objectMembers returns an iteration over the members of obj, a valid
// JSON value: null is an object without members; any other value that is
// not an object is an error naming what.
func objectMembers(obj []byte, what string) (members, error) {
	i := skipSpace(obj, 0)
	if i < len(obj) && obj[i] == 'n' {
		return members{i: -1}, nil
	}
	if i >= len(obj) || obj[i] != '{' {
		return members{i: -1}, errors.New(what + " is not a JSON object")
	}
	i = skipSpace(obj, i+1)
	if obj[i] == '}' {
		i = -1
	}
	return members{obj: obj, i: i}, nil
}

// next moves to the next member, its key in m.key and its value's bytes
// in m.val, and reports whether there was one.
func (m *members) next() bool {
	if m.i < 0 {
		return false
	}
	obj, i := m.obj, m.i
	kEnd := skipString(obj, i)
	m.key = jsonKey(obj[i:kEnd])
	i = skipSpace(obj, kEnd)
	i = skipSpace(obj, i+1) // the colon
	vEnd := skipValue(obj, i)
	m.val = obj[i:vEnd]
	i = skipSpace(obj, vEnd)
	if obj[i] == '}' {
		m.i = -1
	} else {
		m.i = skipSpace(obj, i+1) // the comma
	}
	return true
}

// jsonKey is an object key as the JSON text has it, quotes and escapes
// included.
type jsonKey []byte

// is reports whether k matches name, a field name of printable ASCII, as
// encoding/json matches keys to fields (case-insensitively,
// strings.EqualFold): byte by byte when k is plain ASCII, which is what a
// host sends; decoded first otherwise.
func (k jsonKey) is(name string) bool {
	key := k[1 : len(k)-1]
	for _, c := range key {
		if c >= 0x80 || c == '\\' {
			var s string
			if json.Unmarshal(k, &s) != nil {
				return false
			}
			return strings.EqualFold(s, name)
		}
	}
	return asciiEqualFold(name, key)
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value starting at b[i],
// which must be valid JSON.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\n', '\r', '\t':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just past the JSON string starting at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// encodeTextResult encodes res as json.Marshal would when it is a tool
// result of text contents only (what most tools return), without
// reflection; ok is false for any other result.
func encodeTextResult(res callToolJSON) (out []byte, ok bool) {
	r := res.CallToolResult
	if r.StructuredContent != nil || len(r.InputRequests) > 0 || r.RequestState != "" || r.Meta != nil {
		return nil, false
	}
	n := 32
	for i := range res.Content {
		c := &res.Content[i]
		if c.Type != "text" || c.Data != nil || c.MimeType != "" || c.URI != "" || c.Name != "" ||
			c.Title != "" || c.Description != "" || c.Size != nil || c.Resource != nil ||
			c.Annotations != nil || c.Meta != nil {
			return nil, false
		}
		n += len(c.Text) + 32
	}
	out = make([]byte, 0, n)
	out = append(out, '{')
	if r.IsError {
		out = append(out, `"isError":true,`...)
	}
	out = append(out, `"content":[`...)
	for i := range res.Content {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"type":"text"`...)
		if t := res.Content[i].Text; t != "" {
			out = append(out, `,"text":`...)
			out = appendJSONString(out, t)
		}
		out = append(out, '}')
	}
	return append(out, "]}"...), true
}

// appendJSONString appends s as encoding/json encodes a string: as it is
// when it is printable ASCII that needs no escape, through encoding/json
// otherwise.
func appendJSONString(out []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(out, b...)
		}
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
}
