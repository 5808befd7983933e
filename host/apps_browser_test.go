//go:build linux

package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

// appsHarness is a web page's script that is a host of MCP Apps, as a
// chat client is: the TypeScript client calls mcphost (?mcp=) over
// Streamable HTTP, declaring the apps extension; it reads the tool's app
// (its _meta.ui.resourceUri), calls the tool, renders the page in a
// sandboxed iframe under the specification's default CSP, and drives it
// with the MCP Apps SDK's own host side (AppBridge, which forwards the
// page's tools/call to mcphost). Once the page shows the first result it
// presses the page's button, as a person would (the frame shares the
// harness's origin only so that it can), and waits for the page to show
// the new roll. It posts what happened to /result of its own origin.
const appsHarness = `
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";
const report = (r) => fetch("/result", { method: "POST", body: JSON.stringify(r) });
const out = { appCalls: [], appResults: [], contexts: [] };
try {
  const client = new Client({ name: "apps-harness", version: "1.0.0" }, {
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(new URLSearchParams(location.search).get("mcp"))));
  out.serverExtension = client.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/ui"] ?? null;
  const tool = (await client.listTools()).tools.find((t) => t.name === "roll_dice");
  out.resourceUri = getToolUiResourceUri(tool);
  const page = (await client.readResource({ uri: out.resourceUri })).contents[0];
  out.mimeType = page.mimeType;
  out.pageMeta = page._meta ?? null;
  const args = { count: 4, sides: 8 };
  out.first = await client.callTool({ name: "roll_dice", arguments: args });

  // Every tools/call the bridge forwards for the page, and its answer.
  const request = client.request.bind(client);
  client.request = async (req, ...rest) => {
    const res = await request(req, ...rest);
    if (req.method === "tools/call") {
      out.appCalls.push(req.params);
      out.appResults.push(res);
    }
    return res;
  };

  const csp = page._meta?.ui?.csp ?? {};
  const policy = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; " +
    "connect-src " + ((csp.connectDomains ?? []).join(" ") || "'none'") + "; frame-src 'none'; object-src 'none'; base-uri 'self'";
  out.policy = policy;
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts allow-same-origin");
  iframe.srcdoc = page.text.replace("<head>", '<head><meta http-equiv="Content-Security-Policy" content="' + policy + '">');
  document.body.appendChild(iframe);

  const bridge = new AppBridge(client, { name: "apps-harness", version: "1.0.0" },
    { serverTools: {}, logging: {}, updateModelContext: { text: {}, structuredContent: {} } });
  const shown = new Promise((resolve) => {
    bridge.onupdatemodelcontext = async (params) => {
      out.contexts.push(params);
      if (out.contexts.length === 1) {
        out.shownFirst = iframe.contentDocument.body.innerText;
        iframe.contentDocument.getElementById("again").click();
      } else {
        out.shownSecond = iframe.contentDocument.body.innerText;
        resolve();
      }
      return {};
    };
  });
  bridge.oninitialized = async () => {
    out.initialized = true;
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(out.first);
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await shown;
  await report(out);
} catch (e) {
  out.error = String(e) + (e.stack ? "\n" + e.stack : "");
  await report(out);
}
`

// appsResult is what the harness posts.
type appsResult struct {
	ServerExtension json.RawMessage   `json:"serverExtension"`
	ResourceURI     string            `json:"resourceUri"`
	MimeType        string            `json:"mimeType"`
	PageMeta        json.RawMessage   `json:"pageMeta"`
	Policy          string            `json:"policy"`
	Initialized     bool              `json:"initialized"`
	First           diceResult        `json:"first"`
	AppCalls        []json.RawMessage `json:"appCalls"`
	AppResults      []diceResult      `json:"appResults"`
	Contexts        []struct {
		Content           []map[string]any `json:"content"`
		StructuredContent diceRoll         `json:"structuredContent"`
	} `json:"contexts"`
	ShownFirst  string `json:"shownFirst"`
	ShownSecond string `json:"shownSecond"`
	Error       string `json:"error"`
}

type diceRoll struct {
	Dice  string `json:"dice"`
	Rolls []int  `json:"rolls"`
	Total int    `json:"total"`
}

type diceResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent diceRoll `json:"structuredContent"`
	IsError           bool     `json:"isError"`
}

