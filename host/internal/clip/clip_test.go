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

// TestPrefix: Prefix of a text's first limit bytes is Text of the text.
func TestPrefix(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("é", 5000), strings.Repeat("x", 1<<20), strings.Repeat("x", 2048), strings.Repeat("x", 2049)} {
		b := []byte(s)
		if got, want := Prefix(b[:min(len(b), 2048)], len(b), 2048), Text(s, 2048); got != want {
			t.Errorf("Prefix(%d bytes) = %q, want %q", len(s), got, want)
		}
	}
	if got := Prefix([]byte("éé"), 1<<20, 2048); !utf8.ValidString(got) {
		t.Errorf("Prefix of too little = %q, not valid UTF-8", got)
	}
}
