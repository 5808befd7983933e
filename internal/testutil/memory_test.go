package testutil

import "testing"

func TestIsRaceRuntimeMapping(t *testing.T) {
	for line, want := range map[string]bool{
		"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n":                      true,
		"7f0000000000-7f0000101000 rw-p 00000000 00:00 0 \n":                      false, // not 1 MiB
		"7f0000000000-7f0000100000 r-xp 00000000 00:00 0 \n":                      false, // compiled code
		"7f0000000000-7f0000100000 rw-p 00000000 08:01 42   /usr/lib/libc.so.6\n": false, // a file
		"garbage\n": false,
	} {
		if got := isRaceRuntimeMapping(line); got != want {
			t.Errorf("isRaceRuntimeMapping(%q) = %v, want %v", line, got, want)
		}
	}
}
