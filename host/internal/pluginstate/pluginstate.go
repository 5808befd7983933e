// Package pluginstate holds the state plugins keep between calls (the
// state_get and state_set host functions, abi/ABI.md §7, "State that
// outlives an instance").
//
// A plugin's instances are pooled and discarded (a trap, an idle release,
// a reload), and the calls of one client session land on any of them, so a
// plugin cannot keep per-client state in its own memory. The host keeps it
// instead, in memory only (never on disk), as JSON values under string keys,
// in one scope per plugin name and client session (Scope). A scope outlives
// the plugin's instances and generations; it is dropped when its session
// ends (Sweep, DropSession) or the plugin leaves the config (DropPlugin).
//
// Every bound fails closed with an error naming it and its config key: a
// key is 1 to MaxKeyBytes bytes of UTF-8; a scope holds at most the
// plugin's state_kb (keys and values counted); the whole store at most
// [server] max_state_mb.
package pluginstate

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxKeyBytes is the longest key, in bytes.
const MaxKeyBytes = 256

// Scope is whose state a call reaches: one plugin's, for one client
// session.
type Scope struct {
	// Plugin is the plugin's name in the config: its state outlives its
	// instances and reloads, and no other plugin reaches it.
	Plugin string
	// Session is the client session: a stdio connection, or a stateful
	// Streamable HTTP session (Mcp-Session-Id). Nil is the one scope of
	// the plugin shared by every request without a session: stateless
	// (2026-07-28) requests, and calls outside a request (listing at
	// load). The host decides which (see host's stateSession).
	Session *mcp.ServerSession
}

// Store is the state of every plugin of a host. It is safe for concurrent
// use; each Get and Set is atomic (one lock for the store: each holds it
// for a map operation and a size check only).
type Store struct {
	maxBytes int64 // [server] max_state_mb, in bytes
	maxMB    int   // the same, as the config says it, for errors
	// open lists the server's open sessions; nil until the host has a
	// server (then Sweep drops nothing).
	open func() iter.Seq[*mcp.ServerSession]

	mu      sync.Mutex
	total   int64 // bytes of keys and values in every scope
	created uint64
	scopes  map[Scope]*scope
}

// scope is one scope's values: JSON, compact, never modified once stored.
type scope struct {
	bytes   int64 // keys and values
	created uint64
	values  map[string][]byte
}

// New returns an empty store of at most maxMB MiB ([server]
// max_state_mb); open lists the server's open sessions (nil: none known
// yet, see SetSessions).
func New(maxMB int, open func() iter.Seq[*mcp.ServerSession]) *Store {
	return &Store{maxBytes: int64(maxMB) << 20, maxMB: maxMB, open: open, scopes: map[Scope]*scope{}}
}

// SetSessions sets what lists the server's open sessions, once the host
// has made its server.
func (s *Store) SetSessions(open func() iter.Seq[*mcp.ServerSession]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = open
}

// CheckKey returns an error unless key is 1 to MaxKeyBytes bytes of UTF-8.
func CheckKey(key string) error {
	switch {
	case key == "":
		return errors.New("key is empty (a key is 1 to 256 bytes of UTF-8)")
	case len(key) > MaxKeyBytes:
		return fmt.Errorf("key of %d bytes is too long (a key is 1 to %d bytes of UTF-8)", len(key), MaxKeyBytes)
	case !utf8.ValidString(key):
		return fmt.Errorf("key is not UTF-8 (a key is 1 to %d bytes of UTF-8)", MaxKeyBytes)
	}
	return nil
}

// Get returns the value under key in sc, or false when there is none. The
// value must not be modified.
func (s *Store) Get(sc Scope, key string) ([]byte, bool, error) {
	if err := CheckKey(key); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.scopes[sc]
	if st == nil {
		return nil, false, nil
	}
	v, ok := st.values[key]
	return v, ok, nil
}

// Set stores value (compact JSON, which Set keeps: the caller must not
// modify it) under key in sc, or deletes key when value is nil. stateKB
// is the plugin's state_kb: 0 refuses every set (state is off), and the
// scope's keys and values together may not exceed stateKB KiB. A delete
// always succeeds, whatever the bounds. A new scope of a session first
// sweeps the scopes of sessions that ended.
func (s *Store) Set(sc Scope, key string, value []byte, stateKB int) error {
	return s.set(sc, key, value, stateKB, nil)
}

// ErrChanged is SetIf's answer when the key does not hold the value the
// caller expected: another call changed it since it was read.
var ErrChanged = errors.New("the value changed since it was read")

