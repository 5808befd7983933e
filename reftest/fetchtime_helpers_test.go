package reftest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The helpers of the fetch and time tests. Their names start with ft so
// that they never collide with the shared harness (harness_test.go).

// ftCallTimeout bounds one call: it only keeps a hung server from hanging
// the run, it is never a timing assertion.
const ftCallTimeout = 60 * time.Second

// ftPlugin is the absolute path of plugins/NAME/NAME.wasm (make plugins).
func ftPlugin(t *testing.T, name string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	p := filepath.Join(filepath.Dir(filepath.Dir(file)), "plugins", name, name+".wasm")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("plugin %s is not built (make plugins): %v", name, err)
	}
	return p
}

// ftCacheDir is the compilation cache (XDG_CACHE_HOME) of every mcphost
// these tests start, kept between runs as a user's is: a plugin is compiled
// once, not once per test.
var ftCacheDir = filepath.Join(os.TempDir(), "mcphost-reftest-fetchtime-cache")

// ftServerConfig is the [server] table of the tests' configs: serve waits
// for the plugins (a cold compile on a loaded machine takes a while).
const ftServerConfig = "[server]\nstart_wait = \"300s\"\nwatch = false\n\n"

// ftServe starts `$MCPHOST_BIN serve --config <config>` as a desktop client
// does and connects a go-sdk client to it over stdio. The test is skipped
// without MCPHOST_BIN.
func ftServe(t *testing.T, config string) *mcp.ClientSession {
	t.Helper()
	bin := os.Getenv("MCPHOST_BIN")
	if bin == "" {
		t.Skip("MCPHOST_BIN is not set: run `make build plugins`, then MCPHOST_BIN=$PWD/bin/mcphost go test ./reftest/ (or `make reference`)")
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", file)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+ftCacheDir)
	cmd.Stderr = ftLogWriter{t}
	client := mcp.NewClient(&mcp.Implementation{Name: "fetchtime-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), ftCallTimeout)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to mcphost: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// ftLogWriter sends the server's stderr to the test log.
type ftLogWriter struct{ t *testing.T }

func (w ftLogWriter) Write(p []byte) (int, error) {
	w.t.Log("mcphost: " + strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// ftResult is a tools/call outcome: the text of its one text content and
// isError, or the protocol error.
type ftResult struct {
	Text     string
	IsError  bool
	Protocol error
}

// ftCall calls a tool and returns its outcome.
func ftCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) ftResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ftCallTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		return ftResult{Protocol: err}
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s %v: %d content items, want 1", name, args, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: content %T, want text", name, res.Content[0])
	}
	return ftResult{Text: tc.Text, IsError: res.IsError}
}

// ftWant fails the test unless r is a result (not a protocol error) with
// exactly text and isError.
func ftWant(t *testing.T, what string, r ftResult, isError bool, text string) {
	t.Helper()
	if r.Protocol != nil {
		t.Errorf("%s: protocol error %v, want a result", what, r.Protocol)
		return
	}
	if r.IsError != isError || r.Text != text {
		t.Errorf("%s:\n got isError=%v %q\nwant isError=%v %q", what, r.IsError, r.Text, isError, text)
	}
}
