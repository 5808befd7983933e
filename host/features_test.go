package host_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func TestListsArePaginated(t *testing.T) {
	s := start(t, "[server]\npage_size = 3\n"+helloConfig)
	first, err := s.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) != 3 || first.NextCursor == "" {
		t.Fatalf("first page = %d tools, cursor %q; want 3 and a cursor", len(first.Tools), first.NextCursor)
	}
	second, err := s.session.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Tools) != 1 || second.NextCursor != "" {
		t.Fatalf("second page = %d tools, cursor %q; want 1 and none", len(second.Tools), second.NextCursor)
	}
	if got := toolNames(t, s.session); !slices.Equal(got, []string{"add", "echo", "fail", "greet"}) {
		t.Errorf("all pages = %v", got)
	}
}

func TestConflictingNamesGoToTheFirstPluginAndPrefixRenames(t *testing.T) {
	s := start(t, helloConfig+`
[[plugin]]
name = "hello2"
path = "{hello}"

[[plugin]]
name = "hello3"
path = "{hello}"
prefix = "h3_"
`)
	got := toolNames(t, s.session)
	want := []string{"add", "echo", "fail", "greet", "h3_add", "h3_echo", "h3_fail", "h3_greet"}
	if !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if !strings.Contains(s.log.String(), `tool already offered by another plugin; leaving this one out: plugin=hello2 tool=echo owner=hello`) {
		t.Errorf("no clear log line for the refused duplicate:\n%s", s.log.String())
	}
	// The prefixed tool reaches the plugin under its own name.
	_, text := callText(t, s.session, "h3_echo", map[string]any{"text": "via prefix"})
	if text != "via prefix" {
		t.Errorf("h3_echo = %q", text)
	}
	// And the owner of the unprefixed name is the first plugin: its config
	// greeting is used.
	_, text = callText(t, s.session, "greet", map[string]any{"name": "Ada"})
	if text != "Howdy, Ada!" {
		t.Errorf("greet = %q, want the first plugin's greeting", text)
	}
}

func TestCancellationInterruptsThePlugin(t *testing.T) {
	s := start(t, withTimeout("60s"))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	begin := time.Now()
	go func() {
		_, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: "spin", Arguments: map[string]any{"text": "spinning now"}})
		done <- err
	}()
	// Cancel once the plugin runs the call (it logs the text, then spins),
	// not after a while: a call cancelled before it reached the plugin
	// would prove nothing.
	waitForLog(t, s.log, "spinning now")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call returned %v", err)
	}
	// The plugin must have been interrupted by notifications/cancelled, not
	// left spinning until its 60s timeout: wait for the host to log it.
	waitForLog(t, s.log, "kind=canceled")
	t.Logf("interrupted %v after the call started", time.Since(begin))
	afterFault(t, s)
}

// waitForLog waits until the host log holds text, polling it (the log is
// a buffer, with nothing to wait on); a minute without it fails the test,
// a hang guard only.
func waitForLog(t *testing.T, log *syncBuffer, text string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(log.String(), text); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the host never logged %q; log:\n%s", text, log.String())
		}
	}
}
