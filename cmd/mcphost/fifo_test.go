//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

// mkfifo makes a FIFO at path; cleanup opens it for writing and closes
// it, so that a reader left blocked on it (without the fix) ends.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
}

// TestFIFOsAreRefusedNotWaitedOn: a FIFO given as a plugin file (to
// validate, serve, plugin test and plugin inspect) or as the audit log is
// refused at once, naming it, where a plain open would wait for a writer
// (or reader) forever.
func TestFIFOsAreRefusedNotWaitedOn(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "plugin.wasm")
	mkfifo(t, fifo)
	audit := filepath.Join(dir, "audit.log")
	mkfifo(t, audit)
	fifoPlugin := testutil.WriteConfig(t, fmt.Sprintf("[server]\nwatch = false\n[[plugin]]\nname = \"pipe\"\npath = %q\n", fifo))
	fifoAudit := testutil.WriteConfig(t, fmt.Sprintf("[server]\nwatch = false\n[server.audit]\nfile = %q\n[[plugin]]\nname = \"hello\"\npath = %q\n",
		audit, testutil.GoPlugin(t, "plugins/hello")))
	for _, tc := range []struct {
		name string
		args []string
		want string
		// skipped: serve leaves a broken plugin out and serves the rest
		// (here none, until stdin ends).
		skipped bool
	}{
		{"validate", []string{"validate", "--config", fifoPlugin}, fifo, false},
		{"serve", []string{"serve", "--config", fifoPlugin}, fifo, true},
		{"serve with a FIFO audit log", []string{"serve", "--config", fifoAudit}, audit, false},
		{"plugin test", []string{"plugin", "test", fifo}, fifo, false},
		{"plugin inspect", []string{"plugin", "inspect", fifo}, fifo, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				out, stderr string
				err         error
			}
			done := make(chan result, 1)
			go func() {
				out, stderr, err := runCLI(t, tc.args...)
				done <- result{out, stderr, err}
			}()
			select {
			case r := <-done:
				if r.err == nil && !tc.skipped {
					t.Fatalf("mcphost %s succeeded", strings.Join(tc.args, " "))
				}
				all := fmt.Sprint(r.err) + r.out + r.stderr
				if !strings.Contains(all, tc.want) || !strings.Contains(all, "not a regular file") {
					t.Errorf("mcphost %s: %v\nstdout:\n%s\nstderr:\n%s\nwant %q and \"not a regular file\"", strings.Join(tc.args, " "), r.err, r.out, r.stderr, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatalf("mcphost %s waited on a FIFO for a minute", strings.Join(tc.args, " "))
			}
		})
	}
}
