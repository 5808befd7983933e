package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestText: at most the limit, valid UTF-8, unchanged when short or
// clipped already.
func TestText(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("é", 5000), strings.Repeat("x", 1<<20)} {
		got := Text(s, 2048)
		if len(got) > 2048 || !utf8.ValidString(got) || Text(got, 2048) != got || (len(s) <= 2048) != (got == s) {
			t.Errorf("Text(%d bytes) = %d bytes, valid %v", len(s), len(got), utf8.ValidString(got))
		}
	}
}
