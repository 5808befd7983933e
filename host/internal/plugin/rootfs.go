package plugin

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// rootFS is a writable wazero file system confined to one host directory:
// every path operation goes through an os.Root, so "..", absolute paths and
// symbolic links (those already there; a plugin cannot make new ones) cannot
// reach outside it. wazero's own DirFS joins paths to the directory's name
// and follows symlinks wherever they point.
//
// One rootFS is shared by every instance of a plugin; os.Root is safe for
// concurrent use and rootFS holds nothing else.
type rootFS struct {
	experimentalsys.UnimplementedFS
	root *os.Root
}

var _ experimentalsys.FS = (*rootFS)(nil)

// rootPath turns a path as wazero passes it (relative to the mount, "" or
// "/" for the mount itself) into a name for the os.Root. Anything else is
// left to the root to refuse.
func rootPath(p string) string {
	if p == "" || p == "/" {
		return "."
	}
	return p
}

// rootErrno maps an error of an os.Root path operation to an Errno. The
// root's own refusals (a path or symlink that escapes the directory) carry
// no system error number; they become EPERM, as WASI expects of a path
// outside the capability.
func rootErrno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	var sysErr syscall.Errno
	if errno := experimentalsys.UnwrapOSError(err); errno != experimentalsys.EIO || errors.As(err, &sysErr) {
		return errno
	}
	return experimentalsys.EPERM
}

// osOpenFlag converts wazero's open flags to os.OpenFile's. O_DIRECTORY and
// O_NOFOLLOW are checked by OpenFile itself (the os.Root never follows a
// symlink out of the directory either way); O_NONBLOCK and O_RSYNC mean
// nothing for the regular files and directories a root holds.
func osOpenFlag(oflag experimentalsys.Oflag) int {
	var flag int
	switch oflag & (experimentalsys.O_RDWR | experimentalsys.O_WRONLY) {
	case experimentalsys.O_RDWR:
		flag = os.O_RDWR
	case experimentalsys.O_WRONLY:
		flag = os.O_WRONLY
	default:
		flag = os.O_RDONLY
	}
	for _, m := range []struct {
		from experimentalsys.Oflag
		to   int
	}{
		{experimentalsys.O_APPEND, os.O_APPEND},
		{experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL},
		{experimentalsys.O_TRUNC, os.O_TRUNC},
		{experimentalsys.O_SYNC | experimentalsys.O_DSYNC, os.O_SYNC},
	} {
		if oflag&m.from != 0 {
			flag |= m.to
		}
	}
	return flag
}

