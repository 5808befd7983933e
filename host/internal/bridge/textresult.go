package bridge

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// decodeTextResult decodes out, a plugin's call_tool output, when it is a
// result of text contents only: an object with "content", a non-empty
// array of objects with "type": "text" and an optional string "text", and
// optionally "isError": true or false; members in any order, whitespace
// anywhere JSON allows it. That is what most tools return, and what the Go
// SDK writes for them (sdk/envelope.go, encodeTextResult). ok is false
// for any other output, which decodeResult then decodes: another member or
// content type, a key written with an escape or twice, a null, a string
// with an invalid escape, a lone surrogate or invalid UTF-8, anything that
// is not JSON. When ok, the result is the one decodeResult gives
// (FuzzDecodeTextResult compares them), without go-sdk's decoder, which
// allocates 32 KiB for every value it decodes.
func decodeTextResult(out []byte) (mcp.CallToolResult, bool) {
	d := textDecoder{b: out}
	var res mcp.CallToolResult
	var seenContent, seenIsError bool
	if !d.object(func(key []byte) bool {
		var ok bool
		switch {
		case string(key) == "content" && !seenContent:
			seenContent = true
			res.Content, ok = d.contents()
		case string(key) == "isError" && !seenIsError:
			seenIsError = true
			res.IsError, ok = d.boolean()
		}
		return ok
	}) || !seenContent {
		return mcp.CallToolResult{}, false
	}
	d.space()
	if d.i != len(d.b) {
		return mcp.CallToolResult{}, false
	}
	return res, true
}

// textDecoder reads the one shape decodeTextResult accepts; each method
// reports false at anything else.
type textDecoder struct {
	b []byte
	i int
}

func (d *textDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips whitespace and consumes c.
func (d *textDecoder) next(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads an object, calling member with each key, once the colon
// after it is read, to read the value.
func (d *textDecoder) object(member func(key []byte) bool) bool {
	if !d.next('{') {
		return false
	}
	for {
		key, ok := d.key()
		if !ok || !d.next(':') || !member(key) {
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// key reads a key without escapes (every key decodeTextResult knows is
// plain ASCII; an escaped one is left to the full decoder).
func (d *textDecoder) key() ([]byte, bool) {
	if !d.next('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
		d.i++
	}
	return nil, false
}

func (d *textDecoder) boolean() (bool, bool) {
	d.space()
	switch rest := d.b[d.i:]; {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		d.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		d.i += 5
		return false, true
	}
	return false, false
}

// contents reads a non-empty array of text contents.
func (d *textDecoder) contents() ([]mcp.Content, bool) {
	if !d.next('[') {
		return nil, false
	}
	var cs []mcp.Content
	for {
		c, ok := d.textContent()
		if !ok {
			return nil, false
		}
		cs = append(cs, c)
		if d.next(']') {
			return cs, true
		}
		if !d.next(',') {
			return nil, false
		}
	}
}

// textContent reads {"type": "text"} with an optional "text".
func (d *textDecoder) textContent() (*mcp.TextContent, bool) {
	c := &mcp.TextContent{}
	var seenType, seenText bool
	if !d.object(func(key []byte) bool {
		switch {
		case string(key) == "type" && !seenType:
			seenType = true
			t, ok := d.str()
			return ok && t == "text"
		case string(key) == "text" && !seenText:
			seenText = true
			var ok bool
			c.Text, ok = d.str()
			return ok
		}
		return false
	}) || !seenType {
		return nil, false
	}
	return c, true
}

// str reads a string: valid UTF-8, the escapes JSON defines, and \u
// escapes of valid code points or surrogate pairs. Anything whose decoding
// decoders disagree on (invalid UTF-8, a lone surrogate) is refused.
func (d *textDecoder) str() (string, bool) {
	if !d.next('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		}
		d.i++
	}
	return "", false
}

// escaped finishes reading a string that started at start and has an
// escape at d.i.
func (d *textDecoder) escaped(start int) (string, bool) {
	out := make([]byte, 0, d.i-start+16)
	out = append(out, d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return "", false
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				if d.i+1 >= len(d.b) || d.b[d.i] != '\\' || d.b[d.i+1] != 'u' {
					return "", false
				}
				d.i += 2
				r2, ok := d.hex4()
				if !ok {
					return "", false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", false
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape.
func (d *textDecoder) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}
