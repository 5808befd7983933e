package main

import (
	"testing"
	"time"
)

// TestConversionEdges checks the cases where Go's time.Date and Python's
// zoneinfo (fold=0) could part: a wall time skipped or repeated by a DST
// transition takes the offset in force before the transition.
func TestConversionEdges(t *testing.T) {
	cases := []struct {
		src, hhmm, dst string
		day            time.Time
		srcISO, dstISO string
		srcDST         bool
		diff           string
	}{
		// New York springs forward at 02:00 on 2024-03-10: 02:30 does not exist.
		{"America/New_York", "02:30", "UTC", time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC), "2024-03-10T02:30:00-05:00", "2024-03-10T07:30:00+00:00", false, "+5.0h"},
		// and falls back at 02:00 on 2024-11-03: 01:30 happens twice.
		{"America/New_York", "01:30", "UTC", time.Date(2024, 11, 3, 12, 0, 0, 0, time.UTC), "2024-11-03T01:30:00-04:00", "2024-11-03T05:30:00+00:00", true, "+4.0h"},
		{"Europe/London", "12:00", "Asia/Kolkata", time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC), "2024-07-01T12:00:00+01:00", "2024-07-01T16:30:00+05:30", true, "+4.5h"},
		{"UTC", "9:5", "Asia/Kathmandu", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), "2024-01-01T09:05:00+00:00", "2024-01-01T14:50:00+05:45", false, "+5.75h"},
		{"Pacific/Auckland", "10:00", "America/Los_Angeles", time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC), "2024-01-15T10:00:00+13:00", "2024-01-14T13:00:00-08:00", true, "-21.0h"},
		{"Asia/Tokyo", "00:00", "Asia/Tokyo", time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC), "2024-01-15T00:00:00+09:00", "2024-01-15T00:00:00+09:00", false, "+0.0h"},
		{"America/St_Johns", "12:00", "UTC", time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC), "2024-01-15T12:00:00-03:30", "2024-01-15T15:30:00+00:00", false, "+3.5h"},
	}
	for _, c := range cases {
		r, err := conversion(c.src, c.hhmm, c.dst, c.day)
		if err != nil {
			t.Fatalf("%s %s: %v", c.src, c.hhmm, err)
		}
		if r.Source.Datetime != c.srcISO || r.Target.Datetime != c.dstISO || r.Source.IsDST != c.srcDST || r.TimeDifference != c.diff {
			t.Errorf("%s %s %s: got %+v", c.src, c.hhmm, c.dst, r)
		}
	}
}

func TestZoneAndTimeErrors(t *testing.T) {
	for key, want := range map[string]string{
		"Foo/Bar":        "'No time zone found with key Foo/Bar'",
		"Local":          "'No time zone found with key Local'",
		"/etc/localtime": "ZoneInfo keys may not be absolute paths, got: /etc/localtime",
		"../etc":         "ZoneInfo keys must refer to subdirectories of TZPATH, got: ../etc",
		"America/../UTC": "ZoneInfo keys must be normalized relative paths, got: America/../UTC",
		"":               "ZoneInfo keys must be normalized relative paths, got: ",
		"UTC/":           "ZoneInfo keys must be normalized relative paths, got: UTC/",
	} {
		if _, err := loadZone(key); err == nil || err.Error() != want {
			t.Errorf("loadZone(%q) = %v, want %q", key, err, want)
		}
	}
	for s, ok := range map[string]bool{"00:00": true, "23:59": true, "9:05": true, "9:5": true, "24:00": false, "12:60": false, "12:0a": false, " 12:00": false, "12:00 ": false, "1200": false, "١٢:٣٠": false, "1٢:3٠": true, "": false, "123:00": false} {
		if _, _, err := parseHHMM(s); (err == nil) != ok {
			t.Errorf("parseHHMM(%q): err %v", s, err)
		}
	}
	if h, m, _ := parseHHMM("1٢:3٠"); h != 12 || m != 30 {
		t.Errorf("Arabic-Indic digits: %d:%d", h, m)
	}
}
