package plugin

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// TestRootFSRefusesPathsOutside calls rootFS directly with what wazero's
// WASI layer already filters out ("..", absolute paths), so the confinement
// does not depend on that layer, and checks that symlinks are not followed
// out and cannot be made.
func TestRootFSRefusesPathsOutside(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "dir"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fsys := &rootFS{root: root}
	create := experimentalsys.O_CREAT | experimentalsys.O_WRONLY | experimentalsys.O_TRUNC

	for _, p := range []string{"../outside/x", "../../x", filepath.Join(outside, "x"), "out/x", "./out/../../outside/x"} {
		f, errno := fsys.OpenFile(p, create, 0o644)
		if errno == 0 {
			f.Close()
		}
		if errno != experimentalsys.EPERM {
			t.Errorf("OpenFile(%q) for writing = %v, want EPERM", p, errno)
		}
		if errno := fsys.Mkdir(p, 0o755); errno != experimentalsys.EPERM {
			t.Errorf("Mkdir(%q) = %v, want EPERM", p, errno)
		}
	}
	for _, to := range []string{"../outside/moved", "out/moved"} {
		if errno := fsys.Rename("out", to); errno != experimentalsys.EPERM {
			t.Errorf("Rename(out, %q) = %v, want EPERM", to, errno)
		}
	}
	if errno := fsys.Symlink("x", "link"); errno != experimentalsys.EPERM {
		t.Errorf("Symlink = %v, want EPERM", errno)
	}
	if errno := fsys.Link("out", "hard"); errno != experimentalsys.EPERM {
		t.Errorf("Link = %v, want EPERM", errno)
	}
	if _, errno := fsys.OpenFile("out", experimentalsys.O_RDONLY|experimentalsys.O_NOFOLLOW, 0); errno != experimentalsys.ELOOP {
		t.Errorf("OpenFile(out, O_NOFOLLOW) = %v, want ELOOP", errno)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("something was written outside: %v", entries)
	}
	if errno := fsys.Unlink("out"); errno != 0 { // the link goes, its target stays
		t.Errorf("Unlink(out) = %v", errno)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the link's target is gone: %v", err)
	}
}

// TestRootFSFiles covers what WASI programs use on a writable mount:
// creating, appending, reading back, listing and rewinding a directory,
// and the errors of Unlink and Rmdir on the wrong kind of entry.
func TestRootFSFiles(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fsys := &rootFS{root: root}

	if errno := fsys.Mkdir("sub", 0o755); errno != 0 {
		t.Fatalf("Mkdir = %v", errno)
	}
	f, errno := fsys.OpenFile("sub/a.txt", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatalf("OpenFile = %v", errno)
	}
	if _, errno := f.Write([]byte("hello")); errno != 0 {
		t.Fatalf("Write = %v", errno)
	}
	if _, errno := f.Seek(0, io.SeekStart); errno != 0 {
		t.Fatalf("Seek = %v", errno)
	}
	if errno := f.SetAppend(true); errno != 0 || !f.IsAppend() {
		t.Fatalf("SetAppend = %v", errno)
	}
	if _, errno := f.Write([]byte(", world")); errno != 0 {
		t.Fatalf("Write after SetAppend = %v", errno)
	}
	buf := make([]byte, 32)
	if n, errno := f.Pread(buf, 0); errno != 0 || string(buf[:n]) != "hello, world" {
		t.Errorf("Pread = %q, %v", buf[:n], errno)
	}
	if errno := f.Close(); errno != 0 {
		t.Errorf("Close = %v", errno)
	}
	if _, errno := f.Write([]byte("x")); errno != experimentalsys.EBADF {
		t.Errorf("Write after Close = %v, want EBADF", errno)
	}

	d, errno := fsys.OpenFile("sub", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	if errno != 0 {
		t.Fatalf("OpenFile(sub, O_DIRECTORY) = %v", errno)
	}
	defer d.Close()
	names := func() []string {
		dirents, errno := d.Readdir(-1)
		if errno != 0 {
			t.Fatalf("Readdir = %v", errno)
		}
		var names []string
		for _, e := range dirents {
			names = append(names, e.Name)
		}
		slices.Sort(names)
		return names
	}
	if got := names(); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("Readdir = %v", got)
	}
	if _, errno := d.Seek(0, io.SeekStart); errno != 0 {
		t.Fatalf("rewind = %v", errno)
	}
	if got := names(); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("Readdir after rewind = %v", got)
	}
	if _, errno := fsys.OpenFile("sub/a.txt", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0); errno != experimentalsys.ENOTDIR {
		t.Errorf("OpenFile(file, O_DIRECTORY) = %v, want ENOTDIR", errno)
	}
	if errno := fsys.Unlink("sub"); errno != experimentalsys.EISDIR {
		t.Errorf("Unlink(dir) = %v, want EISDIR", errno)
	}
	if errno := fsys.Rmdir("sub/a.txt"); errno != experimentalsys.ENOTDIR {
		t.Errorf("Rmdir(file) = %v, want ENOTDIR", errno)
	}
	if errno := fsys.Rename("sub/a.txt", "b.txt"); errno != 0 {
		t.Errorf("Rename = %v", errno)
	}
	if errno := fsys.Unlink("b.txt"); errno != 0 {
		t.Errorf("Unlink = %v", errno)
	}
	if errno := fsys.Rmdir("sub"); errno != 0 {
		t.Errorf("Rmdir = %v", errno)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
