package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestRugPullIsHeldUntilAccepted: a plugin update that changes a tool's
// description (and adds a tool) is held out under on_change = "refuse"
// until accepted, and only served with a warning under "warn".
func TestRugPullIsHeldUntilAccepted(t *testing.T) {
	f := newReloadFixture(t, false)
	f.writeConfig(t, fmt.Sprintf(versionedConfig, false)+"on_change = \"refuse\"\n")
	if err := f.host.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(f.dir, "mcphost.lock")
	lock, err := os.ReadFile(lockPath)
	if err != nil || !strings.Contains(string(lock), `"version"`) {
		t.Fatalf("lock file after the first load: %s, %v", lock, err)
	}

	// The update: "version" says something new, and "added" appears.
	copyFile(t, testutil.GoPlugin(t, "testdata/plugins/versioned", "v2"), filepath.Join(f.dir, "versioned.wasm"))
	err = f.host.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "tool added") || !strings.Contains(err.Error(), "tool version") || !strings.Contains(err.Error(), "mcphost plugin accept versioned") {
		t.Fatalf("reload with changed definitions = %v", err)
	}
	if got := toolNames(t, f.session); len(got) != 0 {
		t.Errorf("held-out tools are visible: %v", got)
	}

	// Accepting makes them visible.
	if err := f.host.Accept("versioned"); err != nil {
		t.Fatal(err)
	}
	if err := f.host.Reload(context.Background()); err != nil {
		t.Fatalf("reload after accept: %v", err)
	}
	if got := toolNames(t, f.session); !slices.Equal(got, []string{"added", "version"}) {
		t.Errorf("tools after accept = %v", got)
	}
	if f.version(t) != "v2" {
		t.Error("not serving v2 after accept")
	}
	if err := f.host.Accept("nope"); err == nil {
		t.Error("accepting an unknown plugin succeeded")
	}
}

func TestRugPullIsWarnedByDefault(t *testing.T) {
	f := newReloadFixture(t, false)
	copyFile(t, testutil.GoPlugin(t, "testdata/plugins/versioned", "v2"), filepath.Join(f.dir, "versioned.wasm"))
	if err := f.host.Reload(context.Background()); err != nil {
		t.Fatalf("reload under on_change = warn: %v", err)
	}
	if got := toolNames(t, f.session); !slices.Equal(got, []string{"added", "version"}) {
		t.Errorf("tools = %v", got)
	}
	if !strings.Contains(f.log.String(), "differ from the ones accepted") {
		t.Error("no warning about the changed definitions")
	}
}

func TestUnreadableLockFailsClosed(t *testing.T) {
	f := newReloadFixture(t, false)
	os.WriteFile(filepath.Join(f.dir, "mcphost.lock"), []byte("{not json"), 0o644)
	f.writeConfig(t, fmt.Sprintf(versionedConfig, false)+"on_change = \"refuse\"\n")
	if err := f.host.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "not valid") {
		t.Fatalf("reload with a corrupt lock = %v", err)
	}
	if got := toolNames(t, f.session); len(got) != 0 {
		t.Errorf("tools served with an unreadable lock under refuse: %v", got)
	}
}
