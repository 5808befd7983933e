//go:build linux

package listcache

import (
	"os"
	"syscall"
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
