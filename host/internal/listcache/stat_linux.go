//go:build linux

package listcache

import (
	"os"
	"syscall"
	"time"
)

// fileIdentity adds what the system says of fi beyond size and mtime:
// device, inode and the change time, which no user can set back.
func fileIdentity(fi os.FileInfo, k *FileKey) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	k.Dev, k.Inode = uint64(st.Dev), uint64(st.Ino)
	k.ChangeNs = st.Ctim.Nano()
}

// lastWritten is when the file was last written or put where it is: the
// later of its modification and change times. An entry unpacked from a
// container image (made by `mcphost plugin warm`) has the image's
// modification time, however old, and the day it was unpacked as its
// change time.
func lastWritten(fi os.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(st.Ctim.Sec, st.Ctim.Nsec); c.After(t) {
			t = c
		}
	}
	return t
}
