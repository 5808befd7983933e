package main

import (
	"github.com/mcphost/mcphost/plugins/internal/utf8lossy"

	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// This file is a port of the parts of Protego 0.3.1 (the robots.txt parser
// the reference uses) that can_fetch needs: record groups, user-agent
// matching by substring with "*" scoring lowest, Allow/Disallow with the
// longest pattern winning and Allow winning a tie, "*" and "$" wildcards,
// and Protego's percent-encoding of patterns and paths.

var (
	disallowFields  = map[string]bool{"disallow": true, "dissallow": true, "dissalow": true, "disalow": true, "diasllow": true, "disallaw": true}
	userAgentFields = map[string]bool{"user-agent": true, "useragent": true, "user agent": true}
	otherFields     = map[string]bool{"sitemap": true, "sitemaps": true, "site-map": true, "crawl-delay": true, "crawl delay": true, "request-rate": true, "request rate": true, "host": true}
)

func validDirective(field string) bool {
	return disallowFields[field] || field == "allow" || userAgentFields[field] || otherFields[field]
}

type robotsRule struct {
	allow   bool
	pattern string
	re      *regexp.Regexp // nil when the pattern has no "*"
}

type ruleSet struct {
	userAgent string
	rules     []robotsRule
}

type robots struct {
	sets []*ruleSet // in the order first seen, as Python's dict keeps them
	byUA map[string]*ruleSet
}

// pySplitlines is Python's str.splitlines().
func pySplitlines(s string) []string {
	var lines []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			lines = append(lines, string(rs[start:i]))
			start = i + 1
		case '\r':
			lines = append(lines, string(rs[start:i]))
			if i+1 < len(rs) && rs[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(rs) {
		lines = append(lines, string(rs[start:]))
	}
	return lines
}

func parseRobots(content string) *robots {
	r := &robots{byUA: map[string]*ruleSet{}}
	var current []*ruleSet
	previous := ""
	for _, line := range pySplitlines(content) {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		line = pyStrip(line)
		if line == "" {
			continue
		}
		var field, value string
		if i := strings.Index(line, ":"); i >= 0 {
			field, value = line[:i], line[i+1:]
		} else {
			parts := strings.Split(line, " ")
			if len(parts) < 2 {
				continue
			}
			possible, found := parts[0], false
			for i := 1; i < len(parts); i++ {
				if validDirective(possible) {
					field, value, found = possible, strings.Join(parts[i:], " "), true
					break
				}
				possible += " " + parts[i]
			}
			if !found {
				continue
			}
		}
		field = strings.ToLower(pyStrip(field))
		value = pyStrip(value)
		if value == "" {
			previous = field
			continue
		}
		if len(current) == 0 && !userAgentFields[field] {
			continue
		}
		switch {
		case userAgentFields[field]:
			if previous != "" && !userAgentFields[previous] {
				current = nil
			}
			ua := strings.ToLower(pyStrip(value))
			uas := []string{ua}
			if ua != "*" && strings.Contains(ua, "*") {
				uas = append(uas, strings.ReplaceAll(ua, "*", ""))
			}
			for _, ua := range uas {
				if ua == "" {
					continue
				}
				rs := r.byUA[ua]
				if rs == nil {
					rs = &ruleSet{userAgent: ua}
					r.byUA[ua] = rs
					r.sets = append(r.sets, rs)
					current = append(current, rs)
				} else if !containsSet(current, rs) {
					current = append(current, rs)
				}
			}
		case field == "allow":
			for _, rs := range current {
				rs.add(true, value)
			}
		case disallowFields[field]:
			for _, rs := range current {
				rs.add(false, value)
			}
		}
		previous = field
	}
	for _, rs := range r.sets {
		// Longest pattern first, Allow before Disallow of the same length,
		// else in file order (Python's sort(reverse=True) is stable too).
		sort.SliceStable(rs.rules, func(i, j int) bool {
			a, b := rs.rules[i], rs.rules[j]
			if la, lb := utf8.RuneCountInString(a.pattern), utf8.RuneCountInString(b.pattern); la != lb {
				return la > lb
			}
			return a.allow && !b.allow
		})
	}
	return r
}

func containsSet(list []*ruleSet, rs *ruleSet) bool {
	for _, x := range list {
		if x == rs {
			return true
		}
	}
	return false
}

func (rs *ruleSet) add(allow bool, pattern string) {
	if strings.Contains(pattern, "$") {
		rs.add(allow, strings.ReplaceAll(pattern, "$", "%24"))
	}
	pattern = quotePattern(pattern)
	if pattern == "" {
		return
	}
	rule := robotsRule{allow: allow, pattern: pattern}
	if i := strings.Index(pattern, "*"); i >= 0 {
		rule.re = regexp.MustCompile("^" + patternRegex(pattern))
	}
	rs.rules = append(rs.rules, rule)
	if allow && strings.HasSuffix(pattern, "/index.html") {
		rs.add(true, pattern[:len(pattern)-10]+"$")
	}
}

// patternRegex is Protego's _prepare_pattern_for_regex.
func patternRegex(p string) string {
	p = regexp.MustCompile(`\*+`).ReplaceAllString(p, "*")
	dollar := strings.HasSuffix(p, "$")
	if dollar {
		p = p[:len(p)-1]
	}
	parts := strings.Split(p, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	out := strings.Join(parts, ".*?")
	if dollar {
		out += "$"
	}
	return out
}

func (r robotsRule) match(path string) bool {
	if r.re != nil {
		return r.re.MatchString(path)
	}
	if strings.HasSuffix(r.pattern, "$") {
		return path == r.pattern[:len(r.pattern)-1]
	}
	return strings.HasPrefix(path, r.pattern)
}

// canFetch is Protego's can_fetch(url, user_agent).
func (r *robots) canFetch(rawURL, userAgent string) bool {
	robot := strings.ToLower(pyStrip(userAgent))
	var best *ruleSet
	bestScore := 0
	for _, rs := range r.sets {
		score := 0
		switch {
		case rs.userAgent == "*":
			score = 1
		case strings.Contains(robot, rs.userAgent):
			score = utf8.RuneCountInString(rs.userAgent)
		}
		if score > bestScore {
			best, bestScore = rs, score
		}
	}
	if best == nil {
		return true
	}
	path := quotePath(rawURL)
	for _, rule := range best.rules {
		if rule.match(path) {
			return rule.allow
		}
	}
	return true
}

// splitURL is urllib.parse.urlparse's path, params, query and fragment of
// s, enough for what Protego passes it (a URL or a path pattern).
func splitURL(s string) (path, params, query, fragment string) {
	if i := strings.Index(s, "#"); i >= 0 {
		s, fragment = s[:i], s[i+1:]
	}
	if i := strings.Index(s, "?"); i >= 0 {
		s, query = s[:i], s[i+1:]
	}
	if strings.HasPrefix(s, "//") || (strings.Contains(s, "://") && !strings.HasPrefix(s, "/")) {
		// scheme://netloc/path
		if i := strings.Index(s, "//"); i >= 0 {
			rest := s[i+2:]
			if j := strings.Index(rest, "/"); j >= 0 {
				s = rest[j:]
			} else {
				s = ""
			}
		}
	}
	if i := strings.LastIndex(s, "/"); strings.Contains(s[max(i, 0):], ";") {
		k := strings.Index(s[max(i, 0):], ";") + max(i, 0)
		s, params = s[:k], s[k+1:]
	}
	return s, params, query, fragment
}

// unsplit is urlunparse with no scheme and no netloc.
func unsplit(path, params, query, fragment string) string {
	if params != "" {
		path += ";" + params
	}
	if query != "" {
		path += "?" + query
	}
	if fragment != "" {
		path += "#" + fragment
	}
	return path
}

// unquote is Protego's _unquote: %xy escapes decoded, except those of the
// characters in ignore; invalid UTF-8 replaced.
func unquote(s, ignore string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s)+0 && isHex(s[i+1]) && isHex(s[i+2]) {
			hexcode := strings.ToUpper(s[i+1 : i+3])
			v, _ := decodeHex(hexcode)
			if !strings.ContainsRune(ignore, rune(v)) || v >= 0x80 {
				b = append(b, v)
			} else {
				b = append(b, '%')
				b = append(b, hexcode...)
			}
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return utf8lossy.Decode(b)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func decodeHex(h string) (byte, bool) {
	var v byte
	for i := 0; i < 2; i++ {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + c - '0'
		default:
			v = v*16 + c - 'A' + 10
		}
	}
	return v, true
}

// pyQuote is urllib.parse.quote(s, safe): UTF-8 bytes other than letters,
// digits, "_.-~" and safe as %XX.
func pyQuote(s, safe string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			strings.IndexByte("_.-~", c) >= 0 || (c < 0x80 && strings.IndexByte(safe, c) >= 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(hex2(c)))
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// quotePath is Protego's _quote_path.
func quotePath(rawURL string) string {
	path, params, query, fragment := splitURL(rawURL)
	path = pyQuote(unquote(path, "/%"), "/%")
	out := unsplit(path, params, query, fragment)
	if out == "" {
		return "/"
	}
	return out
}

// quotePattern is Protego's _quote_pattern.
func quotePattern(p string) string {
	if strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "http://") {
		p = "/" + p
	}
	last := ""
	if strings.HasSuffix(p, "?") || strings.HasSuffix(p, ";") || strings.HasSuffix(p, "$") {
		last = p[len(p)-1:]
		p = p[:len(p)-1]
	}
	path, params, query, fragment := splitURL(p)
	path = pyQuote(unquote(path, "/*$%"), "/*%=")
	return unsplit(path+last, params, query, fragment)
}
