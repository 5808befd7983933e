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

// truncateText returns s itself when it is at most max bytes long, else
// its first max bytes (cut back to a UTF-8 boundary) and a short note of
// how long it was.
func truncateText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(truncated; %d bytes)", s[:cut], len(s))
}
