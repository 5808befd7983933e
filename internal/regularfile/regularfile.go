// Package regularfile opens the files a host owns (its description cache,
// lock file, plugin store, plugin modules) without ever blocking on one
// that is not a regular file.
//
// A FIFO, a device or a socket in place of one of these files would make a
// plain os.Open wait for a writer (a FIFO) or read without end (a device):
// the host would hang at start. Open opens with O_NONBLOCK where the
// system has it, so that opening a FIFO returns at once, then checks the
// open file (fstat, so the answer is about the file read, not about a path
// that can be swapped in between) and refuses anything that is not a
// regular file with ErrNotRegular, naming the path.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular is returned (wrapped, with the path and what the file is)
// for a file that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading, refusing with ErrNotRegular anything that is
// not a regular file (symbolic links are followed, as os.Open does).
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, path)
}

// regular returns f, opened from path, when it is a regular file (fstat:
// the answer is about the file opened, not about a path that can be
// swapped in between); anything else it closes and refuses.
func regular(f *os.File, path string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	return f, nil
}

// ReadFile reads the regular file at path whole, as os.ReadFile does,
// refusing with ErrNotRegular anything that is not a regular file.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// kind names what a file that is not a regular file is, for messages.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "file mode " + m.String()
}

// OpenAppend opens (creating it with perm) the file at path for appending,
// refusing with ErrNotRegular anything that is not a regular file: a FIFO
// is neither waited on at open (no reader yet) nor written to, where a
// slow reader would hold every write.
func OpenAppend(path string, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|nonBlock, perm)
	if err != nil {
		// A FIFO without a reader fails to open (ENXIO): say what it is.
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
		}
		return nil, err
	}
	return regular(f, path)
}
