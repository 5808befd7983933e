package bridge

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// shape is what one pass over raw JSON tells before anything decodes it:
// decoding a deeply nested schema into jsonschema-go's types costs time and
// memory in proportion to its size times its depth (each level decodes its
// whole subtree again), and every subschema becomes a ~1 KB struct, so both
// are bounded first, on the bytes.
type shape struct {
	// depth is the deepest nesting of objects and arrays (a scalar is 0,
	// {} is 1).
	depth int
	// schemas bounds how many subschemas the value can decode into: one per
	// object, two per true or false (jsonschema-go decodes false as
	// {"not": {}}).
	schemas int
}

// maxShownPath bounds how much of a JSON Pointer an error quotes.
const maxShownPath = 160

// scanJSON measures data, which encoding/json has already found to be valid
// JSON. When the members of the outermost value nest deeper than maxDepth
// levels (so that data itself nests deeper than maxDepth+1), it stops and
// returns an error naming the JSON Pointer of the first value too deep.
// It never allocates more than its nesting stack.
func scanJSON(data []byte, maxDepth int) (shape, error) {
	type frame struct {
		array     bool
		index     int
		key       []byte // the raw (still escaped) key of the member being read
		expectKey bool
	}
	var sh shape
	stack := make([]frame, 0, 8)
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			j := i + 1
			for j < len(data) && data[j] != '"' {
				if data[j] == '\\' {
					j++
				}
				j++
			}
			if n := len(stack); n > 0 && stack[n-1].expectKey {
				stack[n-1].key = data[i+1 : min(j, len(data))]
				stack[n-1].expectKey = false
			}
			i = j
		case '{', '[':
			if len(stack) > maxDepth {
				var b strings.Builder
				for _, f := range stack {
					b.WriteByte('/')
					if f.array {
						b.WriteString(strconv.Itoa(f.index))
					} else {
						b.WriteString(pointerSegment(unescapeKey(f.key)))
					}
				}
				return sh, at(b.String(), fmt.Errorf("nests more than %d levels deep (at %s)", maxDepth, showPath(b.String())))
			}
			stack = append(stack, frame{array: c == '[', expectKey: c == '{'})
			sh.depth = max(sh.depth, len(stack))
			if c == '{' {
				sh.schemas++
			}
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].array {
					stack[n-1].index++
				} else {
					stack[n-1].expectKey = true
				}
			}
		case 't', 'f': // outside strings, only the literals true and false
			sh.schemas += 2
			for i+1 < len(data) && data[i+1] >= 'a' && data[i+1] <= 'z' {
				i++
			}
		}
	}
	return sh, nil
}

// unescapeKey decodes a raw JSON string's contents.
func unescapeKey(raw []byte) string {
	var s string
	if err := json.Unmarshal([]byte(`"`+string(raw)+`"`), &s); err != nil {
		return string(raw)
	}
	return s
}

// pointerSegment escapes a key for a JSON Pointer (RFC 6901).
func pointerSegment(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// showPath quotes a JSON Pointer for an error message (escaping whatever a
// log should not carry raw), shortened when long.
func showPath(p string) string {
	if p == "" {
		return `"" (the whole value)`
	}
	if len(p) > maxShownPath {
		cut := maxShownPath
		for cut > 0 && p[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		return strconv.QuoteToASCII(p[:cut]) + "…"
	}
	return strconv.QuoteToASCII(p)
}
