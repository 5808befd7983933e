package host

import (
	"os"
	"syscall"
	"time"
)

// lastUse is when the file was last read or written: its access time,
// which Linux keeps at least daily under the default relatime (never
// before its modification time), else its modification time.
func lastUse(info os.FileInfo) time.Time {
	used := info.ModTime()
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		if at := time.Unix(st.Atim.Sec, st.Atim.Nsec); at.After(used) {
			used = at
		}
	}
	return used
}
