// Package uritemplate parses RFC 6570 URI templates, levels 1 to 4, and
// matches URIs against them, recovering the value of each variable. The
// host uses it to check a plugin's resource templates and to tell the
// plugin the variables of a resources/read; the Go SDK uses it to dispatch
// a read to the handler of the template that matched. It uses only the
// standard library, so that it builds into plugins.
//
// Matching inverts expansion. Where expansion loses information the
// inversion picks one reading, documented on [Template.Match].
package uritemplate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Template is a parsed URI template. It is read-only once parsed and safe
// for concurrent use.
type Template struct {
	raw   string
	parts []part
	// repeats is whether a variable appears more than once (then every
	// appearance must match the same value).
	repeats bool
}

// part is a literal (expr == nil) or an expression.
type part struct {
	lit  string
	expr *expression
}

type expression struct {
	op   *operator
	vars []varSpec
	text string // as written, braces included, for errors
}

type varSpec struct {
	name    string
	prefix  int // the :N modifier; 0 when absent
	explode bool
}

// operator holds what RFC 6570 §3.2.1 (appendix A) says of an operator.
type operator struct {
	first    string // put before the first value
	sep      byte   // between values
	named    bool   // values are name=value pairs
	reserved bool   // values may hold reserved characters, unencoded
}

var operators = map[byte]*operator{
	0:   {sep: ','},
	'+': {sep: ',', reserved: true},
	'#': {first: "#", sep: ',', reserved: true},
	'.': {first: ".", sep: '.'},
	'/': {first: "/", sep: '/'},
	';': {first: ";", sep: ';', named: true},
	'?': {first: "?", sep: '&', named: true},
	'&': {first: "&", sep: '&', named: true},
}

// Parse parses s as an RFC 6570 URI template (any level). The error names
// the byte offset and what is wrong.
func Parse(s string) (*Template, error) {
	if s == "" {
		return nil, errors.New("is empty")
	}
	t := &Template{raw: s}
	seen := map[string]bool{}
	var lit strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("'{' at byte %d is not closed", i)
			}
			if open := strings.IndexByte(s[i+1:i+end], '{'); open >= 0 {
				return nil, fmt.Errorf("'{' at byte %d is not closed before the '{' at byte %d", i, i+1+open)
			}
			e, err := parseExpression(s[i : i+end+1])
			if err != nil {
				return nil, fmt.Errorf("expression %s at byte %d: %w", strconv.QuoteToASCII(s[i:i+end+1]), i, err)
			}
			for _, v := range e.vars {
				t.repeats = t.repeats || seen[v.name]
				seen[v.name] = true
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, part{lit: lit.String()})
				lit.Reset()
			}
			t.parts = append(t.parts, part{expr: e})
			i += end + 1
		case c == '}':
			return nil, fmt.Errorf("'}' at byte %d closes no '{'", i)
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return nil, fmt.Errorf("'%%' at byte %d does not start a percent-encoded octet (%%XX)", i)
			}
			lit.WriteString(s[i : i+3])
			i += 3
		case c < 0x80:
			if c <= ' ' || c == 0x7F || strings.IndexByte("\"'<>\\^`|", c) >= 0 {
				return nil, fmt.Errorf("character %s at byte %d is not allowed in a URI template (percent-encode it)", strconv.QuoteRuneToASCII(rune(c)), i)
			}
			lit.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				return nil, fmt.Errorf("byte %d is not UTF-8", i)
			}
			if !ucschar(r) {
				return nil, fmt.Errorf("character %s at byte %d is not allowed in a URI template", strconv.QuoteRuneToASCII(r), i)
			}
			lit.WriteString(s[i : i+n])
			i += n
		}
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, part{lit: lit.String()})
	}
	return t, nil
}

// ucschar reports whether r, a non-ASCII character, may be a literal:
// RFC 6570's ucschar or iprivate (RFC 3987), which leave out the
// noncharacters and the surrogates.
func ucschar(r rune) bool {
	switch {
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFEF:
		return true
	case r >= 0x10000 && r <= 0x10FFFD:
		return r&0xFFFE != 0xFFFE && !(r >= 0xE0000 && r < 0xE1000)
	}
	return false
}

