package reftest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fetch plugin against the documented behaviour of mcp-server-fetch
// (src/fetch/src/mcp_server_fetch/server.py), served pages by a loopback
// HTTP server. The expected texts are the reference's f-strings filled in.

const (
	refUAAutonomous = "ModelContextProtocol/1.0 (Autonomous; +https://github.com/modelcontextprotocol/servers)"
	refUAManual     = "ModelContextProtocol/1.0 (User-Specified; +https://github.com/modelcontextprotocol/servers)"
	testRobots      = "# test robots.txt\nUser-agent: *\nDisallow: /private\n\nUser-agent: SomeOtherBot\nDisallow: /\n"
	testArticle     = `<!DOCTYPE html>
<html><head><title>Test page</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article>
<h2>Section one</h2>
<p>This is the <strong>first</strong> paragraph of a test article, long enough for Readability to keep it as the content of the page. It has a <a href="/next">link</a> and some <em>emphasis</em>, and it goes on for a while so that the scoring is not in doubt.</p>
<ul><li>apple</li><li>banana</li></ul>
<p>Second paragraph with snake_case and a*b, again with enough words in it to be counted as a real paragraph of the article text.</p>
</article>
<footer>Copyright nobody</footer>
</body></html>`
)

// refPage is the reference's pagination (server.py, call_tool) of content
// for start_index and max_length, counted in characters.
func refPage(content string, start, maxLength int) string {
	rs := []rune(content)
	if start >= len(rs) {
		return "<error>No more content available.</error>"
	}
	end := min(start+maxLength, len(rs))
	out := string(rs[start:end])
	if end-start == maxLength && len(rs)-end > 0 {
		out += fmt.Sprintf("\n\n<error>Content truncated. Call the fetch tool with a start_index of %d to get more content.</error>", end)
	}
	return out
}

// testSite is the loopback server the fetch tests read, recording the
// User-Agent of every request.
type testSite struct {
	*httptest.Server
	mu     sync.Mutex
	agents map[string][]string // path -> User-Agents seen
	large  string
}

func newTestSite(t *testing.T, robotsStatus int) *testSite {
	s := &testSite{agents: map[string][]string{}}
	var b strings.Builder
	for i := 0; b.Len() < 30000; i++ {
		fmt.Fprintf(&b, "line %d: αβγ — ünïcødé text\n", i)
	}
	s.large = b.String()
	mux := http.NewServeMux()
	text := func(ctype, body string, status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		if robotsStatus != 200 {
			w.WriteHeader(robotsStatus)
			return
		}
		text("text/plain", testRobots, 200)(w, r)
	})
	mux.HandleFunc("/{$}", text("text/html; charset=utf-8", testArticle, 200))
	mux.HandleFunc("/article.html", text("text/html; charset=utf-8", testArticle, 200))
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no Content-Type: the reference takes it as HTML
		fmt.Fprint(w, testArticle)
	})
	mux.HandleFunc("/small.txt", text("text/plain; charset=utf-8", "αβγδεζηθικ", 200))
	mux.HandleFunc("/large.txt", text("text/plain; charset=utf-8", s.large, 200))
	mux.HandleFunc("/data.json", text("application/json", `{"answer": 42}`, 200))
	mux.HandleFunc("/latin1.txt", text("text/plain; charset=iso-8859-1", "caf\xe9", 200))
	mux.HandleFunc("/private/secret.txt", text("text/plain", "secret", 200))
	mux.HandleFunc("/missing", text("text/plain", "no such page", 404))
	mux.HandleFunc("/broken", text("text/plain", "oops", 500))
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/small.txt", http.StatusFound)
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.agents[r.URL.Path] = append(s.agents[r.URL.Path], r.UserAgent())
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *testSite) agentsOf(path string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.agents[path]...)
}

func ftFetchConfig(t *testing.T, config string) string {
	return ftServerConfig + fmt.Sprintf("[[plugin]]\nname = \"fetch\"\npath = %q\nallowed_hosts = [\"127.0.0.1\"]\nallow_private_network = true\n%s\n", pluginPath(t, "fetch"), config)
}

