package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
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
	return eachMember(input, "input", func(key string, val []byte) error {
		switch {
		case strings.EqualFold(key, "request"):
			in.Request = val
		case strings.EqualFold(key, "context"):
			return eachMember(val, "context", func(key string, val []byte) error {
				c := &in.Context
				switch {
				case strings.EqualFold(key, "id"):
					c.ID = val
				case strings.EqualFold(key, "_meta"):
					c.Meta = val
				case strings.EqualFold(key, "clientCapabilities"):
					c.ClientCapabilities = val
				case strings.EqualFold(key, "uriTemplate"):
					return jsonString(val, "context.uriTemplate", &c.URITemplate)
				case strings.EqualFold(key, "uriVariables"):
					return jsonInto(val, "context.uriVariables", &c.URIVariables)
				}
				return nil
			})
		}
		return nil
	})
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
	return eachMember(req, "request", func(key string, val []byte) error {
		switch {
		case strings.EqualFold(key, "name"):
			return jsonString(val, "name", &p.Name)
		case strings.EqualFold(key, "arguments"):
			p.Arguments = val
		case strings.EqualFold(key, "_meta"):
			p.Meta = val
		case strings.EqualFold(key, "inputResponses"):
			return jsonInto(val, "inputResponses", &p.InputResponses)
		case strings.EqualFold(key, "requestState"):
			return jsonString(val, "requestState", &p.RequestState)
		}
		return nil
	})
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

// eachMember calls fn with each member of obj, a valid JSON value: the key
// unquoted and the value's bytes. null is an object without members; any
// other value that is not an object is an error naming what.
func eachMember(obj []byte, what string, fn func(key string, val []byte) error) error {
	i := skipSpace(obj, 0)
	if i < len(obj) && obj[i] == 'n' {
		return nil
	}
	if i >= len(obj) || obj[i] != '{' {
		return errors.New(what + " is not a JSON object")
	}
	i = skipSpace(obj, i+1)
	if obj[i] == '}' {
		return nil
	}
	for {
		kEnd := skipValue(obj, i)
		key := obj[i:kEnd]
		var k string
		if bytes.IndexByte(key, '\\') < 0 && utf8.Valid(key) {
			k = string(key[1 : len(key)-1])
		} else if err := json.Unmarshal(key, &k); err != nil {
			return err
		}
		i = skipSpace(obj, kEnd)
		i = skipSpace(obj, i+1) // the colon
		vEnd := skipValue(obj, i)
		if err := fn(k, obj[i:vEnd]); err != nil {
			return err
		}
		i = skipSpace(obj, vEnd)
		if obj[i] == '}' {
			return nil
		}
		i = skipSpace(obj, i+1) // the comma
	}
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
