package config

import (
	"strings"
	"testing"
)

// TestMaxSessions: [server] max_sessions defaults to DefaultMaxSessions,
// takes 1 to MaxMaxSessions, and anything else is refused with an error
// naming the file, the line and the key.
func TestMaxSessions(t *testing.T) {
	cfg, err := Parse("x.toml", []byte("[server]\nmax_sessions = 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.MaxSessions != 3 {
		t.Errorf("max_sessions = %d, want 3", cfg.Server.MaxSessions)
	}
	cfg, err = Parse("x.toml", []byte("[server]\nname = \"x\"\n"))
	if err != nil || cfg.Server.MaxSessions != DefaultMaxSessions {
		t.Errorf("absent max_sessions: %v, %d, want the default %d", err, cfg.Server.MaxSessions, DefaultMaxSessions)
	}
	for _, tc := range []struct{ text, want string }{
		{"[server]\nmax_sessions = -1\n", "x.toml:2: [server] max_sessions: -1 is out of range (expected 1 to 1000000)"},
		{"[server]\nmax_sessions = 0\n", "x.toml:2: [server] max_sessions: 0 is out of range (expected 1 to 1000000)"},
		{"[server]\nname = \"x\"\nmax_sessions = 1000001\n", "x.toml:3: [server] max_sessions: 1000001 is out of range"},
		{"[server]\nmax_sessions = \"many\"\n", `x.toml:2: [server] max_sessions: want a whole number, got "many"`},
		{"[server]\nmax_sessions = 2.5\n", `x.toml:2: [server] max_sessions: want a whole number, got 2.5`},
	} {
		_, err := Parse("x.toml", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to say %q", tc.text, err, tc.want)
		}
	}
}

// TestMaxSessionsPerUser: [server] max_sessions_per_user defaults to
// DefaultMaxSessionsPerUser, or to max_sessions when that is smaller,
// takes 1 to max_sessions, and anything else is refused with an error
// naming the file, the line and the key.
func TestMaxSessionsPerUser(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"[server]\nmax_sessions_per_user = 3\n", 3},
		{"[server]\nname = \"x\"\n", DefaultMaxSessionsPerUser},
		{"[server]\nmax_sessions = 5\n", 5},
		{"[server]\nmax_sessions = 5\nmax_sessions_per_user = 5\n", 5},
	} {
		cfg, err := Parse("x.toml", []byte(tc.text))
		if err != nil || cfg.Server.MaxSessionsPerUser != tc.want {
			t.Errorf("%q: %v, max_sessions_per_user = %d, want %d", tc.text, err, cfg.Server.MaxSessionsPerUser, tc.want)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"[server]\nmax_sessions_per_user = 0\n", "x.toml:2: [server] max_sessions_per_user: 0 is out of range (expected 1 to 1000000)"},
		{"[server]\nmax_sessions_per_user = -2\n", "x.toml:2: [server] max_sessions_per_user: -2 is out of range"},
		{"[server]\nmax_sessions = 5\nmax_sessions_per_user = 6\n", "x.toml:3: [server] max_sessions_per_user: 6 is more than max_sessions (5)"},
		{"[server]\nmax_sessions_per_user = 1001\n", "x.toml:2: [server] max_sessions_per_user: 1001 is more than max_sessions (1000)"},
		{"[server]\nmax_sessions_per_user = \"few\"\n", `x.toml:2: [server] max_sessions_per_user: want a whole number, got "few"`},
	} {
		_, err := Parse("x.toml", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to say %q", tc.text, err, tc.want)
		}
	}
}
