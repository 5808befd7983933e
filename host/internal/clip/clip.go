// Package clip shortens untrusted text (a plugin's error, log line or
// notification) before the host logs it or hands it to a client.
package clip

import (
	"fmt"
	"unicode/utf8"
)

// Text returns s itself when it is at most limit bytes long, else its
// beginning, cut back to a UTF-8 boundary, and a short note of how long it
// was, in at most limit bytes (limit is well over the note's length).
// Clipping again changes nothing.
func Text(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := fmt.Sprintf("…(truncated; %d bytes)", len(s))
	cut := max(0, limit-len(note))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}

// Prefix is Text for a text of which only the beginning is at hand:
// prefix, the first min(total, limit) or more bytes of a text of total
// bytes. The result is what Text returns for the whole text (given less,
// it keeps only whole characters of what it was given).
func Prefix(prefix []byte, total, limit int) string {
	if total <= limit {
		return string(prefix[:min(len(prefix), total)])
	}
	note := fmt.Sprintf("…(truncated; %d bytes)", total)
	cut := max(0, limit-len(note))
	if cut >= len(prefix) { // less than asked for: drop its last character
		cut = len(prefix)
		for cut > 0 && !utf8.RuneStart(prefix[cut-1]) {
			cut--
		}
		cut = max(0, cut-1)
	}
	for cut > 0 && !utf8.RuneStart(prefix[cut]) {
		cut--
	}
	return string(prefix[:cut]) + note
}