func TestFetchTool(t *testing.T) {
	site := newTestSite(t, 200)
	cs := startMcphost(t, ftFetchConfig(t, ""), nil)
	u := site.URL
	fetch := func(args map[string]any) ftResult { return ftCall(t, cs, "fetch", args) }
	rawPrefix := func(ctype string) string {
		return "Content type " + ctype + " cannot be simplified to markdown, but here is the raw content:\n"
	}

	// Plain text, JSON: raw, with the reference's prefix.
	ftWant(t, "text", fetch(map[string]any{"url": u + "/small.txt"}), false,
		rawPrefix("text/plain; charset=utf-8")+"Contents of "+u+"/small.txt:\nαβγδεζηθικ")
	ftWant(t, "json", fetch(map[string]any{"url": u + "/data.json"}), false,
		rawPrefix("application/json")+"Contents of "+u+"/data.json:\n{\"answer\": 42}")
	ftWant(t, "latin-1", fetch(map[string]any{"url": u + "/latin1.txt"}), false,
		rawPrefix("text/plain; charset=iso-8859-1")+"Contents of "+u+"/latin1.txt:\ncafé")
	// Redirects are followed; the URL shown is the one asked for.
	ftWant(t, "redirect", fetch(map[string]any{"url": u + "/redirect"}), false,
		rawPrefix("text/plain; charset=utf-8")+"Contents of "+u+"/redirect:\nαβγδεζηθικ")

	// Pagination counts characters (code points), not bytes.
	for _, c := range []struct{ start, max int }{{0, 4}, {4, 4}, {8, 4}, {6, 4}, {9, 1}, {10, 5}, {11, 5}, {0, 10}, {0, 11}} {
		ftWant(t, fmt.Sprintf("small start=%d max=%d", c.start, c.max),
			fetch(map[string]any{"url": u + "/small.txt", "start_index": c.start, "max_length": c.max}), false,
			rawPrefix("text/plain; charset=utf-8")+"Contents of "+u+"/small.txt:\n"+refPage("αβγδεζηθικ", c.start, c.max))
	}
	ftWant(t, "small start=0 max=4 literal", fetch(map[string]any{"url": u + "/small.txt", "max_length": 4}), false,
		rawPrefix("text/plain; charset=utf-8")+"Contents of "+u+"/small.txt:\nαβγδ\n\n<error>Content truncated. Call the fetch tool with a start_index of 4 to get more content.</error>")
	ftWant(t, "small past the end literal", fetch(map[string]any{"url": u + "/small.txt", "start_index": 10}), false,
		rawPrefix("text/plain; charset=utf-8")+"Contents of "+u+"/small.txt:\n<error>No more content available.</error>")

	// A large page read in default-sized pages (5000 characters) to its end.
	n := len([]rune(site.large))
	for start := 0; start <= n; start += 5000 {
		ftWant(t, fmt.Sprintf("large start=%d", start), fetch(map[string]any{"url": u + "/large.txt", "start_index": start}), false,
			rawPrefix("text/plain; charset=utf-8")+"Contents of "+u+"/large.txt:\n"+refPage(site.large, start, 5000))
	}
	ftWant(t, "large max=999999", fetch(map[string]any{"url": u + "/large.txt", "max_length": 999999}), false,
		rawPrefix("text/plain; charset=utf-8")+"Contents of "+u+"/large.txt:\n"+site.large)

	// HTML: Readability, then Markdown with ATX headings.
	for _, path := range []string{"/article.html", "/untyped", ""} {
		r := fetch(map[string]any{"url": u + path})
		shown := u + path
		if path == "" {
			shown = u + "/" // pydantic's AnyUrl adds the empty path's "/"
		}
		if r.IsError || !strings.HasPrefix(r.Text, "Contents of "+shown+":\n") {
			t.Errorf("html %q: %+v", path, r)
			continue
		}
		for _, want := range []string{"## Section one", "This is the **first** paragraph", "[link](/next)", "*emphasis*", "* apple\n* banana", "snake\\_case and a\\*b"} {
			if !strings.Contains(r.Text, want) {
				t.Errorf("html %q: no %q in\n%s", path, want, r.Text)
			}
		}
		for _, unwanted := range []string{"<p>", "Copyright nobody", "Home"} {
			if strings.Contains(r.Text, unwanted) {
				t.Errorf("html %q: %q left in\n%s", path, unwanted, r.Text)
			}
		}
	}
	ftWant(t, "html raw", fetch(map[string]any{"url": u + "/article.html", "raw": true}), false,
		rawPrefix("text/html; charset=utf-8")+"Contents of "+u+"/article.html:\n"+refPage(testArticle, 0, 5000))

	// Failures: status >= 400, robots.txt, hosts outside allowed_hosts.
	ftWant(t, "404", fetch(map[string]any{"url": u + "/missing"}), true, "Failed to fetch "+u+"/missing - status code 404")
	ftWant(t, "500", fetch(map[string]any{"url": u + "/broken"}), true, "Failed to fetch "+u+"/broken - status code 500")
	ftWant(t, "robots.txt disallows", fetch(map[string]any{"url": u + "/private/secret.txt"}), true,
		"The sites robots.txt ("+u+"/robots.txt), specifies that autonomous fetching of this page is not allowed, "+
			"<useragent>"+refUAAutonomous+"</useragent>\n<url>"+u+"/private/secret.txt</url><robots>\n"+testRobots+"\n</robots>\n"+
			"The assistant must let the user know that it failed to view the page. The assistant may provide further guidance based on the above information.\n"+
			"The assistant can tell the user that they can try manually fetching the page by using the fetch prompt within their UI.")
	if got := site.agentsOf("/private/secret.txt"); len(got) != 0 {
		t.Errorf("a page robots.txt disallows was requested: %v", got)
	}
	for _, ua := range append(site.agentsOf("/robots.txt"), site.agentsOf("/small.txt")...) {
		if ua != refUAAutonomous {
			t.Errorf("tool request with User-Agent %q, want %q", ua, refUAAutonomous)
		}
	}
	other := strings.Replace(u, "127.0.0.1", "localhost", 1)
	r := fetch(map[string]any{"url": other + "/small.txt"})
	if !r.IsError || !strings.HasPrefix(r.Text, "Failed to fetch robots.txt "+other+"/robots.txt due to a connection issue") || !strings.Contains(r.Text, "allowed_hosts") {
		t.Errorf("host outside allowed_hosts: %+v", r)
	}
	if got := site.agentsOf("/small.txt"); len(got) != 8+2+1 { // the calls above, none for localhost
		t.Logf("requests of /small.txt: %d", len(got))
	}

	// Arguments pydantic refuses.
	r = fetch(map[string]any{"url": "not a url"})
	ftWant(t, "relative url", r, true, "1 validation error for Fetch\nurl\n  Input should be a valid URL, relative URL without a base [type=url_parsing, input_value='not a url', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.12/v/url_parsing")
	for _, args := range []map[string]any{{"url": u, "max_length": 0}, {"url": u, "max_length": 1000000}, {"url": u, "start_index": -1}, {}} {
		if r := fetch(args); r.Protocol == nil && !r.IsError {
			t.Errorf("%v accepted: %+v", args, r)
		}
	}
}