// SetIf is Set (value nil deletes), done only if key holds expect now
// (compact JSON, compared byte for byte; nil: the key holds nothing), as
// one atomic step; otherwise it changes nothing and returns ErrChanged.
// It lets two calls of one session update a value without losing either
// update: each reads, computes, and sets if nothing changed meanwhile,
// else reads again.
func (s *Store) SetIf(sc Scope, key string, expect, value []byte, stateKB int) error {
	if expect == nil {
		expect = []byte{} // distinguishes "expect nothing" from "no condition"
	}
	return s.set(sc, key, value, stateKB, expect)
}

// holds reports whether key in st holds expect (empty: nothing); st may
// be nil.
func holds(st *scope, key string, expect []byte) bool {
	var cur []byte
	ok := false
	if st != nil {
		cur, ok = st.values[key]
	}
	if len(expect) == 0 {
		return !ok
	}
	return ok && bytes.Equal(cur, expect)
}

// set is Set, under the condition that key holds expect when expect is
// not nil (see SetIf).
func (s *Store) set(sc Scope, key string, value []byte, stateKB int, expect []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if value == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if expect != nil && !holds(s.scopes[sc], key, expect) {
			return ErrChanged
		}
		s.deleteLocked(sc, key)
		return nil
	}
	if stateKB <= 0 {
		return fmt.Errorf("state is off for plugin %q (state_kb = 0 in its [[plugin]] table)", sc.Plugin)
	}
	s.mu.Lock()
	st := s.scopes[sc]
	s.mu.Unlock()
	if st == nil && sc.Session != nil {
		s.Sweep()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	st = s.scopes[sc]
	if expect != nil && !holds(st, key, expect) {
		return ErrChanged
	}
	var was int64
	if st != nil {
		if old, ok := st.values[key]; ok {
			was = int64(len(key) + len(old))
		}
	}
	add := int64(len(key)+len(value)) - was
	var scopeBytes int64
	if st != nil {
		scopeBytes = st.bytes
	}
	if limit := int64(stateKB) << 10; scopeBytes+add > limit {
		return fmt.Errorf("plugin %q would keep %d bytes of state for this session, over its state_kb = %d (%d bytes of keys and values)",
			sc.Plugin, scopeBytes+add, stateKB, limit)
	}
	if s.total+add > s.maxBytes {
		return fmt.Errorf("the host would keep %d bytes of plugin state, over [server] max_state_mb = %d (%d bytes)", s.total+add, s.maxMB, s.maxBytes)
	}
	if st == nil {
		s.created++
		st = &scope{created: s.created, values: map[string][]byte{}}
		s.scopes[sc] = st
	}
	st.values[key] = value
	st.bytes += add
	s.total += add
	return nil
}

// deleteLocked deletes key from sc, and sc when it is left empty.
func (s *Store) deleteLocked(sc Scope, key string) {
	st := s.scopes[sc]
	if st == nil {
		return
	}
	old, ok := st.values[key]
	if !ok {
		return
	}
	n := int64(len(key) + len(old))
	delete(st.values, key)
	st.bytes -= n
	s.total -= n
	if len(st.values) == 0 {
		delete(s.scopes, sc)
	}
}

// Sweep drops the scopes of sessions that are no longer among the server's
// open sessions. A scope made while Sweep lists the sessions is kept (its
// session may have opened meanwhile).
func (s *Store) Sweep() {
	s.mu.Lock()
	open, before := s.open, s.created
	s.mu.Unlock()
	if open == nil {
		return
	}
	live := map[*mcp.ServerSession]bool{}
	for ss := range open() {
		live[ss] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc, st := range s.scopes {
		if sc.Session != nil && !live[sc.Session] && st.created <= before {
			s.dropLocked(sc, st)
		}
	}
}

// DropSession drops every plugin's state for the session ss, which ended.
func (s *Store) DropSession(ss *mcp.ServerSession) {
	if ss == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc, st := range s.scopes {
		if sc.Session == ss {
			s.dropLocked(sc, st)
		}
	}
}

// DropPlugin drops every scope of the plugin named plugin (it left the
// config, or its state was turned off).
func (s *Store) DropPlugin(plugin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc, st := range s.scopes {
		if sc.Plugin == plugin {
			s.dropLocked(sc, st)
		}
	}
}

func (s *Store) dropLocked(sc Scope, st *scope) {
	s.total -= st.bytes
	delete(s.scopes, sc)
}

// Usage returns how many scopes hold state and their bytes (keys and
// values), in all.
func (s *Store) Usage() (scopes int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.scopes), s.total
}
