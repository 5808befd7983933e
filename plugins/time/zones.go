package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the IANA database inside the plugin: a sandbox has no /usr/share/zoneinfo
	"unicode"
)

// nowFunc is the clock (WASI's, in the plugin).
var nowFunc = time.Now

// timeResult is the reference's TimeResult.
type timeResult struct {
	Timezone  string
	Datetime  string
	DayOfWeek string
	IsDST     bool
}

// conversionResult is the reference's TimeConversionResult.
type conversionResult struct {
	Source, Target timeResult
	TimeDifference string
}

// json renders r as Python's json.dumps(indent=2) does, each line after the
// first prefixed with indent (for nesting).
func (r timeResult) json(indent string) string {
	var b strings.Builder
	b.WriteString("{\n")
	fmt.Fprintf(&b, "%s  \"timezone\": %s,\n", indent, pyJSONString(r.Timezone))
	fmt.Fprintf(&b, "%s  \"datetime\": %s,\n", indent, pyJSONString(r.Datetime))
	fmt.Fprintf(&b, "%s  \"day_of_week\": %s,\n", indent, pyJSONString(r.DayOfWeek))
	fmt.Fprintf(&b, "%s  \"is_dst\": %t\n", indent, r.IsDST)
	b.WriteString(indent + "}")
	return b.String()
}

func (r conversionResult) json() string {
	return "{\n  \"source\": " + r.Source.json("  ") + ",\n  \"target\": " + r.Target.json("  ") +
		",\n  \"time_difference\": " + pyJSONString(r.TimeDifference) + "\n}"
}

// pyJSONString quotes s as Python's json.dumps does by default
// (ensure_ascii: every non-ASCII character as \uXXXX).
func pyJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x80 && r < 0x10000):
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// loadZone loads an IANA zone the way Python's zoneinfo.ZoneInfo(key)
// accepts or refuses it, with the same messages (the reference prefixes
// them with "Invalid timezone: ").
func loadZone(key string) (*time.Location, error) {
	if strings.HasPrefix(key, "/") {
		return nil, fmt.Errorf("ZoneInfo keys may not be absolute paths, got: %s", key)
	}
	norm := pyNormpath(key)
	if len(norm) != len(key) {
		return nil, fmt.Errorf("ZoneInfo keys must be normalized relative paths, got: %s", key)
	}
	if resolved := pyNormpath("_/" + norm); !strings.HasPrefix(resolved, "_/") {
		return nil, fmt.Errorf("ZoneInfo keys must refer to subdirectories of TZPATH, got: %s", key)
	}
	notFound := fmt.Errorf("'No time zone found with key %s'", key)
	// Go's own names that are no IANA key: "Local" is the machine's zone,
	// "" is UTC; a backslash is refused by Go but is no key either.
	if key == "Local" || strings.ContainsRune(key, '\\') {
		return nil, notFound
	}
	loc, err := time.LoadLocation(key)
	if err != nil {
		return nil, notFound
	}
	return loc, nil
}

// pyNormpath is Python's posixpath.normpath for a relative path.
func pyNormpath(p string) string {
	if p == "" {
		return "."
	}
	initial := ""
	if strings.HasPrefix(p, "/") {
		initial = "/"
		if strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///") {
			initial = "//"
		}
	}
	var out []string
	for _, c := range strings.Split(p, "/") {
		switch {
		case c == "" || c == ".":
		case c != "..", initial == "" && len(out) == 0, len(out) > 0 && out[len(out)-1] == "..":
			out = append(out, c)
		case len(out) > 0:
			out = out[:len(out)-1]
		}
	}
	s := initial + strings.Join(out, "/")
	if s == "" {
		return "."
	}
	return s
}

func zoneError(err error) error { return fmt.Errorf("Invalid timezone: %w", err) }

// isoformat is Python's datetime.isoformat(timespec="seconds") for an
// aware datetime with the given UTC offset.
func isoformat(t time.Time, offset int) string {
	s := t.Format("2006-01-02T15:04:05")
	sign := '+'
	if offset < 0 {
		sign = '-'
		offset = -offset
	}
	s += fmt.Sprintf("%c%02d:%02d", sign, offset/3600, offset%3600/60)
	if offset%60 != 0 {
		s += fmt.Sprintf(":%02d", offset%60)
	}
	return s
}

// currentTime is the reference's get_current_time.
func currentTime(zone string, now time.Time) (timeResult, error) {
	loc, err := loadZone(zone)
	if err != nil {
		return timeResult{}, zoneError(err)
	}
	t := now.In(loc)
	_, off := t.Zone()
	return timeResult{Timezone: zone, Datetime: isoformat(t, off), DayOfWeek: t.Weekday().String(), IsDST: t.IsDST()}, nil
}

// errTimeFormat is the reference's message for a time that is not HH:MM.
var errTimeFormat = errors.New("Invalid time format. Expected HH:MM [24-hour format]")

