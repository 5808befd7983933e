//go:build wasip1

package main

import (
	"path"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// fdPrestatGet is WASI's fd_prestat_get: buf receives the prestat of fd
// (a tag word, then the length of its directory name).
//
//go:wasmimport wasi_snapshot_preview1 fd_prestat_get
func fdPrestatGet(fd int32, buf unsafe.Pointer) uint32

// fdPrestatDirName is WASI's fd_prestat_dir_name.
//
//go:wasmimport wasi_snapshot_preview1 fd_prestat_dir_name
func fdPrestatDirName(fd int32, name unsafe.Pointer, n uint32) uint32

var (
	preopensOnce sync.Once
	preopenDirs  []string
)

// preopens returns the guest paths of the directories the host preopened
// for this plugin (its allowed_paths grants), in file descriptor order.
func preopens() []string {
	preopensOnce.Do(func() { preopenDirs = listPreopens() })
	return preopenDirs
}

// statTimes is a file's access and status change times (WASI has no birth
// time).
func statTimes(sys any) (atime, ctime time.Time) {
	if st, ok := sys.(*syscall.Stat_t); ok {
		return time.Unix(0, int64(st.Atime)), time.Unix(0, int64(st.Ctime))
	}
	return time.Time{}, time.Time{}
}

// listPreopens asks WASI for the preopened directories.
func listPreopens() []string {
	var dirs []string
	for fd := int32(3); ; fd++ {
		var st [2]uint32
		if errno := fdPrestatGet(fd, unsafe.Pointer(&st[0])); errno != 0 {
			return dirs // EBADF: no more preopens
		}
		if st[0]&0xff != 0 || st[1] == 0 || st[1] > 4096 { // not a directory
			continue
		}
		name := make([]byte, st[1])
		if errno := fdPrestatDirName(fd, unsafe.Pointer(&name[0]), st[1]); errno != 0 {
			continue
		}
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		dirs = append(dirs, path.Clean("/"+string(name)))
	}
}
