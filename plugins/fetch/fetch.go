package main

import (
	"github.com/mcphost/mcphost/plugins/internal/utf8lossy"

	"fmt"
	"mime"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/mcphost/mcphost/sdk"
	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
)

// fetchError is a failure the reference reports as an McpError: its text
// is the whole message.
type fetchError struct{ msg string }

func (e *fetchError) Error() string { return e.msg }

func failf(format string, args ...any) error { return &fetchError{fmt.Sprintf(format, args...)} }

// get sends a GET with the user agent through the host.
func get(u, userAgent string) (*sdk.HTTPResponse, error) {
	return sdk.HTTP(sdk.HTTPRequest{Method: "GET", URL: u, Headers: map[string]string{"User-Agent": userAgent}})
}

// robotsURL is the robots.txt of u's scheme and authority.
func robotsURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "/robots.txt"
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return scheme + "://" + rest + "/robots.txt"
}

// checkRobots is the reference's check_may_autonomously_fetch_url.
func checkRobots(u, userAgent string) error {
	robotsTxtURL := robotsURL(u)
	resp, err := get(robotsTxtURL, userAgent)
	if err != nil {
		// The reference says only this; the host's reason is added so the
		// cause (e.g. a host outside allowed_hosts) is named.
		return failf("Failed to fetch robots.txt %s due to a connection issue (%v)", robotsTxtURL, err)
	}
	if resp.Status == 401 || resp.Status == 403 {
		return failf("When fetching robots.txt (%s), received status %d so assuming that autonomous fetching is not allowed, the user can try manually fetching by using the fetch prompt", robotsTxtURL, resp.Status)
	}
	if resp.Status >= 400 && resp.Status < 500 {
		return nil
	}
	robotTxt := decodeBody(resp)
	var kept []string
	for _, line := range pySplitlines(robotTxt) {
		if !strings.HasPrefix(pyStrip(line), "#") {
			kept = append(kept, line)
		}
	}
	if !parseRobots(strings.Join(kept, "\n")).canFetch(u, userAgent) {
		return failf("The sites robots.txt (%s), specifies that autonomous fetching of this page is not allowed, "+
			"<useragent>%s</useragent>\n"+
			"<url>%s</url>"+
			"<robots>\n%s\n</robots>\n"+
			"The assistant must let the user know that it failed to view the page. The assistant may provide further guidance based on the above information.\n"+
			"The assistant can tell the user that they can try manually fetching the page by using the fetch prompt within their UI.",
			robotsTxtURL, userAgent, u, robotTxt)
	}
	return nil
}

// fetchURL is the reference's fetch_url: the page as Markdown (or raw),
// and the prefix that says when it is raw.
func fetchURL(u, userAgent string, forceRaw bool) (content, prefix string, err error) {
	resp, err := get(u, userAgent)
	if err != nil {
		return "", "", failf("Failed to fetch %s: %v", u, err)
	}
	if resp.Status >= 400 {
		return "", "", failf("Failed to fetch %s - status code %d", u, resp.Status)
	}
	pageRaw := decodeBody(resp)
	contentType := header(resp, "Content-Type")
	head := pageRaw
	if rs := []rune(pageRaw); len(rs) > 100 {
		head = string(rs[:100])
	}
	isHTML := strings.Contains(head, "<html") || strings.Contains(contentType, "text/html") || contentType == ""
	if isHTML && !forceRaw {
		return extractContentFromHTML(pageRaw), "", nil
	}
	return pageRaw, fmt.Sprintf("Content type %s cannot be simplified to markdown, but here is the raw content:\n", contentType), nil
}

func header(resp *sdk.HTTPResponse, name string) string {
	for k, v := range resp.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// extractContentFromHTML is the reference's extract_content_from_html:
// Readability, then markdownify with ATX headings.
func extractContentFromHTML(page string) string {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "<error>Page failed to be simplified from HTML</error>"
	}
	// No page URL: the reference's Readability runs on a document whose
	// URL is about:blank, so relative links stay relative.
	article, err := readability.FromDocument(doc, nil)
	if err != nil || article.Node == nil || article.Node.FirstChild == nil {
		return "<error>Page failed to be simplified from HTML</error>"
	}
	return markdownify(article.Node)
}

// decodeBody is httpx's Response.text: the body decoded with the charset
// the Content-Type names, else UTF-8, invalid bytes replaced.
func decodeBody(resp *sdk.HTTPResponse) string {
	var enc encoding.Encoding
	if _, params, err := mime.ParseMediaType(header(resp, "Content-Type")); err == nil {
		if cs := strings.ToLower(strings.TrimSpace(params["charset"])); cs != "" && cs != "utf-8" && cs != "utf8" {
			switch cs {
			case "iso-8859-1", "latin-1", "latin1", "l1", "iso8859-1":
				enc = charmap.ISO8859_1 // Python's latin-1, not WHATWG's windows-1252
			default:
				enc, _ = htmlindex.Get(cs)
			}
		}
	}
	if enc != nil {
		if out, err := enc.NewDecoder().Bytes(resp.Body); err == nil {
			return string(out)
		}
	}
	return utf8lossy.Decode(resp.Body)
}