// parseHHMM parses s as Python's datetime.strptime(s, "%H:%M") does:
// hours 0-23 and minutes 0-59, each one or two (Unicode) decimal digits.
func parseHHMM(s string) (hour, minute int, err error) {
	rs := []rune(s)
	i := 0
	// num matches Python's "2[0-3]|[0-1]\d|\d" (hours, max 23) or
	// "[0-5]\d|\d" (minutes, max 59): the bracketed digits are ASCII, \d
	// any Unicode decimal digit; alternatives are tried in order.
	num := func(max int) (int, bool) {
		if i+1 < len(rs) {
			d1, d2 := rs[i], rs[i+1]
			v2, ok2 := digitValue(d2)
			switch {
			case max == 23 && d1 == '2' && d2 >= '0' && d2 <= '3',
				max == 23 && (d1 == '0' || d1 == '1') && ok2,
				max == 59 && d1 >= '0' && d1 <= '5' && ok2:
				i += 2
				return int(d1-'0')*10 + v2, true
			}
		}
		if i < len(rs) {
			if d, ok := digitValue(rs[i]); ok {
				i++
				return d, true
			}
		}
		return 0, false
	}
	h, ok := num(23)
	if !ok || i >= len(rs) || rs[i] != ':' {
		return 0, 0, errTimeFormat
	}
	i++
	m, ok := num(59)
	if !ok || i != len(rs) {
		return 0, 0, errTimeFormat
	}
	return h, m, nil
}

// digitValue is the value of a Unicode decimal digit (category Nd), as
// Python's \d and int() read it. Unicode encodes each script's digits 0-9
// in one ascending run, so the value is the distance to the run's start
// modulo 10.
func digitValue(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if !unicode.IsDigit(r) {
		return 0, false
	}
	start := r
	for unicode.IsDigit(start - 1) {
		start--
	}
	return int(r-start) % 10, true
}

// period is one stretch of a zone's history with one offset.
type period struct {
	offset int
	isDST  bool
}

// wallOffset is the offset Python's zoneinfo gives a wall time with
// fold=0 (what datetime(..., tzinfo=zone) builds): for a time that is
// skipped or repeated by a transition, the offset in force before it. wall
// is the wall clock read as if it were UTC.
func wallOffset(loc *time.Location, wall time.Time) period {
	// Walk the transitions within two days of the wall time (offsets are
	// less than a day): a transition at instant T from offset b to offset
	// a takes effect, for fold=0, at wall time T+max(b, a).
	t := wall.Add(-48 * time.Hour).In(loc)
	_, off := t.Zone()
	p := period{off, t.IsDST()}
	for {
		_, end := t.ZoneBounds()
		if end.IsZero() || end.After(wall.Add(48*time.Hour)) {
			return p
		}
		next := end.In(loc)
		_, nextOff := next.Zone()
		if end.Unix()+int64(max(p.offset, nextOff)) > wall.Unix() {
			return p
		}
		p = period{nextOff, next.IsDST()}
		t = next
	}
}

// conversion is the reference's convert_time: the time today (in the
// source zone) at hh:mm in the source zone, shown in the target zone.
func conversion(srcZone, hhmm, dstZone string, now time.Time) (conversionResult, error) {
	src, err := loadZone(srcZone)
	if err != nil {
		return conversionResult{}, zoneError(err)
	}
	dst, err := loadZone(dstZone)
	if err != nil {
		return conversionResult{}, zoneError(err)
	}
	h, m, err := parseHHMM(hhmm)
	if err != nil {
		return conversionResult{}, err
	}
	today := now.In(src)
	wall := time.Date(today.Year(), today.Month(), today.Day(), h, m, 0, 0, time.UTC)
	sp := wallOffset(src, wall)
	instant := wall.Add(-time.Duration(sp.offset) * time.Second)
	target := instant.In(dst)
	_, tOff := target.Zone()
	hours := float64(tOff-sp.offset) / 3600
	return conversionResult{
		Source: timeResult{
			Timezone:  srcZone,
			Datetime:  isoformat(wall, sp.offset),
			DayOfWeek: wall.Weekday().String(),
			IsDST:     sp.isDST,
		},
		Target: timeResult{
			Timezone:  dstZone,
			Datetime:  isoformat(target, tOff),
			DayOfWeek: target.Weekday().String(),
			IsDST:     target.IsDST(),
		},
		TimeDifference: hoursDifference(hours),
	}, nil
}

// hoursDifference formats an offset difference in hours as the reference
// does: f"{h:+.1f}h" for whole hours, else f"{h:+.2f}" without trailing
// zeros, then "h".
func hoursDifference(h float64) string {
	if h == math.Trunc(h) {
		return signed(strconv.FormatFloat(h, 'f', 1, 64)) + "h"
	}
	s := signed(strconv.FormatFloat(h, 'f', 2, 64))
	s = strings.TrimRight(s, "0")
	s = strings.TrimRight(s, ".")
	return s + "h"
}

// signed adds the "+" that Python's "+" format flag puts before a
// non-negative number.
func signed(s string) string {
	if strings.HasPrefix(s, "-") {
		return s
	}
	return "+" + s
}
