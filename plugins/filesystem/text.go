package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// jsIsSpace is JavaScript's \s: WhiteSpace and LineTerminator.
func jsIsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// jsTrim is String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, jsIsSpace) }

// jsTrimStart is String.prototype.trimStart.
func jsTrimStart(s string) string { return strings.TrimLeftFunc(s, jsIsSpace) }

// leadingSpace is what /^\s*/ matches.
func leadingSpace(s string) string { return s[:len(s)-len(jsTrimStart(s))] }

// jsLen is a string's length in JavaScript (UTF-16 code units).
func jsLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// padEnd and padStart are JavaScript's, with spaces.
func padEnd(s string, n int) string {
	if l := jsLen(s); l < n {
		return s + strings.Repeat(" ", n-l)
	}
	return s
}

func padStart(s string, n int) string {
	if l := jsLen(s); l < n {
		return strings.Repeat(" ", n-l) + s
	}
	return s
}

// formatSize is the reference's formatSize.
func formatSize(bytes int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	if bytes <= 0 {
		return "0 B"
	}
	i := 0
	for v := bytes; v >= 1024; v /= 1024 {
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d %s", bytes, units[0])
	}
	u := min(i, len(units)-1)
	return toFixed2(bytes, u) + " " + units[u]
}

// toFixed2 is (bytes / 1024**u).toFixed(2): exact, halves rounded up.
func toFixed2(bytes int64, u int) string {
	den := int64(1) << (10 * u)
	num := bytes * 100
	q, rem := num/den, num%den
	if 2*rem >= den {
		q++
	}
	return fmt.Sprintf("%d.%02d", q/100, q%100)
}

// jsDate is Date.prototype.toString in UTC (the plugin's only time zone).
func jsDate(t time.Time) string {
	return t.UTC().Format("Mon Jan 02 2006 15:04:05") + " GMT+0000 (Coordinated Universal Time)"
}

// jsonQuote is JSON.stringify of a string.
func jsonQuote(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&sb, `\u%04x`, r)
			} else {
				sb.WriteRune(r)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// jsNumber is a float64 as JavaScript prints it (integers without ".0").
func jsNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// jsExtname is Node's path.extname (POSIX).
func jsExtname(p string) string {
	base := p[strings.LastIndex(p, "/")+1:]
	i := strings.LastIndex(base, ".")
	if i <= 0 || strings.Trim(base[:i], ".") == "" {
		return ""
	}
	return base[i:]
}

// fileURL is Node's url.pathToFileURL(p).href for an absolute POSIX path.
func fileURL(p string) string {
	var sb strings.Builder
	sb.WriteString("file://")
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c <= 0x20 || c >= 0x7f, c == '"', c == '#', c == '%', c == '<', c == '>', c == '?', c == '`', c == '{', c == '}', c == '\\':
			fmt.Fprintf(&sb, "%%%02X", c)
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}
