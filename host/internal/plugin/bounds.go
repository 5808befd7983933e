package plugin

import (
	"fmt"
	"unicode/utf8"
)

// maxErrorTextBytes bounds the text of an error a plugin reports (its
// message, and its data) on the way to a client. The error as a whole is
// first capped at max_output_kb like any output; this keeps what a client
// and a model read, and what the log and the breaker keep, short.
const maxErrorTextBytes = 8 << 10

// truncateText returns s itself when it is at most limit bytes long, else
// its beginning, cut back to a UTF-8 boundary, and a short note of how long
// it was, in at most limit bytes (limit is well over the note's length).
// Truncating again changes nothing.
func truncateText(s string, limit int) string {
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
