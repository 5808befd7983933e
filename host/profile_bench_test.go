package host_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// BenchmarkProfileToolsList lists the tools of a 30-tool profile (3 of
// the 100 plugins of hundredPluginsConfig, 1,000 tools in all) through a
// go-sdk client connected in memory to the profile's server; the whole
// host's list (/mcp, 10 pages of 100) runs in the same benchmark as the
// baseline. One op is one whole list. Goal (issue 31): p50 < 1 ms for the
// profile.
func BenchmarkProfileToolsList(b *testing.B) {
	cfg := hundredPluginsConfig(b, benchCacheDir(b)) + "[[profile]]\nname = \"thirty\"\ntools = [\"p0[0-2]_*\"]\n"
	h := newBenchHost(b, cfg)
	for _, tc := range []struct {
		name   string
		server *mcp.Server
		want   int
	}{{"profile-30", h.ProfileServer("thirty"), 30}, {"all-1000", h.Server(), 1000}} {
		b.Run(tc.name, func(b *testing.B) {
			cs := connectInMemory(b, tc.server, "2025-11-25")
			ctx := context.Background()
			var lists []time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t := time.Now()
				n, cursor := 0, ""
				for {
					res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
					if err != nil {
						b.Fatal(err)
					}
					n += len(res.Tools)
					if cursor = res.NextCursor; cursor == "" {
						break
					}
				}
				lists = append(lists, time.Since(t))
				if n != tc.want {
					b.Fatalf("listed %d tools, want %d", n, tc.want)
				}
			}
			b.StopTimer()
			testutil.ReportPercentiles(b, lists, time.Millisecond/1000, "list-µs")
		})
	}
}