// parseExpression parses one expression, braces included.
func parseExpression(text string) (*expression, error) {
	body := text[1 : len(text)-1]
	if body == "" {
		return nil, errors.New("is empty (want a variable name, e.g. {id})")
	}
	e := &expression{op: operators[0], text: text}
	if op, ok := operators[body[0]]; ok && body[0] != 0 {
		e.op, body = op, body[1:]
	} else if strings.IndexByte("=,!@|", body[0]) >= 0 {
		return nil, fmt.Errorf("operator %q is reserved by RFC 6570 for future use", body[0])
	}
	for _, spec := range strings.Split(body, ",") {
		v := varSpec{name: spec}
		if name, ok := strings.CutSuffix(spec, "*"); ok {
			v.name, v.explode = name, true
		} else if name, n, ok := strings.Cut(spec, ":"); ok {
			v.name = name
			p, err := strconv.Atoi(n)
			if err != nil || p < 1 || p > 9999 || n[0] == '0' {
				return nil, fmt.Errorf("prefix %s of %s is not a length from 1 to 9999", strconv.QuoteToASCII(n), strconv.QuoteToASCII(name))
			}
			v.prefix = p
		}
		if v.name == "" {
			return nil, errors.New("has an empty variable name")
		}
		if !validVarName(v.name) {
			return nil, fmt.Errorf("%s is not a variable name (letters, digits, '_', percent-encoded octets, single dots between them)", strconv.QuoteToASCII(v.name))
		}
		e.vars = append(e.vars, v)
	}
	return e, nil
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

// String returns the template as it was parsed.
func (t *Template) String() string { return t.raw }

// Scheme returns the URI scheme the template begins with (RFC 3986: a
// letter, then letters, digits, '+', '-' or '.', then ':'), without the
// colon, or "" when it does not begin with one in literal text.
func (t *Template) Scheme() string {
	if len(t.parts) == 0 || t.parts[0].expr != nil {
		return ""
	}
	lit := t.parts[0].lit
	colon := strings.IndexByte(lit, ':')
	if colon < 1 {
		return ""
	}
	for i := 0; i < colon; i++ {
		c := lit[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !letter || !letter && !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return ""
		}
	}
	return lit[:colon]
}

// Names returns the names of the template's variables, in order, each once.
func (t *Template) Names() []string {
	var names []string
	seen := map[string]bool{}
	for _, p := range t.parts {
		if p.expr == nil {
			continue
		}
		for _, v := range p.expr.vars {
			if !seen[v.name] {
				seen[v.name] = true
				names = append(names, v.name)
			}
		}
	}
	return names
}

// maxSteps bounds the work of one Match: a URI and a template with several
// expressions could otherwise make the backtracking search take time
// polynomial in the URI's length with a high degree. Past it, Match
// reports no match.
const maxSteps = 1 << 20

// Match reports whether uri is an expansion of t and, if so, returns the
// values of the variables it defines. A variable that the expansion left
// out (an undefined variable; an expression that expanded to nothing) is
// absent. A value is
//
//   - a string, percent-decoded, except in {+var} and {#var}, which
//     allow reserved characters and whose values are returned as they
//     appear in uri;
//   - a []string for an exploded variable ({/path*}, {?list*}): its items;
//   - a map[string]string for an exploded variable of a ;, ? or &
//     expression whose pairs are named otherwise than the expression's
//     variables ({?keys*} matching ?a=1&b=2): the pairs.
//
// Where expansion is ambiguous, Match reads it one way: a variable that is
// not exploded takes one value, except the last of its expression, which
// takes the rest ({x,y} matching "1,2,3" gives x "1", y "2,3"); an earlier
// expression takes as much of uri as it can. A variable that appears twice
// must have the same value both times. uri must be what expansion
// produces: no raw space or non-ASCII character, every '%' followed by
// two hex digits, decoded values valid UTF-8.
func (t *Template) Match(uri string) (map[string]any, bool) {
	m := &matcher{t: t, uri: uri, steps: maxSteps}
	if !t.repeats {
		m.failed = map[[2]int]bool{}
	}
	vals := map[string]any{}
	if !m.from(0, 0, vals) {
		return nil, false
	}
	return vals, true
}

type matcher struct {
	t     *Template
	uri   string
	steps int
	// failed memoizes (part, position) pairs from which the rest cannot
	// match; nil when a variable repeats, since then it depends on values.
	failed map[[2]int]bool
}

func (m *matcher) from(pi, pos int, vals map[string]any) bool {
	if pi == len(m.t.parts) {
		return pos == len(m.uri)
	}
	key := [2]int{pi, pos}
	if m.failed != nil && m.failed[key] {
		return false
	}
	m.steps--
	if m.steps < 0 {
		return false
	}
	ok := m.part(pi, pos, vals)
	if !ok && m.failed != nil {
		m.failed[key] = true
	}
	return ok
}

func (m *matcher) part(pi, pos int, vals map[string]any) bool {
	p := m.t.parts[pi]
	if p.expr == nil {
		return strings.HasPrefix(m.uri[pos:], p.lit) && m.from(pi+1, pos+len(p.lit), vals)
	}
	e := p.expr
	// The longest run of characters the expression can expand to; then
	// each end, longest first, down to the empty expansion.
	limit := pos
	if strings.HasPrefix(m.uri[pos:], e.op.first) {
		limit += len(e.op.first)
		for limit < len(m.uri) && e.op.allows(m.uri[limit]) {
			limit++
		}
	}
	// An end is worth reading the expression up to only where what
	// follows can match: the end of uri after the last part, the next
	// literal's text before one.
	last := pi+1 == len(m.t.parts)
	next := ""
	if !last && m.t.parts[pi+1].expr == nil {
		next = m.t.parts[pi+1].lit
	}
	for end := limit; end >= pos; end-- {
		m.steps--
		if last && end != len(m.uri) || next != "" && !strings.HasPrefix(m.uri[end:], next) {
			continue
		}
		m.steps -= end - pos
		if m.steps < 0 {
			return false
		}
		got, ok := e.match(m.uri[pos:end])
		if !ok || !agree(vals, got) {
			continue
		}
		var added []string
		for k, v := range got {
			if _, had := vals[k]; !had {
				vals[k] = v
				added = append(added, k)
			}
		}
		if m.from(pi+1, end, vals) {
			return true
		}
		for _, k := range added {
			delete(vals, k)
		}
	}
	return false
}

// agree reports whether the values in got equal those of the same
// variables in vals.
func agree(vals, got map[string]any) bool {
	for k, v := range got {
		if old, ok := vals[k]; ok && fmt.Sprint(old) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// allows reports whether c can occur in an expansion of an expression
// with this operator: unreserved characters, '%' (of a percent-encoded
// octet), ',' and '=' (of lists and pairs) always, the operator's
// separator, and every reserved character where reserved characters are
// allowed.
func (op *operator) allows(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
		c == '-', c == '.', c == '_', c == '~', c == '%', c == ',', c == '=', c == op.sep:
		return true
	case strings.IndexByte(":/?#[]@!$&'()*+;", c) >= 0:
		return op.reserved
	}
	return false
}

// match reads text as an expansion of e and returns the values it gives.
func (e *expression) match(text string) (map[string]any, bool) {
	vals := map[string]any{}
	if text == "" {
		return vals, true // every variable undefined
	}
	text, ok := strings.CutPrefix(text, e.op.first)
	if !ok {
		return nil, false
	}
	items := strings.Split(text, string(e.op.sep))
	if e.op.named {
		return e.matchNamed(items)
	}
	for vi, v := range e.vars {
		if len(items) == 0 {
			break
		}
		rest := len(e.vars) - vi - 1 // variables after this one
		switch {
		case v.explode:
			n := max(1, len(items)-rest)
			list := make([]string, 0, n)
			for _, it := range items[:n] {
				s, ok := e.value(v, it)
				if !ok {
					return nil, false
				}
				list = append(list, s)
			}
			vals[v.name], items = list, items[n:]
		case rest == 0:
			s, ok := e.value(v, strings.Join(items, string(e.op.sep)))
			if !ok {
				return nil, false
			}
			vals[v.name], items = s, nil
		default:
			s, ok := e.value(v, items[0])
			if !ok {
				return nil, false
			}
			vals[v.name], items = s, items[1:]
		}
	}
	return vals, len(items) == 0
}

// matchNamed reads the name=value items of a ;, ? or & expression.
func (e *expression) matchNamed(items []string) (map[string]any, bool) {
	vals := map[string]any{}
	lists := map[string][]string{}
	var pairs map[string]string // of the exploded variable taking other names
	var explodeVar *varSpec
	for i := range e.vars {
		if e.vars[i].explode && explodeVar == nil {
			explodeVar = &e.vars[i]
		}
	}
	for _, it := range items {
		name, raw, _ := strings.Cut(it, "=")
		var v *varSpec
		for i := range e.vars {
			if e.vars[i].name == name {
				v = &e.vars[i]
				break
			}
		}
		switch {
		case v != nil && !v.explode:
			if _, dup := vals[v.name]; dup {
				return nil, false
			}
			s, ok := e.value(*v, raw)
			if !ok {
				return nil, false
			}
			vals[v.name] = s
		case v != nil:
			s, ok := e.value(*v, raw)
			if !ok {
				return nil, false
			}
			lists[v.name] = append(lists[v.name], s)
		case explodeVar != nil:
			k, ok := decode(name)
			if !ok || k == "" {
				return nil, false
			}
			s, ok := e.value(*explodeVar, raw)
			if !ok {
				return nil, false
			}
			if pairs == nil {
				pairs = map[string]string{}
			}
			pairs[k] = s
		default:
			return nil, false // a name the expression does not have
		}
	}
	for name, list := range lists {
		vals[name] = list
	}
	if pairs != nil {
		for _, s := range lists[explodeVar.name] {
			pairs[explodeVar.name] = s
		}
		vals[explodeVar.name] = pairs
	}
	return vals, true
}

// value checks and decodes one value of v.
func (e *expression) value(v varSpec, raw string) (string, bool) {
	s := raw
	if e.op.reserved {
		if !validPercent(raw) {
			return "", false
		}
	} else {
		var ok bool
		if s, ok = decode(raw); !ok {
			return "", false
		}
	}
	if v.prefix > 0 && utf8.RuneCountInString(s) > v.prefix {
		return "", false
	}
	return s, true
}

// decode percent-decodes s; false when a '%' does not start an octet or
// the result is not UTF-8.
func decode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", false
		}
		b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	return string(b), utf8.Valid(b)
}

// validPercent reports whether every '%' in s starts a percent-encoded octet.
func validPercent(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			return false
		}
	}
	return true
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
