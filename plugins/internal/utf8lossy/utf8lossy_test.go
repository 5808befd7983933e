package utf8lossy

import "testing"

// The cases of the WHATWG encoding standard's and Unicode's "maximal
// subpart" examples, as Node and Python decode them.
func TestDecode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain ✓", "plain ✓"},
		{"a\xe2\x82Ab\xffc\xf0\x9f\x98", "a\ufffdAb\ufffdc\ufffd"},
		{"\xc0\xaf", "\ufffd\ufffd"},                     // overlong lead: each byte
		{"\xe0\x80\xaf", "\ufffd\ufffd\ufffd"},           // E0 needs A0..BF next
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},           // a surrogate
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"}, // past U+10FFFF
		{"\xf0\x9f\x98\x80\xf0\x9f", "😀\ufffd"},          // cut at the end
		{"ok \xff\xfe bad \xe2\x82 end\n", "ok \ufffd\ufffd bad \ufffd end\n"},
	} {
		if got := Decode([]byte(tc.in)); got != tc.want {
			t.Errorf("Decode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