// OpenFile implements experimentalsys.FS.
func (r *rootFS) OpenFile(p string, oflag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	p = rootPath(p)
	wantDir := oflag&experimentalsys.O_DIRECTORY != 0
	if wantDir {
		if oflag&(experimentalsys.O_RDWR|experimentalsys.O_WRONLY) != 0 {
			return nil, experimentalsys.EISDIR
		}
		// Nothing may be created or truncated on the way to ENOTDIR.
		oflag &^= experimentalsys.O_CREAT | experimentalsys.O_EXCL | experimentalsys.O_TRUNC | experimentalsys.O_APPEND
	}
	createExcl := oflag&(experimentalsys.O_CREAT|experimentalsys.O_EXCL) == experimentalsys.O_CREAT|experimentalsys.O_EXCL
	if oflag&experimentalsys.O_NOFOLLOW != 0 && !createExcl {
		if fi, err := r.root.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	f, err := r.root.OpenFile(p, osOpenFlag(oflag), perm&fs.ModePerm)
	if err != nil {
		return nil, rootErrno(err)
	}
	file := &rootFile[int64]{root: r.root, path: p, flag: oflag, file: f}
	if _, errno := file.Stat(); errno != 0 {
		_ = f.Close()
		return nil, errno
	}
	if wantDir && !file.isDir {
		_ = f.Close()
		return nil, experimentalsys.ENOTDIR
	}
	return file, 0
}

// Lstat implements experimentalsys.FS.
func (r *rootFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Lstat(rootPath(p))
	if err != nil {
		return sys.Stat_t{}, rootErrno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Stat implements experimentalsys.FS.
func (r *rootFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Stat(rootPath(p))
	if err != nil {
		return sys.Stat_t{}, rootErrno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Mkdir implements experimentalsys.FS.
func (r *rootFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	errno := rootErrno(r.root.Mkdir(rootPath(p), perm&fs.ModePerm))
	if errno == experimentalsys.ENOTDIR { // as wazero's DirFS: a parent is missing
		errno = experimentalsys.ENOENT
	}
	return errno
}

// Chmod implements experimentalsys.FS. Only permission bits are set: a
// plugin cannot make a setuid or setgid file.
func (r *rootFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	return rootErrno(r.root.Chmod(rootPath(p), perm&fs.ModePerm))
}

// Rename implements experimentalsys.FS. Both names are resolved in the
// root: nothing can be moved out of the directory, nor into it from outside.
func (r *rootFS) Rename(from, to string) experimentalsys.Errno {
	return rootErrno(r.root.Rename(rootPath(from), rootPath(to)))
}

// Rmdir implements experimentalsys.FS.
func (r *rootFS) Rmdir(p string) experimentalsys.Errno {
	p = rootPath(p)
	fi, err := r.root.Lstat(p)
	if err != nil {
		return rootErrno(err)
	}
	if !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	return rootErrno(r.root.Remove(p))
}

// Unlink implements experimentalsys.FS. A symlink is removed, not its
// target.
func (r *rootFS) Unlink(p string) experimentalsys.Errno {
	p = rootPath(p)
	fi, err := r.root.Lstat(p)
	if err != nil {
		return rootErrno(err)
	}
	if fi.IsDir() {
		return experimentalsys.EISDIR
	}
	return rootErrno(r.root.Remove(p))
}

// Link implements experimentalsys.FS: refused, a plugin does not make links.
func (r *rootFS) Link(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

// Symlink implements experimentalsys.FS: refused. os.Root would create a
// link to anywhere (it checks links only when following them); a plugin
// must not leave one behind for the host's other programs to follow.
func (r *rootFS) Symlink(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

// Readlink implements experimentalsys.FS.
func (r *rootFS) Readlink(p string) (string, experimentalsys.Errno) {
	dst, err := r.root.Readlink(rootPath(p))
	if err != nil {
		return "", rootErrno(err)
	}
	return filepath.ToSlash(dst), 0
}

// Utimens implements experimentalsys.FS.
func (r *rootFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	return rootErrno(r.root.Chtimes(rootPath(p), utimensTime(atim), utimensTime(mtim)))
}

// utimensTime converts a WASI timestamp; UTIME_OMIT becomes the zero time,
// which Chtimes leaves unchanged.
func utimensTime(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// rootFile is a file or directory opened through a rootFS, used as
// rootFile[int64]. It is used by one instance at a time, as wazero's file
// table is.
//
// It is generic only for go vet: its stdmethods check wants any method named
// Seek to have io.Seeker's signature, which sys.File's Seek cannot have; a
// type parameter in place of int64 is not checked.
type rootFile[Offset ~int64] struct {
	experimentalsys.UnimplementedFile
	root   *os.Root
	path   string // name in root, to reopen for SetAppend
	flag   experimentalsys.Oflag
	file   *os.File
	dev    uint64
	ino    sys.Inode
	isDir  bool
	closed bool
}

var _ experimentalsys.File = (*rootFile[int64])(nil)

// Dev implements experimentalsys.File.
func (f *rootFile[O]) Dev() (uint64, experimentalsys.Errno) { return f.dev, 0 }

// Ino implements experimentalsys.File.
func (f *rootFile[O]) Ino() (sys.Inode, experimentalsys.Errno) { return f.ino, 0 }

// IsDir implements experimentalsys.File.
func (f *rootFile[O]) IsDir() (bool, experimentalsys.Errno) { return f.isDir, 0 }

// IsAppend implements experimentalsys.File.
func (f *rootFile[O]) IsAppend() bool { return f.flag&experimentalsys.O_APPEND != 0 }

// SetAppend implements experimentalsys.File. An *os.File's append mode is
// fixed when it is opened, so the file is opened again through the root and
// kept only if it is still the same file.
func (f *rootFile[O]) SetAppend(enable bool) experimentalsys.Errno {
	switch {
	case f.closed:
		return experimentalsys.EBADF
	case f.isDir:
		return experimentalsys.EISDIR
	case enable == f.IsAppend():
		return 0
	}
	flag := f.flag &^ (experimentalsys.O_CREAT | experimentalsys.O_EXCL | experimentalsys.O_TRUNC | experimentalsys.O_APPEND)
	if enable {
		flag |= experimentalsys.O_APPEND
	}
	nf, err := f.root.OpenFile(f.path, osOpenFlag(flag), 0)
	if err != nil {
		return rootErrno(err)
	}
	offset, err := f.file.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = nf.Seek(offset, io.SeekStart)
	}
	if err != nil {
		_ = nf.Close()
		return experimentalsys.UnwrapOSError(err)
	}
	if st, errno := statOf(nf); errno != 0 || st.Dev != f.dev || st.Ino != f.ino {
		_ = nf.Close()
		return experimentalsys.ENOENT // renamed or replaced since it was opened
	}
	_ = f.file.Close()
	f.file, f.flag = nf, flag
	return 0
}

// statOf is fstat on an open file.
func statOf(file *os.File) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := file.Stat()
	if err != nil {
		return sys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	return sys.NewStat_t(fi), 0
}

// Stat implements experimentalsys.File.
func (f *rootFile[O]) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	st, errno := statOf(f.file)
	if errno == 0 {
		f.dev, f.ino, f.isDir = st.Dev, st.Ino, st.Mode.IsDir()
	}
	return st, errno
}

// Read implements experimentalsys.File.
func (f *rootFile[O]) Read(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.Read(buf)
	return n, experimentalsys.UnwrapOSError(err)
}

// Pread implements experimentalsys.File.
func (f *rootFile[O]) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.ReadAt(buf, off)
	return n, experimentalsys.UnwrapOSError(err)
}

// Seek implements experimentalsys.File. Seeking a directory to 0 rewinds
// its listing.
func (f *rootFile[O]) Seek(offset O, whence int) (int64, experimentalsys.Errno) {
	if uint(whence) > io.SeekEnd {
		return 0, experimentalsys.EINVAL
	}
	n, err := f.file.Seek(int64(offset), whence)
	return n, experimentalsys.UnwrapOSError(err)
}

// Readdir implements experimentalsys.File (WASI fd_readdir). Entries carry
// no inode number (0: unknown); wasi-libc stats the entry when it needs one.
func (f *rootFile[O]) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	entries, err := f.file.ReadDir(n)
	if errno := experimentalsys.UnwrapOSError(err); errno != 0 { // io.EOF is 0
		return nil, errno
	}
	dirents := make([]experimentalsys.Dirent, 0, len(entries))
	for _, e := range entries {
		dirents = append(dirents, experimentalsys.Dirent{Name: e.Name(), Type: e.Type()})
	}
	return dirents, 0
}

// Write implements experimentalsys.File.
func (f *rootFile[O]) Write(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.Write(buf)
	return n, experimentalsys.UnwrapOSError(err)
}

// Pwrite implements experimentalsys.File.
func (f *rootFile[O]) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.WriteAt(buf, off)
	return n, experimentalsys.UnwrapOSError(err)
}

// Truncate implements experimentalsys.File.
func (f *rootFile[O]) Truncate(size int64) experimentalsys.Errno {
	switch {
	case size < 0:
		return experimentalsys.EINVAL
	case f.isDir:
		return experimentalsys.EISDIR
	}
	return experimentalsys.UnwrapOSError(f.file.Truncate(size))
}

// Sync implements experimentalsys.File.
func (f *rootFile[O]) Sync() experimentalsys.Errno {
	return experimentalsys.UnwrapOSError(f.file.Sync())
}

// Datasync implements experimentalsys.File.
func (f *rootFile[O]) Datasync() experimentalsys.Errno { return f.Sync() }

// Close implements experimentalsys.File.
func (f *rootFile[O]) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return experimentalsys.UnwrapOSError(f.file.Close())
}
