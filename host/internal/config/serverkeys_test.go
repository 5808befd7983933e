package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// TestEveryServerFieldHasItsKey: a field added to Server without a name
// in serverKeys would be reported as "" by ChangedServerKeys.
func TestEveryServerFieldHasItsKey(t *testing.T) {
	st := reflect.TypeFor[Server]()
	for i := range st.NumField() {
		if serverKeys[st.Field(i).Name] == "" {
			t.Errorf("Server.%s has no key in serverKeys", st.Field(i).Name)
		}
	}
	if len(serverKeys) != st.NumField() {
		t.Errorf("serverKeys names %d fields, Server has %d", len(serverKeys), st.NumField())
	}
}

func TestChangedServerKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcphost.toml") // one file, as a reload reads
	load := func(server string) Server {
		if err := os.WriteFile(path, []byte("[server]\n"+server), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Written
	}
	was := load("max_sessions = 10\n")
	if got := ChangedServerKeys(was, load("max_sessions = 10\n")); len(got) != 0 {
		t.Errorf("the same file: changed %v", got)
	}
	now := load("max_sessions = 20\nsession_timeout = \"5m\"\n[server.metrics]\nenabled = true\n")
	// max_sessions_per_user was not written, but its default (the smaller
	// of 100 and max_sessions) follows max_sessions: its value changes too.
	if got, want := ChangedServerKeys(was, now), []string{"session_timeout", "max_sessions", "max_sessions_per_user", "metrics"}; !slices.Equal(got, want) {
		t.Errorf("changed %v, want %v", got, want)
	}
}
