package sdk

import (
	"errors"
	"strings"
)

// uriTemplate is a parsed URI template restricted to what can be matched
// unambiguously: literals, {name} (RFC 6570 level 1) and {+name} (reserved
// expansion, level 2), never two expressions side by side.
type uriTemplate struct {
	parts []tmplPart
}

// tmplPart is a literal (name == "") or a variable.
type tmplPart struct {
	lit      string
	name     string
	reserved bool // {+name}: the value may contain any character
}

func parseURITemplate(s string) (*uriTemplate, error) {
	if s == "" {
		return nil, errors.New("empty URI template")
	}
	t := &uriTemplate{}
	seen := map[string]bool{}
	for s != "" {
		open := strings.IndexByte(s, '{')
		if close := strings.IndexByte(s, '}'); close >= 0 && (open < 0 || close < open) {
			return nil, errors.New("unmatched '}'")
		}
		if open < 0 {
			t.parts = append(t.parts, tmplPart{lit: s})
			break
		}
		if open > 0 {
			t.parts = append(t.parts, tmplPart{lit: s[:open]})
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			return nil, errors.New("unclosed '{'")
		}
		expr := s[open+1 : open+end]
		s = s[open+end+1:]
		p := tmplPart{}
		if strings.HasPrefix(expr, "+") {
			p.reserved, expr = true, expr[1:]
		}
		if !validVarName(expr) {
			return nil, errors.New("unsupported expression {" + expr + "}: only {name} and {+name} are supported")
		}
		if seen[expr] {
			return nil, errors.New("variable " + expr + " used twice")
		}
		seen[expr] = true
		if n := len(t.parts); n > 0 && t.parts[n-1].name != "" {
			return nil, errors.New("two adjacent expressions cannot be matched")
		}
		p.name = expr
		t.parts = append(t.parts, p)
	}
	return t, nil
}

// validVarName reports whether s is an RFC 6570 varname: varchars (ALPHA,
// DIGIT, '_' or a percent-encoded octet) optionally separated by single dots.
func validVarName(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.':
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

// match reports whether uri is an expansion of t and returns the value of
// each variable. Every value is non-empty; a {name} value holds no '/', '?'
// or '#' and is percent-decoded.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	vars := map[string]string{}
	if !t.matchFrom(uri, 0, vars) {
		return nil, false
	}
	return vars, true
}

func (t *uriTemplate) matchFrom(uri string, pi int, vars map[string]string) bool {
	if pi == len(t.parts) {
		return uri == ""
	}
	p := t.parts[pi]
	if p.name == "" {
		return strings.HasPrefix(uri, p.lit) && t.matchFrom(uri[len(p.lit):], pi+1, vars)
	}
	// Shortest value first. Adjacent expressions are refused at parse time,
	// so the next part, if any, is a literal and this is cheap.
	for j := 1; j <= len(uri); j++ {
		if c := uri[j-1]; !p.reserved && (c == '/' || c == '?' || c == '#') {
			return false
		}
		if t.matchFrom(uri[j:], pi+1, vars) {
			v := uri[:j]
			if !p.reserved {
				v = percentDecode(v)
			}
			vars[p.name] = v
			return true
		}
	}
	return false
}

// percentDecode decodes %XX escapes, leaving malformed ones as they are.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
