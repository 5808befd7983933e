package main

import (
	"github.com/mcphost/mcphost/plugins/internal/utf8lossy"

	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// md converts an HTML fragment as markdownify's md() does in its own tests.
func md(t *testing.T, fragment string) string {
	t.Helper()
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(fragment), body)
	if err != nil {
		t.Fatal(err)
	}
	root := &html.Node{Type: html.DocumentNode}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	return markdownify(root)
}

// TestMarkdownifyCases are cases of python-markdownify 0.14.1's own test
// suite (tests/test_conversions.py, test_lists.py) whose options are the
// ones the reference uses (defaults, ATX headings).
func TestMarkdownifyCases(t *testing.T) {
	cases := map[string]string{
		`<a href="https://google.com">Google</a>`:                                                     "[Google](https://google.com)",
		`<a href="https://google.com">https://google.com</a>`:                                         "<https://google.com>",
		`<a href="https://community.kde.org/Get_Involved">https://community.kde.org/Get_Involved</a>`: "<https://community.kde.org/Get_Involved>",
		`foo<a href="http://google.com"> Google</a> bar`:                                              "foo [Google](http://google.com) bar",
		`foo <a href="http://google.com"></a> bar`:                                                    "foo  bar",
		`<a href="http://google.com" title="The &quot;Goog&quot;">Google</a>`:                         `[Google](http://google.com "The \"Goog\"")`,
		`foo <b>Hello </b>bar`:                                                     "foo **Hello** bar",
		"<blockquote>\nHello\n</blockquote>":                                       "\n> Hello\n\n",
		`<blockquote><p>Hello</p><p>Hello again</p></blockquote>`:                  "\n> Hello\n> \n> Hello again\n\n",
		`<blockquote>And she was like <blockquote>Hello</blockquote></blockquote>`: "\n> And she was like\n> > Hello\n\n",
		`a<br />b<br />c`: "a  \nb  \nc",
		`TEXT<figure><figcaption>Caption</figcaption><span>SPAN</span></figure>`: "TEXT\n\nCaption\n\nSPAN",
		`<code>*this_should_not_escape*</code>`:                                  "`*this_should_not_escape*`",
		`<code>this  should		normalize</code>`:                                   "`this should normalize`",
		`<samp>foo <del>bar</del> baz</samp>`:                                    "`foo bar baz`",
		`foo <del>Hello</del> bar`:                                               "foo ~~Hello~~ bar",
		`Hello</div> World`:                                                      "Hello World",
		`<h3>Hello
	

World</h3>`: "\n### Hello World\n\n",
		`<h5>

Hello   

</h5>`: "\n##### Hello\n\n",
		`<h10>Hello</h10>`: "\n###### Hello\n\n",
		`<h1>First</h1>
<h2>Second</h2>
<h3>Third</h3>`: "\n# First\n\n## Second\n\n### Third\n\n",
		`X<h1>First</h1>`:                  "X\n# First\n\n",
		`<h1>A <p>P</p> C </h1>`:           "\n# A P C\n\n",
		`<h3>A <br>B</h3>`:                 "\n### A B\n\n",
		`Hello<hr>World`:                   "Hello\n\n---\n\nWorld",
		"<p>Hello</p>\n<hr>\n<p>World</p>": "\n\nHello\n\n---\n\nWorld\n\n",
		`<img src="/path/to/img.jpg" alt="Alt text" title="Optional title" />`: `![Alt text](/path/to/img.jpg "Optional title")`,
		"<p>123456789\n\n\n123456789</p>":                                      "\n\n123456789\n123456789\n\n",
		`First<p>Second</p><p>Third</p>Fourth`:                                 "First\n\nSecond\n\nThird\n\nFourth",
		"<pre>test\n    foo\nbar</pre>":                                        "\n```\ntest\n    foo\nbar\n```\n",
		"<pre><code>test\n    foo\nbar</code></pre>":                           "\n```\ntest\n    foo\nbar\n```\n",
		`<pre><span>*this_should_not_escape*</span></pre>`:                     "\n```\n*this_should_not_escape*\n```\n",
		"<pre>foo<i>\n</i>baz</pre>":                                           "\n```\nfoo\nbaz\n```\n",
		`foo <script>var foo=42;</script> bar`:                                 "foo  bar",
		`<p> a b </p> <p> c d </p>`:                                            "\n\na b\n\nc d\n\n",
		`<p> <i>a</i> </p>`:                                                    "\n\n*a*\n\n",
		`test <blockquote> text </blockquote> after`:                           "test\n> text\n\nafter",
		` <ol> <li> x </li> <li> y </li> </ol> `:                               "\n\n1. x\n2. y\n",
		`<ol start="3"><li>a</li><li>b</li></ol>`:                              "\n\n3. a\n4. b\n",
		`foo<ol start="3"><li>a</li><li>b</li></ol>bar`:                        "foo\n\n3. a\n4. b\n\nbar",
		`<ol start="-1"><li>a</li><li>b</li></ol>`:                             "\n\n1. a\n2. b\n",
		`<ol start="1234"><li><p>first para</p><p>second para</p></li><li><p>third para</p><p>fourth para</p></li></ol>`: "\n\n1234. first para\n      \n      second para\n1235. third para\n      \n      fourth para\n",
		`<ul><li>a</li><li>b</li></ul>`:                                                                 "\n\n* a\n* b\n",
		`<p>foo</p><ul><li>a</li><li>b</li></ul><p>bar</p>`:                                             "\n\nfoo\n\n* a\n* b\n\nbar\n\n",
		`<ul><li>1<ul><li>a<ul><li>I</li><li>II</li></ul></li><li>b</li></ul></li><li>2</li></ul>`:      "\n\n* 1\n  + a\n    - I\n    - II\n  + b\n* 2\n",
		`<ul><li>foo <a href="#">bar</a></li><li>foo bar  </li><li>foo <b>bar</b>   <i>space</i>.</ul>`: "\n\n* foo [bar](#)\n* foo bar\n* foo **bar** *space*.\n",
		`snake_case and a*b`: `snake\_case and a\*b`,
		`<table><tr><th>Firstname</th><th>Lastname</th></tr><tr><td>Jill</td><td>Smith</td></tr></table>`: "\n\n| Firstname | Lastname |\n| --- | --- |\n| Jill | Smith |\n\n",
	}
	for in, want := range cases {
		if got := md(t, in); got != want {
			t.Errorf("md(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestPyHelpers(t *testing.T) {
	if got := utf8lossy.Decode([]byte("a\xe2\x82Ab\xffc\xf0\x9f\x98")); got != "a\ufffdAb\ufffdc\ufffd" {
		t.Errorf("decodeUTF8Replace: %q", got)
	}
	if got := pySplitlines("a\r\nb\rc\nd\x0be"); strings.Join(got, "|") != "a|b|c|d|e" {
		t.Errorf("pySplitlines: %q", got)
	}
	for in, want := range map[string]string{
		"HTTP://Example.COM":             "http://example.com/",
		"http://127.0.0.1:80/a/./b/../c": "http://127.0.0.1/a/c",
		"https://h:8443/p q?x=a b#f g":   "https://h:8443/p%20q?x=a%20b#f%20g",
		"http://bücher.de/":              "http://xn--bcher-kva.de/",
	} {
		if got, err := normalizeURL(in); err != nil || got != want {
			t.Errorf("normalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestRobots(t *testing.T) {
	r := parseRobots("User-agent: *\nDisallow: /private\nAllow: /private/ok\n\nUser-agent: ModelContextProtocol\nDisallow: /mcp-only\nAllow: /*.txt$\n")
	ua := userAgentAutonomous
	for u, want := range map[string]bool{
		"http://h/private/x":    true, // the more specific group (modelcontextprotocol) applies, not *
		"http://h/mcp-only":     false,
		"http://h/mcp-only.txt": false, // the longer pattern wins: /mcp-only (9) over /*.txt$ (7)
		"http://h/a.txt":        true,
		"http://h/mcp-onl.txt":  true,
		"http://h/other":        true,
	} {
		if got := r.canFetch(u, ua); got != want {
			t.Errorf("canFetch(%s) = %v", u, got)
		}
	}
	for u, want := range map[string]bool{"http://h/private/x": false, "http://h/private/ok/1": true, "http://h/public": true} {
		if got := r.canFetch(u, "SomeBot/1.0"); got != want {
			t.Errorf("SomeBot canFetch(%s) = %v", u, got)
		}
	}
}
