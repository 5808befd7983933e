package pluginstate

import (
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessions is a set of open sessions for a Store to sweep against.
type sessions struct {
	mu   sync.Mutex
	open []*mcp.ServerSession
}

func (s *sessions) list() iter.Seq[*mcp.ServerSession] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Values(slices.Clone(s.open))
}

func (s *sessions) end(ss *mcp.ServerSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = slices.DeleteFunc(s.open, func(o *mcp.ServerSession) bool { return o == ss })
}

func TestScopesAreApart(t *testing.T) {
	a, b := new(mcp.ServerSession), new(mcp.ServerSession)
	st := New(1, (&sessions{open: []*mcp.ServerSession{a, b}}).list)
	must(t, st.Set(Scope{"p", a}, "k", []byte(`"a"`), 1))
	must(t, st.Set(Scope{"p", b}, "k", []byte(`"b"`), 1))
	must(t, st.Set(Scope{"q", a}, "k", []byte(`"qa"`), 1))
	must(t, st.Set(Scope{"p", nil}, "k", []byte(`"shared"`), 1))
	for sc, want := range map[Scope]string{{"p", a}: `"a"`, {"p", b}: `"b"`, {"q", a}: `"qa"`, {"p", nil}: `"shared"`} {
		if v, ok, err := st.Get(sc, "k"); !ok || err != nil || string(v) != want {
			t.Errorf("Get(%v) = %s, %v, %v; want %s", sc, v, ok, err, want)
		}
	}
	if _, ok, _ := st.Get(Scope{"q", b}, "k"); ok {
		t.Error("an unset scope has the key")
	}
}

func TestBoundsNameTheirKeys(t *testing.T) {
	st := New(1, nil)
	sc := Scope{"p", nil}
	for _, key := range []string{"", strings.Repeat("k", MaxKeyBytes+1), "\xff"} {
		if err := st.Set(sc, key, []byte(`1`), 1); err == nil || !strings.Contains(err.Error(), "1 to 256 bytes of UTF-8") {
			t.Errorf("Set key %q: %v", key, err)
		}
	}
	must(t, st.Set(sc, strings.Repeat("k", MaxKeyBytes), []byte(`1`), 1))

	// 1 KiB per scope: keys and values count.
	big := []byte(`"` + strings.Repeat("x", 1000) + `"`)
	err := st.Set(sc, "big", big, 1)
	if err == nil || !strings.Contains(err.Error(), "state_kb = 1") || !strings.Contains(err.Error(), `plugin "p"`) {
		t.Fatalf("past state_kb: %v", err)
	}
	if err := st.Set(sc, "x", []byte(`1`), 0); err == nil || !strings.Contains(err.Error(), "state_kb = 0") {
		t.Errorf("state_kb = 0: %v", err)
	}

	// 1 MiB for the store: 2 scopes of 600 KiB do not fit.
	half := []byte(`"` + strings.Repeat("y", 600<<10) + `"`)
	must(t, st.Set(Scope{"a", nil}, "v", half, 1024))
	err = st.Set(Scope{"b", nil}, "v", half, 1024)
	if err == nil || !strings.Contains(err.Error(), "[server] max_state_mb = 1") {
		t.Fatalf("past max_state_mb: %v", err)
	}
	// Replacing a value counts only the difference; a delete always works.
	must(t, st.Set(Scope{"a", nil}, "v", half, 1024))
	must(t, st.Set(Scope{"a", nil}, "v", nil, 1024))
	must(t, st.Set(Scope{"b", nil}, "v", half, 1024))
	if n, bytes := st.Usage(); n != 2 || bytes != int64(MaxKeyBytes+1+1+len(half)) {
		t.Errorf("Usage = %d scopes, %d bytes", n, bytes)
	}
}

func TestSweepAndDrops(t *testing.T) {
	a, b := new(mcp.ServerSession), new(mcp.ServerSession)
	open := &sessions{open: []*mcp.ServerSession{a, b}}
	st := New(1, open.list)
	must(t, st.Set(Scope{"p", a}, "k", []byte(`1`), 1))
	must(t, st.Set(Scope{"p", b}, "k", []byte(`1`), 1))
	must(t, st.Set(Scope{"q", b}, "k", []byte(`1`), 1))
	must(t, st.Set(Scope{"p", nil}, "k", []byte(`1`), 1))
	open.end(a)
	st.Sweep()
	if _, ok, _ := st.Get(Scope{"p", a}, "k"); ok {
		t.Error("an ended session's state survived Sweep")
	}
	if n, _ := st.Usage(); n != 3 {
		t.Errorf("after Sweep: %d scopes, want 3", n)
	}
	st.DropPlugin("q")
	open.end(b)
	st.DropSession(b)
	if n, bytes := st.Usage(); n != 1 || bytes != 2 {
		t.Errorf("after drops: %d scopes, %d bytes; want the shared one (2 bytes)", n, bytes)
	}
	// A new scope sweeps first.
	c := new(mcp.ServerSession)
	open.mu.Lock()
	open.open = append(open.open, c)
	open.mu.Unlock()
	must(t, st.Set(Scope{"p", b}, "k", []byte(`1`), 1)) // b ended: swept by the next new scope
	must(t, st.Set(Scope{"p", c}, "k", []byte(`1`), 1))
	if _, ok, _ := st.Get(Scope{"p", b}, "k"); ok {
		t.Error("a new scope did not sweep an ended session's")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSetIfOnlyOverWhatWasRead: SetIf writes (or deletes) only when the
// key holds the expected value, nil expecting nothing; otherwise it
// changes nothing and answers ErrChanged, and the bytes counted stay
// right.
func TestSetIfOnlyOverWhatWasRead(t *testing.T) {
	s := New(1, nil)
	sc := Scope{Plugin: "p"}
	steps := []struct {
		expect, value string // "" expect: nothing; "" value: delete
		changed       bool
	}{
		{"1", "2", true},  // nothing there yet
		{"", "1", false},  // created
		{"", "5", true},   // it exists now
		{"2", "5", true},  // stale
		{"1", "2", false}, // over what was read
		{"1", "", true},   // a stale delete
		{"2", "", false},  // deleted
		{"", "10", false}, // created again
	}
	for i, st := range steps {
		var expect, value []byte
		if st.expect != "" {
			expect = []byte(st.expect)
		}
		if st.value != "" {
			value = []byte(st.value)
		}
		err := s.SetIf(sc, "k", expect, value, 1)
		if st.changed != errors.Is(err, ErrChanged) || !st.changed && err != nil {
			t.Fatalf("step %d (expect %q, value %q): %v", i, st.expect, st.value, err)
		}
	}
	if v, ok, _ := s.Get(sc, "k"); !ok || string(v) != "10" {
		t.Errorf("k = %s, %v; want 10", v, ok)
	}
	if n, bytes := s.Usage(); n != 1 || bytes != int64(len("k")+len("10")) {
		t.Errorf("usage %d scopes, %d bytes", n, bytes)
	}
}
