package main

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// The reference validates url as pydantic's AnyUrl, which parses it the
// WHATWG way (Rust's url crate) and prints it normalized: scheme and host
// lower-cased, the default port dropped, an empty path made "/", unsafe
// characters percent-encoded, "." and ".." segments resolved. The fetch
// and the "Contents of" line use that form. normalizeURL does the same
// for the special schemes (http, https, ws, wss, ftp); other schemes are
// kept as given (the host's http_request refuses them anyway).

// urlError is pydantic's message for a URL it cannot parse.
func urlError(input, why string) error {
	return fmt.Errorf("1 validation error for Fetch\nurl\n  Input should be a valid URL, %s [type=url_parsing, input_value=%s, input_type=str]\n    For further information visit https://errors.pydantic.dev/2.12/v/url_parsing", why, pyRepr(input))
}

// pyRepr is Python's repr of a str, shortened as pydantic-core shows
// long input values.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteString(`\` + string(quote))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	out := []rune(b.String())
	if len(out) > 50 {
		return string(out[:25]) + "..." + string(out[len(out)-24:])
	}
	return string(out)
}

var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}

func normalizeURL(input string) (string, error) {
	// Leading and trailing C0 controls and spaces go, and so do tabs and
	// newlines anywhere.
	s := strings.TrimFunc(input, func(r rune) bool { return r <= ' ' })
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !validScheme(s[:colon]) {
		return "", urlError(input, "relative URL without a base")
	}
	scheme := strings.ToLower(s[:colon])
	rest := s[colon+1:]
	if _, special := defaultPorts[scheme]; !special {
		if scheme == "file" {
			return "", urlError(input, "relative URL without a base") // not fetched either way
		}
		return scheme + ":" + rest, nil
	}
	rest = strings.TrimLeft(rest, `/\`)
	end := strings.IndexAny(rest, `/\?#`)
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo := ""
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, authority = authority[:at], authority[at+1:]
	}
	host, port := authority, ""
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, ']'); i >= 0 {
			host, port = host[:i+1], strings.TrimPrefix(host[i+1:], ":")
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host, port = host[:i], host[i+1:]
	}
	if host == "" {
		return "", urlError(input, "empty host")
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n > 65535 || n < 0 {
			return "", urlError(input, "invalid port number")
		}
		port = strconv.Itoa(n)
		if port == defaultPorts[scheme] {
			port = ""
		}
	}
	if !strings.HasPrefix(host, "[") {
		h, err := idna.Lookup.ToASCII(pctDecode(host))
		if err != nil {
			return "", urlError(input, "invalid international domain name")
		}
		if strings.ContainsAny(h, " #%/:<>?@[\\]^|") {
			return "", urlError(input, "invalid domain character")
		}
		host = strings.ToLower(h)
	}
	path, query, fragment := tail, "", ""
	hasQuery, hasFragment := false, false
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path, fragment, hasFragment = path[:i], path[i+1:], true
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query, hasQuery = path[:i], path[i+1:], true
	}
	var b strings.Builder
	b.WriteString(scheme + "://")
	if userinfo != "" {
		user, pass, hasPass := strings.Cut(userinfo, ":")
		b.WriteString(pctEncode(user, userinfoSet))
		if hasPass && pass != "" {
			b.WriteString(":" + pctEncode(pass, userinfoSet))
		}
		b.WriteString("@")
	}
	b.WriteString(host)
	if port != "" {
		b.WriteString(":" + port)
	}
	b.WriteString(normalizePath(path))
	if hasQuery {
		b.WriteString("?" + pctEncode(query, specialQuerySet))
	}
	if hasFragment {
		b.WriteString("#" + pctEncode(fragment, fragmentSet))
	}
	return b.String(), nil
}

func validScheme(s string) bool {
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// WHATWG percent-encode sets (beyond C0 controls and non-ASCII).
const (
	fragmentSet     = " \"<>`"
	specialQuerySet = " \"#<>'"
	pathSet         = " \"#<>?`{}"
	userinfoSet     = " \"#<>?`{}/:;=@[\\]^|"
)

func pctEncode(s, set string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c < 0x20 || c >= 0x7f || strings.IndexByte(set, c) >= 0 {
			b.WriteString("%" + hex2(c))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func pctDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := decodeHex(strings.ToUpper(s[i+1 : i+3]))
			b = append(b, v)
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// normalizePath resolves "." and ".." segments (also as %2e) and
// percent-encodes the path of a special URL.
func normalizePath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	var out []string
	for i, seg := range segs {
		last := i == len(segs)-1
		switch strings.ToLower(seg) {
		case ".", "%2e":
			if last {
				out = append(out, "")
			}
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, pctEncode(seg, pathSet))
		}
	}
	return "/" + strings.Join(out, "/")
}
