package plugin

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTruncateText: at most the limit, valid UTF-8, unchanged when short
// or truncated already.
func TestTruncateText(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("é", 5000), strings.Repeat("x", 1<<20)} {
		got := truncateText(s, 2048)
		if len(got) > 2048 || !utf8.ValidString(got) || truncateText(got, 2048) != got || (len(s) <= 2048) != (got == s) {
			t.Errorf("truncateText(%d bytes) = %d bytes, valid %v", len(s), len(got), utf8.ValidString(got))
		}
	}
}
