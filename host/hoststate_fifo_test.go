//go:build unix

package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// fifoConfig serves plugin.wasm with its own compilation and description
// cache in cache/.
const fifoConfig = `
[server]
watch = false
cache_dir = "cache"
lock_file = "off"

[[plugin]]
name = "p"
path = "plugin.wasm"
`

// plantFIFOs replaces each file matching pattern with a FIFO and returns
// their paths; cleanup opens each for writing and closes it, so that a
// reader the test left blocked on one (without the fix) ends.
func plantFIFOs(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if w, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		})
	}
	return files
}

// TestFIFOsInTheCachesDoNotHangTheStart: with a FIFO in place of every
// entry of the description cache and of the compilation cache, a host
// starts and serves (each entry a miss, logged with its path) instead of
// waiting for a writer that never comes.
func TestFIFOsInTheCachesDoNotHangTheStart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), testutil.WAT(t, testutil.WATPlugin{
		Tools: `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`,
	}.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcphost.toml"), []byte(fifoConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	first := startIn(t, dir)
	callText(t, first.session, "a", map[string]any{})
	first.close()

	cache := filepath.Join(dir, "cache")
	lists := plantFIFOs(t, filepath.Join(cache, "lists", "*.json"))
	compiled := plantFIFOs(t, filepath.Join(cache, "*", "wazero-*", "*"))
	if len(lists) == 0 || len(compiled) == 0 {
		t.Fatalf("the first start cached %d descriptions and %d compiled modules; want some of each", len(lists), len(compiled))
	}

	cfg, err := host.LoadConfig(filepath.Join(dir, "mcphost.toml"))
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	type started struct {
		h   *host.Host
		err error
	}
	done := make(chan started, 1)
	began := time.Now()
	go func() {
		h, err := host.New(context.WithoutCancel(t.Context()), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: log})})
		done <- started{h, err}
	}()
	var s started
	select {
	case s = <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the host did not start within a minute with FIFOs in its caches; log:\n%s", log)
	}
	if s.err != nil {
		t.Fatalf("host.New: %v", s.err)
	}
	t.Cleanup(func() { s.h.Close(context.Background()) })
	cs := connect(t, s.h, nil, "2025-11-25")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("call after the start: %v", err)
	}
	t.Logf("started and served in %v", time.Since(began))
	for _, f := range append(lists, compiled...) {
		if !strings.Contains(log.String(), f) {
			t.Errorf("the log does not name %s", f)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", log)
	}
}
