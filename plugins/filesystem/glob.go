package main

import (
	"regexp"
	"strconv"
	"strings"
)

// This file matches paths against glob patterns as minimatch 10 does with
// { dot: true }, which the reference uses for search_files and
// directory_tree: brace expansion, "**" segments, *, ?, [classes], escapes
// and the extglobs @(), *(), +(), ?(); a leading "!" negates, a leading
// "#" matches nothing. Not supported: the extglob !(…) (it needs a
// look-ahead Go's regexp lacks; it is matched literally).

// globMatch reports whether the relative path p matches pattern.
func globMatch(p, pattern string) bool {
	if strings.HasPrefix(pattern, "#") {
		return false
	}
	negate := false
	for strings.HasPrefix(pattern, "!") {
		negate = !negate
		pattern = pattern[1:]
	}
	if pattern == "" {
		return (p == "") != negate
	}
	file := strings.Split(p, "/")
	for _, alt := range braceExpand(pattern) {
		if matchParts(file, compileParts(alt)) {
			return !negate
		}
	}
	return negate
}

// globPart is one compiled path segment of a pattern.
type globPart struct {
	globstar bool
	literal  string
	re       *regexp.Regexp // nil: compare with literal
}

func compileParts(pattern string) []globPart {
	var parts []globPart
	for _, seg := range strings.Split(pattern, "/") {
		if seg == "**" {
			if len(parts) > 0 && parts[len(parts)-1].globstar {
				continue
			}
			parts = append(parts, globPart{globstar: true})
			continue
		}
		re, magic := segmentRegexp(seg)
		if !magic {
			parts = append(parts, globPart{literal: unescapeGlob(seg)})
			continue
		}
		compiled, err := regexp.Compile("^(?:" + re + ")$")
		if err != nil {
			parts = append(parts, globPart{literal: seg})
			continue
		}
		parts = append(parts, globPart{re: compiled})
	}
	return parts
}

// matchParts is minimatch's matchOne (not partial).
func matchParts(file []string, pat []globPart) bool {
	fi, pi := 0, 0
	for ; fi < len(file) && pi < len(pat); fi, pi = fi+1, pi+1 {
		p, f := pat[pi], file[fi]
		if p.globstar {
			if pi+1 == len(pat) {
				for ; fi < len(file); fi++ {
					if file[fi] == "." || file[fi] == ".." {
						return false
					}
				}
				return true
			}
			for fr := fi; fr < len(file); fr++ {
				if matchParts(file[fr:], pat[pi+1:]) {
					return true
				}
				if file[fr] == "." || file[fr] == ".." {
					break
				}
			}
			return false
		}
		if p.re == nil {
			if f != p.literal {
				return false
			}
			continue
		}
		if f == "." || f == ".." || !p.re.MatchString(f) {
			return false
		}
	}
	switch {
	case fi == len(file) && pi == len(pat):
		return true
	case fi == len(file):
		return false
	default:
		return fi == len(file)-1 && file[fi] == ""
	}
}

// unescapeGlob removes the backslashes of a pattern segment without magic.
func unescapeGlob(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// segmentRegexp translates one segment; magic is false when it has no
// glob syntax.
func segmentRegexp(seg string) (re string, magic bool) {
	var sb strings.Builder
	var stack []byte // open extglobs' kinds
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c == '\\' && i+1 < len(seg):
			i++
			sb.WriteString(regexp.QuoteMeta(seg[i : i+1]))
		case strings.IndexByte("@*+?", c) >= 0 && i+1 < len(seg) && seg[i+1] == '(' && closes(seg[i+1:]):
			magic = true
			stack = append(stack, c)
			sb.WriteString("(?:")
			i++
		case c == '|' && len(stack) > 0:
			sb.WriteByte('|')
		case c == ')' && len(stack) > 0:
			kind := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			sb.WriteByte(')')
			switch kind {
			case '*':
				sb.WriteByte('*')
			case '+':
				sb.WriteByte('+')
			case '?':
				sb.WriteByte('?')
			}
		case c == '*':
			magic = true
			sb.WriteString("[^/]*")
		case c == '?':
			magic = true
			sb.WriteString("[^/]")
		case c == '[':
			if cls, n, ok := globClass(seg[i:]); ok {
				magic = true
				sb.WriteString(cls)
				i += n - 1
				continue
			}
			sb.WriteString(`\[`)
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return sb.String(), magic
}

// closes reports whether the "(" at s[0] has its ")".
func closes(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return true
			}
		}
	}
	return false
}

