package reftest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the test's own zone data, independent of the machine's
)

// The time plugin against the documented behaviour of mcp-server-time
// (src/time/src/mcp_server_time/server.py): result text as Python's
// json.dumps(indent=2) of TimeResult / TimeConversionResult, and its error
// texts, compared with Go's own computation at the time of the call.

func ftTimeConfig(t *testing.T, extra string) string {
	return ftServerConfig + fmt.Sprintf("[[plugin]]\nname = \"time\"\npath = %q\n%s", pluginPath(t, "time"), extra)
}

// timeJSON is the reference's text of a TimeResult, indented by pad.
func timeJSON(pad, zone, datetime, day string, dst bool) string {
	return fmt.Sprintf("{\n%s  \"timezone\": %q,\n%s  \"datetime\": %q,\n%s  \"day_of_week\": %q,\n%s  \"is_dst\": %t\n%s}",
		pad, zone, pad, datetime, pad, day, pad, dst, pad)
}

// pyISO is Python's isoformat(timespec="seconds") of t.
func pyISO(t time.Time) string { return t.Format("2006-01-02T15:04:05-07:00") }

// pyHours is the reference's time_difference for a difference in seconds.
func pyHours(seconds int) string {
	h := float64(seconds) / 3600
	if seconds%3600 == 0 {
		s := strconv.FormatFloat(h, 'f', 1, 64)
		if h >= 0 {
			s = "+" + s
		}
		return s + "h"
	}
	s := strconv.FormatFloat(h, 'f', 2, 64)
	if h >= 0 {
		s = "+" + s
	}
	return strings.TrimRight(strings.TrimRight(s, "0"), ".") + "h"
}

func TestTimeTools(t *testing.T) {
	cs := startMcphost(t, ftTimeConfig(t, ""), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"get_current_time": {"timezone"},
		"convert_time":     {"source_timezone", "time", "target_timezone"},
	}
	if len(res.Tools) != 2 {
		t.Fatalf("%d tools, want 2", len(res.Tools))
	}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string
			Properties map[string]struct{ Type, Description string }
			Required   []string
		}
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(schema.Required) != fmt.Sprint(want[tool.Name]) || len(schema.Properties) != len(want[tool.Name]) {
			t.Errorf("%s: schema %s", tool.Name, b)
		}
		for name, p := range schema.Properties {
			if p.Type != "string" {
				t.Errorf("%s.%s: type %q", tool.Name, name, p.Type)
			}
		}
		if tool.Name == "get_current_time" {
			if d := schema.Properties["timezone"].Description; d != "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'UTC' as local timezone if no timezone provided by the user." {
				t.Errorf("timezone description %q", d)
			}
			if tool.Description != "Get current time in a specific timezone" {
				t.Errorf("description %q", tool.Description)
			}
		}
		if a := tool.Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v", tool.Name, tool.Annotations)
		}
	}
}

func TestTimeLocalZoneFromConfig(t *testing.T) {
	cs := startMcphost(t, ftTimeConfig(t, `config = { local_timezone = "Europe/Paris" }`), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(b), "Use 'Europe/Paris' as local timezone") {
			t.Errorf("%s: the configured local zone is not offered: %s", tool.Name, b)
		}
	}
}

func TestTimeGetCurrentTime(t *testing.T) {
	cs := startMcphost(t, ftTimeConfig(t, ""), nil)
	for _, zone := range []string{"UTC", "America/New_York", "Europe/London", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham", "America/St_Johns", "Europe/Dublin"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now().Truncate(time.Second)
		r := ftCall(t, cs, "get_current_time", map[string]any{"timezone": zone})
		after := time.Now()
		var got struct {
			Datetime string `json:"datetime"`
		}
		if err := json.Unmarshal([]byte(r.Text), &got); err != nil {
			t.Fatalf("%s: %v: %q", zone, err, r.Text)
		}
		at, err := time.Parse(time.RFC3339, got.Datetime)
		if err != nil || at.Before(before) || at.After(after) {
			t.Errorf("%s: datetime %q is not the time of the call (%v..%v): %v", zone, got.Datetime, before, after, err)
			continue
		}
		local := at.In(loc)
		ftWant(t, zone, r, false, timeJSON("", zone, pyISO(local), local.Weekday().String(), local.IsDST()))
	}
}

