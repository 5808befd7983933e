// Package utf8lossy decodes bytes as UTF-8 the way Node's
// Buffer.toString("utf-8") (the WHATWG decoder) and Python's
// bytes.decode("utf-8", "replace") both do: each maximal ill-formed
// subsequence becomes one U+FFFD. Go's own conversion replaces every
// invalid byte instead, so a plugin matching a reference server's text
// needs this.
package utf8lossy

import (
	"strings"
	"unicode/utf8"
)

// Decode returns b as a string, each maximal ill-formed subsequence
// replaced by one U+FFFD.
func Decode(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			sb.Write(b[i : i+size])
			i += size
			continue
		}
		sb.WriteRune(utf8.RuneError)
		i += MaximalSubpart(b[i:])
	}
	return sb.String()
}

// MaximalSubpart is the length of the ill-formed sequence at the start of
// b that is replaced by one U+FFFD (Unicode's "maximal subpart" practice):
// a lead byte and the continuation bytes that could still have completed
// it.
func MaximalSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xbf)
	switch {
	case c >= 0xc2 && c <= 0xdf:
		need = 1
	case c == 0xe0:
		need, lo = 2, 0xa0
	case c >= 0xe1 && c <= 0xec, c == 0xee, c == 0xef:
		need = 2
	case c == 0xed:
		need, hi = 2, 0x9f
	case c == 0xf0:
		need, lo = 3, 0x90
	case c >= 0xf1 && c <= 0xf3:
		need = 3
	case c == 0xf4:
		need, hi = 3, 0x8f
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xbf
	}
	return n
}
