package main

import (
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// This file is a port of python-markdownify 0.14.1 (MarkdownConverter with
// heading_style=ATX and every other option at its default), the converter
// the reference server runs on Readability's output. It works on the tree
// go-readability leaves instead of re-parsing serialized HTML, and mutates
// it the way markdownify mutates its BeautifulSoup tree.

var (
	whitespaceRe        = regexp.MustCompile(`[\t ]+`)
	allWhitespaceRe     = regexp.MustCompile(`[\t \r\n]+`)
	newlineWhitespaceRe = regexp.MustCompile(`[\t \r\n]*[\r\n][\t \r\n]*`)
	htmlHeadingRe       = regexp.MustCompile(`^h[1-6]`)
	convertHeadingRe    = regexp.MustCompile(`^h(\d+)`)
)

// pySpace is Python's str.isspace for one character: what strip() removes.
func pySpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, ' ', 0x85, 0xa0, 0x1680,
		0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func pyStrip(s string) string  { return strings.TrimFunc(s, pySpace) }
func pyLstrip(s string) string { return strings.TrimLeftFunc(s, pySpace) }
func pyRstrip(s string) string { return strings.TrimRightFunc(s, pySpace) }

// converter holds the root of the fragment being converted: it stands for
// BeautifulSoup's document object, which has no tag name.
type converter struct {
	root *html.Node
}

// markdownify converts the children of root (Readability's article
// container, whose innerHTML the reference converts) to Markdown.
func markdownify(root *html.Node) string {
	c := &converter{root: root}
	return c.processTag(root, false, true)
}

// name is a node's tag name as BeautifulSoup gives it: "" for text,
// comments and the document.
func (c *converter) name(n *html.Node) string {
	if n == nil || n == c.root || n.Type != html.ElementNode {
		return ""
	}
	return n.Data
}

func (c *converter) parent(n *html.Node) *html.Node {
	if n == c.root {
		return nil
	}
	return n.Parent
}

// findParent reports whether an ancestor of n has one of names.
func (c *converter) findParent(n *html.Node, names ...string) bool {
	for p := c.parent(n); p != nil; p = c.parent(p) {
		for _, name := range names {
			if c.name(p) == name {
				return true
			}
		}
	}
	return false
}

func (c *converter) removeInside(n *html.Node) bool {
	name := c.name(n)
	if name == "" {
		return false
	}
	if htmlHeadingRe.MatchString(name) {
		return true
	}
	switch name {
	case "p", "blockquote", "ol", "ul", "li", "table", "thead", "tbody", "tfoot", "tr", "td", "th":
		return true
	}
	return false
}

func (c *converter) removeOutside(n *html.Node) bool {
	return c.removeInside(n) || c.name(n) == "pre"
}

func isText(n *html.Node) bool { return n.Type == html.TextNode }

// isString is BeautifulSoup's NavigableString: text and comments alike.
func isString(n *html.Node) bool { return n.Type == html.TextNode || n.Type == html.CommentNode }

func (c *converter) processTag(node *html.Node, inline, childrenOnly bool) string {
	name := c.name(node)
	isHeading := htmlHeadingRe.MatchString(name)
	isCell := name == "td" || name == "th"
	childrenInline := inline
	if !childrenOnly && (isHeading || isCell) {
		childrenInline = true
	}

	// Remove whitespace-only strings just before, after or inside
	// block-level elements. markdownify extracts while iterating over the
	// children list, so the node after an extracted one is not looked at.
	removeInside := c.removeInside(node)
	for el := node.FirstChild; el != nil; {
		next := el.NextSibling
		canExtract := removeInside && (el.PrevSibling == nil || el.NextSibling == nil) ||
			c.removeOutside(el.PrevSibling) || c.removeOutside(el.NextSibling)
		if isString(el) && pyStrip(el.Data) == "" && canExtract {
			node.RemoveChild(el)
			if next != nil {
				next = next.NextSibling
			}
		}
		el = next
	}

	var text string
	for el := node.FirstChild; el != nil; el = el.NextSibling {
		switch {
		case el.Type == html.CommentNode || el.Type == html.DoctypeNode:
		case isText(el):
			text += c.processText(el)
		case el.Type == html.ElementNode:
			textStrip := strings.TrimRight(text, "\n")
			left := len(text) - len(textStrip)
			next := c.processTag(el, childrenInline, false)
			nextStrip := strings.TrimLeft(next, "\n")
			right := len(next) - len(nextStrip)
			text = textStrip + strings.Repeat("\n", max(left, right)) + nextStrip
		}
	}
	if !childrenOnly {
		text = c.convert(node, text, inline)
	}
	return text
}

func (c *converter) processText(el *html.Node) string {
	text := el.Data
	if !c.findParent(el, "pre") {
		text = newlineWhitespaceRe.ReplaceAllString(text, "\n")
		text = whitespaceRe.ReplaceAllString(text, " ")
	}
	if !c.findParent(el, "pre", "code", "kbd", "samp") {
		text = escape(text)
	}
	if c.removeOutside(el.PrevSibling) || (c.removeInside(c.parent(el)) && el.PrevSibling == nil) {
		text = pyLstrip(text)
	}
	if c.removeOutside(el.NextSibling) || (c.removeInside(c.parent(el)) && el.NextSibling == nil) {
		text = pyRstrip(text)
	}
	return text
}

func escape(s string) string {
	s = strings.ReplaceAll(s, "*", `\*`)
	return strings.ReplaceAll(s, "_", `\_`)
}

// chomp moves one leading and one trailing space out of an inline
// element's text.
func chomp(text string) (prefix, suffix, stripped string) {
	if strings.HasPrefix(text, " ") {
		prefix = " "
	}
	if strings.HasSuffix(text, " ") {
		suffix = " "
	}
	return prefix, suffix, pyStrip(text)
}

func indent(text string, columns int) string {
	if text == "" {
		return ""
	}
	pad := strings.Repeat(" ", columns)
	return pad + strings.ReplaceAll(text, "\n", "\n"+pad)
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func (c *converter) inlineMarkup(el *html.Node, text, markup string) string {
	if c.findParent(el, "pre", "code", "kbd", "samp") {
		return text
	}
	prefix, suffix, text := chomp(text)
	if text == "" {
		return ""
	}
	return prefix + markup + text + markup + suffix
}

// convert is markdownify's convert_<tag> dispatch.
func (c *converter) convert(el *html.Node, text string, inline bool) string {
	name := c.name(el)
	if m := convertHeadingRe.FindStringSubmatch(name); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			n = 6
		}
		return c.convertHeading(n, text, inline)
	}
	switch name {
	case "a":
		prefix, suffix, text := chomp(text)
		if text == "" {
			return ""
		}
		href, hasHref := attr(el, "href")
		title, _ := attr(el, "title")
		if hasHref && strings.ReplaceAll(text, `\_`, "_") == href && title == "" {
			return "<" + href + ">"
		}
		titlePart := ""
		if title != "" {
			titlePart = ` "` + strings.ReplaceAll(title, `"`, `\"`) + `"`
		}
		if href == "" {
			return text
		}
		return prefix + "[" + text + "](" + href + titlePart + ")" + suffix
	case "b", "strong":
		return c.inlineMarkup(el, text, "**")
	case "em", "i":
		return c.inlineMarkup(el, text, "*")
	case "del", "s":
		return c.inlineMarkup(el, text, "~~")
	case "sub", "sup":
		return c.inlineMarkup(el, text, "")
	case "code", "kbd", "samp":
		if c.name(c.parent(el)) == "pre" {
			return text
		}
		return c.inlineMarkup(el, text, "`")
	case "blockquote":
		if inline {
			return " " + pyStrip(text) + " "
		}
		if text == "" {
			return ""
		}
		return "\n" + "> " + strings.ReplaceAll(pyStrip(text), "\n", "\n> ") + "\n\n"
	case "br":
		if inline {
			return ""
		}
		return "  \n"
	case "hr":
		return "\n\n---\n\n"
	case "img":
		alt, _ := attr(el, "alt")
		src, _ := attr(el, "src")
		title, _ := attr(el, "title")
		titlePart := ""
		if title != "" {
			titlePart = ` "` + strings.ReplaceAll(title, `"`, `\"`) + `"`
		}
		if inline {
			return alt
		}
		return "![" + alt + "](" + src + titlePart + ")"
	case "ul", "ol":
		beforeParagraph := false
		if next := el.NextSibling; next != nil && c.name(next) != "ul" && c.name(next) != "ol" {
			beforeParagraph = true
		}
		for p := el; p != nil; p = c.parent(p) {
			if c.name(p) == "li" {
				return "\n" + pyRstrip(text)
			}
		}
		if beforeParagraph {
			return "\n\n" + text + "\n"
		}
		return "\n\n" + text
	case "li":
		return c.convertLi(el, text)
	case "p":
		if inline {
			return " " + pyStrip(text) + " "
		}
		if text == "" {
			return ""
		}
		return "\n\n" + text + "\n\n"
	case "pre":
		if text == "" {
			return ""
		}
		return "\n```\n" + text + "\n```\n"
	case "script", "style":
		return ""
	case "table":
		return "\n\n" + text + "\n"
	case "caption":
		return text + "\n"
	case "figcaption":
		return "\n\n" + text + "\n\n"
	case "td", "th":
		colspan := 1
		if v, ok := attr(el, "colspan"); ok && isASCIIDigits(v) {
			colspan, _ = strconv.Atoi(v)
		}
		return " " + strings.ReplaceAll(pyStrip(text), "\n", " ") + strings.Repeat(" |", colspan)
	case "tr":
		return c.convertTr(el, text)
	}
	return text
}

func isASCIIDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func (c *converter) convertHeading(n int, text string, inline bool) string {
	if inline {
		return text
	}
	n = max(1, min(6, n))
	text = allWhitespaceRe.ReplaceAllString(pyStrip(text), " ")
	return "\n" + strings.Repeat("#", n) + " " + text + "\n\n"
}

func (c *converter) convertLi(el *html.Node, text string) string {
	parent := c.parent(el)
	var bullet string
	if parent != nil && c.name(parent) == "ol" {
		start := 1
		if v, ok := attr(parent, "start"); ok && isASCIIDigits(v) {
			start, _ = strconv.Atoi(v)
		}
		index := 0
		for s := parent.FirstChild; s != nil && s != el; s = s.NextSibling {
			index++
		}
		bullet = strconv.Itoa(start+index) + "."
	} else {
		depth := -1
		for p := el; p != nil; p = c.parent(p) {
			if c.name(p) == "ul" {
				depth++
			}
		}
		bullet = string("*+-"[((depth%3)+3)%3]) // Python's modulo: -1 -> "-"
	}
	bullet += " "
	text = indent(pyStrip(text), len(bullet))
	if text != "" {
		text = bullet + text[len(bullet):]
	}
	return text + "\n"
}

// descendants returns the element descendants of n named one of names, in
// document order (BeautifulSoup's find_all).
func (c *converter) descendants(n *html.Node, names ...string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(p *html.Node) {
		for ch := p.FirstChild; ch != nil; ch = ch.NextSibling {
			for _, name := range names {
				if c.name(ch) == name {
					out = append(out, ch)
					break
				}
			}
			walk(ch)
		}
	}
	walk(n)
	return out
}