func TestFetchRobotsConfig(t *testing.T) {
	site := newTestSite(t, 200)
	cs := startMcphost(t, ftFetchConfig(t, `config = { ignore_robots_txt = "true", user_agent = "TestAgent/2.0" }`), nil)
	ftWant(t, "ignore_robots_txt", ftCall(t, cs, "fetch", map[string]any{"url": site.URL + "/private/secret.txt"}), false,
		"Content type text/plain cannot be simplified to markdown, but here is the raw content:\nContents of "+site.URL+"/private/secret.txt:\nsecret")
	if got := site.agentsOf("/robots.txt"); len(got) != 0 {
		t.Errorf("robots.txt read although ignore_robots_txt is set: %v", got)
	}
	if got := site.agentsOf("/private/secret.txt"); len(got) != 1 || got[0] != "TestAgent/2.0" {
		t.Errorf("User-Agent %v, want the configured one", got)
	}
	other := strings.Replace(site.URL, "127.0.0.1", "localhost", 1)
	r := ftCall(t, cs, "fetch", map[string]any{"url": other + "/small.txt"})
	if !r.IsError || !strings.HasPrefix(r.Text, "Failed to fetch "+other+"/small.txt: ") || !strings.Contains(r.Text, "allowed_hosts") {
		t.Errorf("host outside allowed_hosts: %+v", r)
	}
}

