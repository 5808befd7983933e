//go:build unix

package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFOIsRefusedAtOnce: a FIFO with no writer is refused, naming it,
// instead of blocking the opener; a regular file and a link to one read
// as usual, and a directory is refused too.
func TestFIFOIsRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "entry.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadFile(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "FIFO") {
			t.Fatalf("ReadFile(FIFO) = %v, want ErrNotRegular naming %s", err, fifo)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ReadFile blocked on a FIFO")
	}

	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("text"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{regular, link} {
		if b, err := ReadFile(p); err != nil || string(b) != "text" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
	}
	if _, err := ReadFile(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(directory) = %v, want ErrNotRegular", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want ErrNotExist", err)
	}
}

// TestAppendRefusesAFIFO: the audit log's open neither waits for a FIFO's
// reader nor writes to one.
func TestAppendRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "audit.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := OpenAppend(fifo, 0o600)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
			t.Fatalf("OpenAppend(FIFO) = %v, want ErrNotRegular naming %s", err, fifo)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("OpenAppend blocked on a FIFO")
	}
	f, err := OpenAppend(filepath.Join(dir, "new.log"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
