package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestServeStopsWhileCompiling: SIGTERM (the context of run ending) while
// serve is still compiling its plugins stops the compiles and the start,
// instead of being ignored until every plugin has compiled. The plugin
// compiles from an empty cache, which takes seconds.
func TestServeStopsWhileCompiling(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcphost.toml")
	text := "[server]\nlock_file = \"off\"\nwatch = false\ncache_dir = \"" + filepath.Join(dir, "cache") + "\"\n" +
		"[[plugin]]\nname = \"everything\"\npath = \"" + testutil.GoPlugin(t, "plugins/everything") + "\"\n"
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	begin := time.Now()
	err := run(ctx, []string{"serve", "--config", cfg}, strings.NewReader(""), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "stopped while loading plugins") {
		t.Fatalf("serve: %v, want it stopped while loading\n%s", err, errb.String())
	}
	t.Logf("serve returned %v after it began (stopped after 200ms): %v", time.Since(begin), err)
}
