package plugin

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestLogWriterJoinsLines: a guest's output reaches the log a line at a
// time however it is split across fd_write calls; a line without its
// newline waits for the end of the call; a line longer than
// maxOutputLineBytes is logged once, cut, and the rest of it dropped.
func TestLogWriterJoinsLines(t *testing.T) {
	var buf bytes.Buffer
	w := &logWriter{
		logger: hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, Level: hclog.Info}),
		stream: "stderr",
		limit:  newOutputBudget(),
	}
	lines := func() []string {
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if l == "" {
				continue
			}
			var rec struct{ Line string }
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			got = append(got, rec.Line)
		}
		buf.Reset()
		return got
	}
	for _, part := range []string{"pan", "ic: ", "boom\n\ngoroutine 1", " [running]:\nmain.f()"} {
		w.Write([]byte(part))
	}
	if got, want := lines(), []string{"panic: boom", "", "goroutine 1 [running]:"}; !slices.Equal(got, want) {
		t.Errorf("logged %q, want %q", got, want)
	}
	w.flush()
	if got := lines(); !slices.Equal(got, []string{"main.f()"}) {
		t.Errorf("flush logged %q, want the partial line", got)
	}
	w.flush()
	if got := lines(); len(got) != 0 {
		t.Errorf("a second flush logged %q", got)
	}

	long := strings.Repeat("x", 1000)
	for range 10 {
		w.Write([]byte(long))
	}
	w.Write([]byte("tail\nnext\n"))
	got := lines()
	if len(got) != 2 || len(got[0]) > maxOutputLineBytes || !strings.Contains(got[0], "truncated") || got[1] != "next" {
		t.Errorf("a 10000-byte line logged as %d lines: %.80q…", len(got), got)
	}
}