// TestAppInBrowserCallsAToolThroughMCPHost is the test a client of MCP
// Apps would run: headless Chromium, a page hosting apps with the MCP Apps
// SDK's AppBridge (bundled by esbuild from the npm registry), renders
// plugins/dice's app as mcphost serves it; the app shows the tool result
// the host hands it, and its button calls roll_dice through the bridge
// and mcphost, whose new result reaches the app and is shown.
func TestAppInBrowserCallsAToolThroughMCPHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium; skipped in -short mode")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (scripts/ensure-chromium.sh installs it as root)")
	}
	bundle := bundleAppsHarness(t)

	results := make(chan appsResult, 1)
	pages := http.NewServeMux()
	pages.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><script type="module" src="/harness.js"></script></head><body></body></html>`)
	})
	pages.HandleFunc("/harness.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(bundle)
	})
	pages.HandleFunc("/result", func(w http.ResponseWriter, r *http.Request) {
		var res appsResult
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
	origin := fmt.Sprintf("http://127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port)

	h, _ := newHost(t, fmt.Sprintf("[server]\nwatch = false\nallowed_origins = [%q]\n[[plugin]]\nname = \"dice\"\npath = %q\nmemory_mb = 64\n",
		origin, testutil.GoPlugin(t, "plugins/dice")))
	endpoint, _ := serveHTTPFor(t, h, time.Second)

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.Command(chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-extensions", "--user-data-dir="+t.TempDir(), origin+"/?mcp="+endpoint)
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
	var res appsResult
	select {
	case res = <-results:
	case <-ctx.Done():
		t.Fatalf("the harness reported nothing in 90 s; chromium said:\n%s", stderr.String())
	}
	if res.Error != "" {
		t.Fatalf("the harness failed: %s\n%+v", res.Error, res)
	}
	t.Logf("policy: %s\nshown first: %q\nshown second: %q", res.Policy, res.ShownFirst, res.ShownSecond)

	if string(res.ServerExtension) == "null" || len(res.ServerExtension) == 0 {
		t.Error("mcphost does not declare io.modelcontextprotocol/ui")
	}
	if res.ResourceURI != "ui://dice/app.html" || res.MimeType != "text/html;profile=mcp-app" || string(res.PageMeta) != `{"ui":{"prefersBorder":true}}` {
		t.Errorf("the app: uri %q, type %q, _meta %s", res.ResourceURI, res.MimeType, res.PageMeta)
	}
	checkRoll := func(what string, r diceRoll) {
		t.Helper()
		sum := 0
		for _, n := range r.Rolls {
			if n < 1 || n > 8 {
				t.Errorf("%s: a d8 rolled %d", what, n)
			}
			sum += n
		}
		if r.Dice != "4d8" || len(r.Rolls) != 4 || sum != r.Total {
			t.Errorf("%s: %+v, want 4d8", what, r)
		}
	}
	checkRoll("the first call", res.First.StructuredContent)
	if !res.Initialized {
		t.Error("the app never completed ui/initialize")
	}
	// The first result, handed to the app by the bridge, is what it shows.
	if len(res.Contexts) < 2 || !reflect.DeepEqual(res.Contexts[0].StructuredContent, res.First.StructuredContent) {
		t.Fatalf("the app showed %+v, want first %+v then the button's roll", res.Contexts, res.First.StructuredContent)
	}
	if !strings.Contains(res.ShownFirst, fmt.Sprintf("Total: %d", res.First.StructuredContent.Total)) {
		t.Errorf("the page shows %q, not the first total %d", res.ShownFirst, res.First.StructuredContent.Total)
	}
	// The button: one tools/call from the app, through the bridge and
	// mcphost, whose result the app shows.
	if len(res.AppCalls) != 1 || !strings.Contains(string(res.AppCalls[0]), `"name":"roll_dice"`) || !strings.Contains(string(res.AppCalls[0]), `"count":4`) {
		t.Fatalf("the app's tool calls: %s", res.AppCalls)
	}
	second := res.AppResults[0].StructuredContent
	checkRoll("the button's call", second)
	if !reflect.DeepEqual(res.Contexts[1].StructuredContent, second) {
		t.Errorf("after the button the app shows %+v, mcphost answered %+v", res.Contexts[1].StructuredContent, second)
	}
	if !strings.Contains(res.ShownSecond, fmt.Sprintf("Total: %d", second.Total)) {
		t.Errorf("after the button the page shows %q, not the total %d", res.ShownSecond, second.Total)
	}
}

// bundleAppsHarness bundles appsHarness with the MCP Apps SDK and the
// TypeScript client that scripts/ext-apps.sh installs from npm, for the
// browser.
func bundleAppsHarness(t *testing.T) []byte {
	return bundleForBrowser(t, "ext-apps.sh", "the MCP Apps SDK", appsHarness)
}
