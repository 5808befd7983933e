package main

import (
	"errors"
	"fmt"
	"syscall"
)

// nodeCodes names each errno as Node (libuv) does, with libuv's description,
// so that a failure reads as the reference server's does.
var nodeCodes = map[syscall.Errno][2]string{
	syscall.ENOENT:       {"ENOENT", "no such file or directory"},
	syscall.EEXIST:       {"EEXIST", "file already exists"},
	syscall.ENOTDIR:      {"ENOTDIR", "not a directory"},
	syscall.EISDIR:       {"EISDIR", "illegal operation on a directory"},
	syscall.EACCES:       {"EACCES", "permission denied"},
	syscall.EPERM:        {"EPERM", "operation not permitted"},
	syscall.ENOTEMPTY:    {"ENOTEMPTY", "directory not empty"},
	syscall.EROFS:        {"EROFS", "read-only file system"},
	syscall.ELOOP:        {"ELOOP", "too many symbolic links encountered"},
	syscall.EINVAL:       {"EINVAL", "invalid argument"},
	syscall.EBADF:        {"EBADF", "bad file descriptor"},
	syscall.ENOSYS:       {"ENOSYS", "function not implemented"},
	syscall.EXDEV:        {"EXDEV", "cross-device link not permitted"},
	syscall.ENAMETOOLONG: {"ENAMETOOLONG", "name too long"},
	syscall.EBUSY:        {"EBUSY", "resource busy or locked"},
	syscall.EIO:          {"EIO", "i/o error"},
	syscall.ENOTSUP:      {"ENOTSUP", "operation not supported on socket"},
	syscall.EMFILE:       {"EMFILE", "too many open files"},
	syscall.ENOSPC:       {"ENOSPC", "no space left on device"},
	syscall.EFBIG:        {"EFBIG", "file too large"},
}

// errnoOf is the system error number in err, or 0.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return 0
}

// isErrno reports whether err carries the error number want.
func isErrno(err error, want syscall.Errno) bool { return errnoOf(err) == want }

// nodeError is a file system failure worded as Node's: "CODE: description,
// syscall 'path'" (path left out when empty). An error without an errno
// keeps its own text.
func nodeError(sysc, path string, err error) error {
	errno := errnoOf(err)
	if errno == 0 {
		return err
	}
	code, ok := nodeCodes[errno]
	if !ok {
		code = [2]string{fmt.Sprintf("E%d", int(errno)), errno.Error()}
	}
	if path == "" {
		return &fsError{errno: errno, msg: fmt.Sprintf("%s: %s, %s", code[0], code[1], sysc)}
	}
	return &fsError{errno: errno, msg: fmt.Sprintf("%s: %s, %s '%s'", code[0], code[1], sysc, path)}
}

// nodeError2 is nodeError for a call with two paths (rename).
func nodeError2(sysc, from, to string, err error) error {
	errno := errnoOf(err)
	if errno == 0 {
		return err
	}
	code, ok := nodeCodes[errno]
	if !ok {
		code = [2]string{fmt.Sprintf("E%d", int(errno)), errno.Error()}
	}
	return &fsError{errno: errno, msg: fmt.Sprintf("%s: %s, %s '%s' -> '%s'", code[0], code[1], sysc, from, to)}
}

// fsError is a Node-worded file system error that keeps its errno, so that
// callers can still tell ENOENT from the rest.
type fsError struct {
	errno syscall.Errno
	msg   string
}

func (e *fsError) Error() string { return e.msg }

// Unwrap gives the errno.
func (e *fsError) Unwrap() error { return e.errno }
