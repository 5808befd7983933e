//go:build linux

package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/mcphost/mcphost/internal/testutil"
)

// browserApp is a web page's script: the TypeScript SDK's client over
// Streamable HTTP, from the browser, to the server named in ?mcp=; it
// posts what it got (or the error) to /result of its own origin.
const browserApp = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const report = (r) => fetch("/result", { method: "POST", body: JSON.stringify(r) });
try {
  const transport = new StreamableHTTPClientTransport(new URL(new URLSearchParams(location.search).get("mcp")));
  const client = new Client({ name: "browser-test", version: "1.0.0" });
  await client.connect(transport);
  const tools = await client.listTools();
  const res = await client.callTool({ name: "echo", arguments: { text: "from the browser" } });
  await report({ tools: tools.tools.map((t) => t.name), text: res.content[0].text, session: transport.sessionId ?? "" });
  await transport.terminateSession();
} catch (e) {
  await report({ error: String(e) });
}
`

// browserResult is what the page posts.
type browserResult struct {
	Tools   []string `json:"tools"`
	Text    string   `json:"text"`
	Session string   `json:"session"`
	Error   string   `json:"error"`
}

// TestBrowserClientFromAnAllowedOrigin: headless Chromium loads a page
// whose script is the TypeScript SDK's client (bundled by esbuild) and
// calls mcphost from the browser: from an origin in allowed_origins it
// lists the tools, calls echo and reads the session id (an exposed
// header); the same page from another origin (localhost instead of
// 127.0.0.1) is refused, and the browser reports the failure.
func TestBrowserClientFromAnAllowedOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium; skipped in -short mode")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (scripts/ensure-chromium.sh installs it as root)")
	}
	bundle := bundleBrowserApp(t)

	// The page's server: one port, two origins (127.0.0.1 and localhost).
	results := make(chan browserResult, 1)
	pages := http.NewServeMux()
	pages.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><script type="module" src="/app.js"></script></head><body>browser test</body></html>`)
	})
	pages.HandleFunc("/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(bundle)
	})
	pages.HandleFunc("/result", func(w http.ResponseWriter, r *http.Request) {
		var res browserResult
		if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
			res.Error = "undecodable result: " + err.Error()
		}
		select {
		case results <- res:
		default:
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pageServer := &http.Server{Handler: pages}
	go pageServer.Serve(ln)
	t.Cleanup(func() { pageServer.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	allowed := fmt.Sprintf("http://127.0.0.1:%d", port)

	h, logs := newHost(t, fmt.Sprintf("[server]\nwatch = false\nallowed_origins = [%q]\n[[plugin]]\nname = \"hello\"\npath = %q\n",
		allowed, testutil.GoPlugin(t, "plugins/hello")))
	endpoint, _ := serveHTTPFor(t, h, time.Second)

	open := func(pageOrigin string) browserResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		cmd := exec.Command(chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--disable-extensions", "--user-data-dir="+t.TempDir(), pageOrigin+"/?mcp="+endpoint)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers end with it
		if err := cmd.Start(); err != nil {
			t.Fatalf("start chromium: %v", err)
		}
		defer func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}()
		select {
		case res := <-results:
			return res
		case <-ctx.Done():
			t.Fatalf("the page at %s reported nothing in 60 s; chromium said:\n%s", pageOrigin, stderr.String())
			return browserResult{}
		}
	}

	res := open(allowed)
	t.Logf("from %s: %+v", allowed, res)
	if res.Error != "" || res.Text != "from the browser" || !strings.Contains(strings.Join(res.Tools, ","), "echo") || res.Session == "" {
		t.Errorf("from the allowed origin %s: %+v", allowed, res)
	}
	foreign := fmt.Sprintf("http://localhost:%d", port)
	res = open(foreign)
	t.Logf("from %s: %+v", foreign, res)
	if res.Error == "" || res.Text != "" {
		t.Errorf("from the foreign origin %s the page got %+v, want a failure", foreign, res)
	}
	if !strings.Contains(logs.String(), "origin="+foreign) {
		t.Errorf("the refused origin %s is not in the log:\n%s", foreign, logs.String())
	}
}

// bundleBrowserApp bundles browserApp with the TypeScript SDK that
// scripts/reference-servers.sh installs from npm (the reference servers
// depend on it), for the browser.
func bundleBrowserApp(t *testing.T) []byte {
	return bundleForBrowser(t, "reference-servers.sh", "the TypeScript SDK", browserApp)
}

// bundleForBrowser bundles source (an ES module) for the browser with the
// npm packages that scripts/<installer> --install puts in the directory
// it prints ("dir: …"); the test is skipped, naming what, when npm cannot
// install them.
func bundleForBrowser(t *testing.T, installer, what, source string) []byte {
	t.Helper()
	cmd := exec.Command(filepath.Join(testutil.RepoRoot(t), "scripts", installer), "--install")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("%s could not be installed from npm (scripts/%s): %v", what, installer, err)
	}
	var dir string
	for _, line := range strings.Split(string(out), "\n") {
		if d, ok := strings.CutPrefix(line, "dir: "); ok {
			dir = strings.TrimSpace(d)
		}
	}
	if dir == "" {
		t.Fatalf("scripts/%s printed no dir:\n%s", installer, out)
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "page.js"), []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	res := api.Build(api.BuildOptions{
		AbsWorkingDir: src, EntryPoints: []string{"page.js"}, Bundle: true, Write: false,
		Format: api.FormatESModule, Platform: api.PlatformBrowser, Target: api.ES2022,
		NodePaths: []string{filepath.Join(dir, "node_modules")}, LogLevel: api.LogLevelSilent,
	})
	if len(res.Errors) > 0 || len(res.OutputFiles) != 1 {
		t.Fatalf("bundle the page's script with %s: %+v", what, res.Errors)
	}
	return res.OutputFiles[0].Contents
}