func TestFetchRobotsForbidden(t *testing.T) {
	for _, status := range []int{401, 403} {
		site := newTestSite(t, status)
		cs := startMcphost(t, ftFetchConfig(t, ""), nil)
		ftWant(t, fmt.Sprint(status), ftCall(t, cs, "fetch", map[string]any{"url": site.URL + "/small.txt"}), true,
			fmt.Sprintf("When fetching robots.txt (%s/robots.txt), received status %d so assuming that autonomous fetching is not allowed, the user can try manually fetching by using the fetch prompt", site.URL, status))
	}
	// Any other 4xx means no robots.txt: everything may be fetched.
	site := newTestSite(t, 404)
	cs := startMcphost(t, ftFetchConfig(t, ""), nil)
	ftWant(t, "404 robots.txt", ftCall(t, cs, "fetch", map[string]any{"url": site.URL + "/private/secret.txt"}), false,
		"Content type text/plain cannot be simplified to markdown, but here is the raw content:\nContents of "+site.URL+"/private/secret.txt:\nsecret")
}

func TestFetchPrompt(t *testing.T) {
	site := newTestSite(t, 200)
	cs := startMcphost(t, ftFetchConfig(t, ""), nil)
	ctx := context.Background()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != "fetch" || list.Prompts[0].Description != "Fetch a URL and extract its contents as markdown" ||
		len(list.Prompts[0].Arguments) != 1 || list.Prompts[0].Arguments[0].Name != "url" || !list.Prompts[0].Arguments[0].Required {
		t.Fatalf("prompts: %+v %v", list, err)
	}
	get := func(url string) *mcp.GetPromptResult {
		t.Helper()
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{"url": url}})
		if err != nil {
			t.Fatalf("get prompt %s: %v", url, err)
		}
		return res
	}
	text := func(res *mcp.GetPromptResult) string {
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
			t.Fatalf("messages %+v", res.Messages)
		}
		return res.Messages[0].Content.(*mcp.TextContent).Text
	}
	// The user's fetch: no robots.txt check, the manual user agent.
	res := get(site.URL + "/private/secret.txt")
	if res.Description != "Contents of "+site.URL+"/private/secret.txt" || text(res) != "Content type text/plain cannot be simplified to markdown, but here is the raw content:\nsecret" {
		t.Errorf("prompt: %+v %q", res, text(res))
	}
	if got := site.agentsOf("/private/secret.txt"); len(got) != 1 || got[0] != refUAManual {
		t.Errorf("prompt User-Agent %v, want %q", got, refUAManual)
	}
	if got := site.agentsOf("/robots.txt"); len(got) != 0 {
		t.Errorf("the prompt read robots.txt: %v", got)
	}
	res = get(site.URL + "/missing")
	if res.Description != "Failed to fetch "+site.URL+"/missing" || text(res) != "Failed to fetch "+site.URL+"/missing - status code 404" {
		t.Errorf("prompt 404: %+v %q", res, text(res))
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{}}); err == nil {
		t.Errorf("prompt without url: no error")
	}
}