// BenchmarkProfileMemory reports what one more profile costs: the Go heap
// in use after a reload that adds 100 profiles of 30 tools each (renamed:
// each holds its own copies of the tool definitions' top level) to the
// 100-plugin host, less before, over 100. A profile holds an mcp.Server,
// its registrations and its view of the catalog; sessions are not
// counted. Run with -benchtime 1x. Goal (issue 31): < 1 MiB.
func BenchmarkProfileMemory(b *testing.B) {
	const profiles = 100
	base := hundredPluginsConfig(b, benchCacheDir(b))
	path := testutil.WriteConfig(b, base)
	h := newBenchHostAt(b, path)
	heap := func() uint64 {
		var m runtime.MemStats
		for range 3 {
			runtime.GC()
		}
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	var more strings.Builder
	for i := range profiles {
		first := (i * 3) % 100
		fmt.Fprintf(&more, "[[profile]]\nname = \"prof%03d\"\ntools = [\"p%02d_*\", \"p%02d_*\", \"p%02d_*\"]\nprefix = \"x%d_\"\n", i, first, (first+1)%100, (first+2)%100, i)
	}
	for range b.N {
		if err := h.Reload(context.Background()); err != nil { // same config: settles the catalog
			b.Fatal(err)
		}
		before := heap()
		if err := os.WriteFile(path, []byte(base+more.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := h.Reload(context.Background()); err != nil {
			b.Fatal(err)
		}
		after := heap()
		if n := len(h.ProfileNames()); n != profiles {
			b.Fatalf("%d profiles served, want %d", n, profiles)
		}
		b.ReportMetric(float64(int64(after)-int64(before))/profiles/1024, "KiB/profile")
		if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := h.Reload(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// searchBenchConfig is a host of plugins WAT plugins of perPlugin tools
// each (tiny modules: quick to build and load; names, descriptions and a
// one-property schema vary per tool), with the search profile "all" over
// every tool.
func searchBenchConfig(b *testing.B, plugins, perPlugin int) string {
	verbs := []string{"get", "list", "create", "update", "delete", "search", "send", "read", "archive", "sync"}
	nouns := []string{"issue", "file", "email", "calendar_event", "repository", "ticket", "invoice", "user", "channel", "document", "weather", "build", "deployment", "metric", "alert", "bucket", "comment", "label", "project", "release"}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "[server]\nwatch = false\ncache_dir = %q\n", benchCacheDir(b))
	for i := range plugins {
		tools := make([]string, 0, perPlugin)
		for j := range perPlugin {
			verb, noun := verbs[j%len(verbs)], nouns[(j/len(verbs)+i)%len(nouns)]
			tools = append(tools, fmt.Sprintf(`{"name":"%s_%s_%d","description":"%s a %s of service %d (variant %d). Use it when the user asks to %s one.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"The %s's id."}},"required":["id"]}}`,
				verb, noun, j, verb, noun, i, j, verb, noun))
		}
		p := testutil.WATPlugin{Tools: `{"tools":[` + strings.Join(tools, ",") + `]}`}
		fmt.Fprintf(&cfg, "[[plugin]]\nname = \"s%03d\"\npath = %q\nprefix = \"s%03d_\"\n", i, p.Build(b), i)
	}
	cfg.WriteString("[[profile]]\nname = \"all\"\ntools = [\"*\"]\nsearch = true\n")
	return cfg.String()
}

// BenchmarkSearchTools calls search_tools (a three-word query, limit 10)
// through a go-sdk client connected in memory to a search profile over
// 10,000 tools (100 WAT plugins of 100 tools), and, as the baseline in the
// same run, over 100 tools (one plugin). One op is one call; first-ms is
// the first search, which builds the index. Goal (issue 31): p50 < 2 ms
// over 10,000 tools.
func BenchmarkSearchTools(b *testing.B) {
	for _, size := range []struct {
		name               string
		plugins, perPlugin int
	}{{"tools-10000", 100, 100}, {"tools-100", 1, 100}} {
		b.Run(size.name, func(b *testing.B) {
			h := newBenchHost(b, searchBenchConfig(b, size.plugins, size.perPlugin))
			cs := connectInMemory(b, h.ProfileServer("all"), "2025-11-25")
			ctx := context.Background()
			queries := []string{"create calendar event", "send email to user", "list open issues", "weather", "delete bucket release"}
			call := func(q string) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": q, "limit": 10}})
				if err != nil || res.IsError {
					b.Fatalf("search_tools %q: %v %+v", q, err, res)
				}
			}
			began := time.Now()
			call(queries[0])
			first := time.Since(began)
			var took []time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				t := time.Now()
				call(queries[i%len(queries)])
				took = append(took, time.Since(t))
			}
			b.StopTimer()
			testutil.ReportPercentiles(b, took, time.Millisecond/1000, "search-µs")
			b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
		})
	}
}

// BenchmarkSearchProfileMemory reports what one more search profile costs
// on the 100-plugin host (1,000 tools): the Go heap in use after a reload
// that adds 10 search profiles over every tool (each prefixed: its own
// view) and one search through each (which builds its index), less
// before, over 10. Run with -benchtime 1x. Goal (issue 31): < 1 MiB.
func BenchmarkSearchProfileMemory(b *testing.B) {
	const profiles = 10
	base := hundredPluginsConfig(b, benchCacheDir(b))
	path := testutil.WriteConfig(b, base)
	h := newBenchHostAt(b, path)
	heap := func() uint64 {
		var m runtime.MemStats
		for range 3 {
			runtime.GC()
		}
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	var more strings.Builder
	for i := range profiles {
		fmt.Fprintf(&more, "[[profile]]\nname = \"find%02d\"\ntools = [\"*\"]\nprefix = \"f%d_\"\nsearch = true\n", i, i)
	}
	for range b.N {
		if err := h.Reload(context.Background()); err != nil {
			b.Fatal(err)
		}
		before := heap()
		if err := os.WriteFile(path, []byte(base+more.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := h.Reload(context.Background()); err != nil {
			b.Fatal(err)
		}
		for i := range profiles {
			cs := connectInMemory(b, h.ProfileServer(fmt.Sprintf("find%02d", i)), "2025-11-25")
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "tool 3"}})
			if err != nil || res.IsError {
				b.Fatalf("search_tools: %v %+v", err, res)
			}
			cs.Close()
		}
		after := heap()
		b.ReportMetric(float64(int64(after)-int64(before))/profiles/1024, "KiB/profile")
		if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := h.Reload(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProfileToolsListHTTP is BenchmarkProfileToolsList as a server
// sees it: the 30-tool profile's tools/list over Streamable HTTP (a
// stateful 2025-11-25 session at /mcp/thirty, one request in flight)
// through a plain HTTP client that reads the whole response and decodes
// nothing, so that the figure is mcphost's and the HTTP round trip's, not
// a client SDK's. The whole host's first page (/mcp, 100 tools) runs in
// the same benchmark as the baseline.
func BenchmarkProfileToolsListHTTP(b *testing.B) {
	cfg := hundredPluginsConfig(b, benchCacheDir(b)) + "[[profile]]\nname = \"thirty\"\ntools = [\"p0[0-2]_*\"]\n"
	h := newBenchHost(b, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h.HTTPHandler(ln.Addr().String())}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	post := func(url, session, body string) (string, []byte) {
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode/100 != 2 {
			b.Fatalf("POST %s: %d %v\n%s", url, resp.StatusCode, err, out)
		}
		return resp.Header.Get("Mcp-Session-Id"), out
	}
	for _, tc := range []struct {
		name, path string
		want       int // tool names in the response
	}{{"profile-30", "/mcp/thirty", 30}, {"all-first-page-100", "/mcp", 100}} {
		b.Run(tc.name, func(b *testing.B) {
			url := "http://" + ln.Addr().String() + tc.path
			session, _ := post(url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
			post(url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
			if _, out := post(url, session, list); strings.Count(string(out), `"inputSchema"`) != tc.want {
				b.Fatalf("tools/list of %s has %d tools, want %d:\n%.300s", tc.path, strings.Count(string(out), `"inputSchema"`), tc.want, out)
			}
			lists := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t := time.Now()
				post(url, session, list)
				lists = append(lists, time.Since(t))
			}
			b.StopTimer()
			testutil.ReportPercentiles(b, lists, time.Millisecond/1000, "list-µs")
		})
	}
}
