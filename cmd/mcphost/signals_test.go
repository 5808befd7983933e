package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// lineLog collects a subprocess's stderr and lets a test wait for a line.
type lineLog struct {
	mu    sync.Mutex
	lines []string
	added chan struct{}
}

func newLineLog(r io.Reader) *lineLog {
	l := &lineLog{added: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, sc.Text())
			l.mu.Unlock()
			select {
			case l.added <- struct{}{}:
			default:
			}
		}
	}()
	return l
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// wait returns the first submatch of re in a line, waiting up to 20 s.
func (l *lineLog) wait(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if m := re.FindStringSubmatch(line); m != nil {
				l.mu.Unlock()
				if len(m) > 1 {
					return m[1]
				}
				return m[0]
			}
		}
		l.mu.Unlock()
		select {
		case <-l.added:
		case <-deadline:
			t.Fatalf("no line matching %q; stderr:\n%s", re, l.String())
		}
	}
}

// startServeHTTP runs the test binary as `mcphost serve --config cfgPath
// --http 127.0.0.1:0` and waits until it logs its MCP endpoint. It returns
// the process, its stderr as lines, a channel that gets what cmd.Wait
// returns, and the endpoint's URL. The process is killed when the test
// ends, and its stderr logged if the test failed.
func startServeHTTP(t *testing.T, cfgPath string) (cmd *exec.Cmd, logs *lineLog, exited <-chan error, url string) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "serve", "--config", cfgPath, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "MCPHOST_TEST_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs = newLineLog(stderr)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("mcphost stderr:\n%s", logs.String())
		}
	})
	return cmd, logs, done, logs.wait(t, regexp.MustCompile(`MCP endpoint (http://\S+)`))
}

// TestServeHTTPReloadsOnSIGHUPAndStopsOnSIGTERM runs the real binary: it
// serves HTTP on a free port, reloads a changed config on SIGHUP, and on
// SIGTERM stops and exits 0.
func TestServeHTTPReloadsOnSIGHUPAndStopsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	hello := testutil.GoPlugin(t, "plugins/hello")
	cfgPath := filepath.Join(dir, "mcphost.toml")
	writeCfg := func(prefix string) {
		os.WriteFile(cfgPath, []byte(fmt.Sprintf("[server]\nwatch = false\n[[plugin]]\nname = \"hello\"\npath = %q\nprefix = %q\n", hello, prefix)), 0o644)
	}
	writeCfg("")
	cmd, logs, exited, url := startServeHTTP(t, cfgPath)
	client := mcp.NewClient(&mcp.Implementation{Name: "signals-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string) error {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
		return err
	}
	if err := call("echo"); err != nil {
		t.Fatalf("echo: %v", err)
	}

	// SIGHUP after changing the config: the tools get the new prefix.
	writeCfg("hi_")
	cmd.Process.Signal(syscall.SIGHUP)
	logs.wait(t, regexp.MustCompile(`SIGHUP: reloading`))
	deadline := time.Now().Add(10 * time.Second)
	for call("hi_echo") != nil {
		if time.Now().After(deadline) {
			t.Fatal("hi_echo not callable after SIGHUP")
		}
		time.Sleep(50 * time.Millisecond)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("mcphost exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("mcphost did not exit after SIGTERM")
	}
	logs.wait(t, regexp.MustCompile(`stopped`))
}