// globClass translates the bracket expression at the start of s, returning
// it as a Go class and its length in s.
func globClass(s string) (string, int, bool) {
	var sb strings.Builder
	sb.WriteByte('[')
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		sb.WriteByte('^')
		i++
	}
	first := true
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ']' && !first:
			sb.WriteByte(']')
			return sb.String(), i + 1, true
		case c == '[' && strings.HasPrefix(s[i:], "[:"):
			end := strings.Index(s[i:], ":]")
			if end < 0 {
				return "", 0, false
			}
			sb.WriteString(s[i : i+end+2])
			i += end + 1
		case c == '\\' && i+1 < len(s):
			i++
			sb.WriteString(regexp.QuoteMeta(s[i : i+1]))
		case c == '-' && !first && i+1 < len(s) && s[i+1] != ']':
			sb.WriteByte('-')
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
		first = false
	}
	return "", 0, false
}

// braceExpand expands {a,b} and {x..y} as the brace-expansion package does
// (the first, outermost set first).
func braceExpand(p string) []string {
	start, end, depth := -1, -1, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			if depth > 0 {
				depth--
				if depth == 0 {
					end = i
				}
			}
		}
		if end >= 0 {
			break
		}
	}
	if start < 0 || end < 0 {
		return []string{p}
	}
	pre, body, post := p[:start], p[start+1:end], p[end+1:]
	var alts []string
	if seq, ok := braceSequence(body); ok {
		alts = seq
	} else {
		alts = splitTop(body)
		if len(alts) < 2 {
			// not a set: keep the braces, expand what follows
			var out []string
			for _, rest := range braceExpand(post) {
				for _, mid := range braceExpand(body) {
					out = append(out, pre+"{"+mid+"}"+rest)
				}
			}
			return out
		}
	}
	var out []string
	for _, a := range alts {
		for _, e := range braceExpand(pre + a + post) {
			out = append(out, e)
		}
	}
	return out
}

// splitTop splits a brace body at its top-level commas.
func splitTop(s string) []string {
	var parts []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[last:i])
				last = i + 1
			}
		}
	}
	return append(parts, s[last:])
}

var seqRe = regexp.MustCompile(`^(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.(-?\d+))?$`)

// braceSequence expands a numeric or letter sequence body "1..3".
func braceSequence(body string) ([]string, bool) {
	m := seqRe.FindStringSubmatch(body)
	if m == nil {
		return nil, false
	}
	step := 1
	if m[3] != "" {
		step, _ = strconv.Atoi(m[3])
		if step < 0 {
			step = -step
		}
		if step == 0 {
			step = 1
		}
	}
	a, errA := strconv.Atoi(m[1])
	b, errB := strconv.Atoi(m[2])
	letters := errA != nil || errB != nil
	if letters {
		if len(m[1]) != 1 || len(m[2]) != 1 {
			return nil, false
		}
		a, b = int(m[1][0]), int(m[2][0])
	}
	var out []string
	for i := a; ; {
		if letters {
			out = append(out, string(rune(i)))
		} else {
			out = append(out, strconv.Itoa(i))
		}
		if len(out) > 10000 || i == b {
			break
		}
		if a < b {
			i += step
			if i > b {
				break
			}
		} else {
			i -= step
			if i < b {
				break
			}
		}
	}
	return out, true
}
