package host

import (
	"os"
	"syscall"
	"time"
)

// lastUse is when the file was last read, written or put where it is: the
// latest of its access time (which Linux keeps at least daily under the
// default relatime), its modification time and its change time. The
// change time is what keeps a cache made by `mcphost plugin warm` into a
// container image: unpacking the image sets it to that day, whereas the
// access and modification times come from the image, however old.
func lastUse(info os.FileInfo) time.Time {
	used := info.ModTime()
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		for _, t := range []time.Time{time.Unix(st.Atim.Sec, st.Atim.Nsec), time.Unix(st.Ctim.Sec, st.Ctim.Nsec)} {
			if t.After(used) {
				used = t
			}
		}
	}
	return used
}