func TestTimeConvert(t *testing.T) {
	cs := startMcphost(t, ftTimeConfig(t, ""), nil)
	cases := []struct{ src, hhmm, dst, diff string }{
		{"UTC", "12:00", "Asia/Kolkata", "+5.5h"},
		{"Asia/Kolkata", "09:30", "UTC", "-5.5h"},
		{"UTC", "12:00", "Asia/Kathmandu", "+5.75h"},
		{"Asia/Tokyo", "12:00", "UTC", "-9.0h"},
		{"UTC", "12:00", "UTC", "+0.0h"},
		{"Asia/Tokyo", "9:5", "Asia/Tokyo", "+0.0h"},
		// Zones with and without DST, and in opposite hemispheres: the
		// difference depends on today's date, so it is computed below.
		{"America/New_York", "12:00", "Europe/London", ""},
		{"Europe/Berlin", "12:00", "Australia/Sydney", ""},
		{"America/Los_Angeles", "12:00", "Pacific/Auckland", ""},
		{"America/St_Johns", "12:00", "Asia/Kolkata", ""},
	}
	for _, c := range cases {
		src, _ := time.LoadLocation(c.src)
		dst, _ := time.LoadLocation(c.dst)
		h, _ := strconv.Atoi(strings.Split(c.hhmm, ":")[0])
		m, _ := strconv.Atoi(strings.Split(c.hhmm, ":")[1])
		// The reference takes today's date in the source zone; a call
		// across midnight there is retried once with the new date.
		var r ftResult
		var want string
		for try := 0; try < 2; try++ {
			today := time.Now().In(src)
			r = ftCall(t, cs, "convert_time", map[string]any{"source_timezone": c.src, "time": c.hhmm, "target_timezone": c.dst})
			// 12:00 and 09:30 are never inside a DST transition, so
			// time.Date's choice is the reference's.
			s := time.Date(today.Year(), today.Month(), today.Day(), h, m, 0, 0, src)
			d := s.In(dst)
			_, so := s.Zone()
			_, do := d.Zone()
			diff := pyHours(do - so)
			if c.diff != "" && c.diff != diff {
				t.Fatalf("%s -> %s: the test expects %s, Go computes %s", c.src, c.dst, c.diff, diff)
			}
			want = "{\n  \"source\": " + timeJSON("  ", c.src, pyISO(s), s.Weekday().String(), s.IsDST()) +
				",\n  \"target\": " + timeJSON("  ", c.dst, pyISO(d), d.Weekday().String(), d.IsDST()) +
				",\n  \"time_difference\": \"" + diff + "\"\n}"
			if time.Now().In(src).Day() == today.Day() {
				break
			}
		}
		ftWant(t, c.src+" "+c.hhmm+" -> "+c.dst, r, false, want)
	}
}

func TestTimeErrors(t *testing.T) {
	cs := startMcphost(t, ftTimeConfig(t, ""), nil)
	const prefix = "Error processing mcp-server-time query: "
	cases := []struct {
		tool string
		args map[string]any
		text string
	}{
		{"get_current_time", map[string]any{"timezone": "Mars/Olympus_Mons"}, "Invalid timezone: 'No time zone found with key Mars/Olympus_Mons'"},
		{"get_current_time", map[string]any{"timezone": "Local"}, "Invalid timezone: 'No time zone found with key Local'"},
		{"get_current_time", map[string]any{"timezone": "/etc/localtime"}, "Invalid timezone: ZoneInfo keys may not be absolute paths, got: /etc/localtime"},
		{"get_current_time", map[string]any{"timezone": "../../etc/passwd"}, "Invalid timezone: ZoneInfo keys must refer to subdirectories of TZPATH, got: ../../etc/passwd"},
		{"get_current_time", map[string]any{"timezone": "Europe/../Europe/Paris"}, "Invalid timezone: ZoneInfo keys must be normalized relative paths, got: Europe/../Europe/Paris"},
		{"get_current_time", map[string]any{"timezone": ""}, "Missing required argument: timezone"},
		{"convert_time", map[string]any{"source_timezone": "UTC", "time": "25:00", "target_timezone": "Asia/Tokyo"}, "Invalid time format. Expected HH:MM [24-hour format]"},
		{"convert_time", map[string]any{"source_timezone": "UTC", "time": "12:60", "target_timezone": "Asia/Tokyo"}, "Invalid time format. Expected HH:MM [24-hour format]"},
		{"convert_time", map[string]any{"source_timezone": "UTC", "time": "noon", "target_timezone": "Asia/Tokyo"}, "Invalid time format. Expected HH:MM [24-hour format]"},
		{"convert_time", map[string]any{"source_timezone": "UTC", "time": "12:00:00", "target_timezone": "Asia/Tokyo"}, "Invalid time format. Expected HH:MM [24-hour format]"},
		// Zones are checked before the time, the source before the target.
		{"convert_time", map[string]any{"source_timezone": "Nowhere", "time": "bad", "target_timezone": "Also/Nowhere"}, "Invalid timezone: 'No time zone found with key Nowhere'"},
		{"convert_time", map[string]any{"source_timezone": "UTC", "time": "bad", "target_timezone": "Also/Nowhere"}, "Invalid timezone: 'No time zone found with key Also/Nowhere'"},
	}
	for _, c := range cases {
		ftWant(t, fmt.Sprintf("%s %v", c.tool, c.args), ftCall(t, cs, c.tool, c.args), true, prefix+c.text)
	}
	// A missing argument is refused by the host's schema check, before the
	// plugin runs (the reference's SDK does the same with its own words).
	r := ftCall(t, cs, "convert_time", map[string]any{"source_timezone": "UTC", "time": "12:00"})
	if r.Protocol == nil && !r.IsError {
		t.Errorf("convert_time without target_timezone: %+v", r)
	}
	t.Logf("missing argument: %+v", r)
}