func (c *converter) convertTr(el *html.Node, text string) string {
	cells := c.descendants(el, "td", "th")
	parent := c.parent(el)
	parentName := c.name(parent)
	allTh := true
	for _, cell := range cells {
		if c.name(cell) != "th" {
			allTh = false
		}
	}
	first := el.PrevSibling == nil
	noThead := true
	if parent != nil {
		if gp := c.parent(parent); gp != nil && len(c.descendants(gp, "thead")) > 0 {
			noThead = false
		}
	}
	isHeadRow := allTh || (first && parentName != "tbody") || (first && parentName == "tbody" && noThead)
	overline, underline := "", ""
	if isHeadRow && first {
		full := 0
		for _, cell := range cells {
			if v, ok := attr(cell, "colspan"); ok && isASCIIDigits(v) {
				n, _ := strconv.Atoi(v)
				full += n
			} else {
				full++
			}
		}
		underline = "| " + strings.Join(repeat("---", full), " | ") + " |\n"
	} else if first && (parentName == "table" || (parentName == "tbody" && parent.PrevSibling == nil)) {
		overline = "| " + strings.Join(repeat("", len(cells)), " | ") + " |\n"
		overline += "| " + strings.Join(repeat("---", len(cells)), " | ") + " |\n"
	}
	return overline + "|" + text + "\n" + underline
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
