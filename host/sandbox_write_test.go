package host_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestWritableDirectoryIsConfined: a directory granted with "rw:" can be
// written by the plugin and the files appear on the host; a read-only grant
// next to it stays read-only; and no write, rename or link gets anything
// outside the writable directory, whether by "..", an absolute path, a
// symlink already in the directory (to a file, to a directory, relative or
// absolute) or a symlink the plugin tries to make. The host keeps serving.
func TestWritableDirectoryIsConfined(t *testing.T) {
	base := t.TempDir()
	scratch, ro, outside := filepath.Join(base, "scratch"), filepath.Join(base, "ro"), filepath.Join(base, "outside")
	for _, d := range []string{scratch, ro, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.txt")
	mustWrite(t, secret, "TOP SECRET")
	mustWrite(t, filepath.Join(ro, "hello.txt"), "read-only hello")
	// Links the host's user left in the writable directory, all leading out.
	for link, target := range map[string]string{
		"to-secret":  secret,                                // an existing file outside
		"to-planted": filepath.Join(outside, "planted.txt"), // a file outside that does not exist yet
		"to-outside": outside,                               // a directory outside, absolute
		"up":         "../outside",                          // a directory outside, relative
	} {
		if err := os.Symlink(target, filepath.Join(scratch, link)); err != nil {
			t.Fatal(err)
		}
	}

	s := start(t, faultyConfig+fmt.Sprintf("allowed_paths = { %q = \"/scratch\", %q = \"/data\" }\n", "rw:"+scratch, ro))
	call := func(tool string, args map[string]any) (string, bool) {
		res, text := callText(t, s.session, tool, args)
		return text, !res.IsError
	}
	write := func(path, content string) (string, bool) {
		return call("write_file", map[string]any{"text": path, "content": content})
	}

	t.Run("writes inside the writable directory", func(t *testing.T) {
		if text, ok := write("/scratch/new.txt", "from the plugin"); !ok {
			t.Fatalf("write_file(/scratch/new.txt) = %q", text)
		}
		if b, err := os.ReadFile(filepath.Join(scratch, "new.txt")); err != nil || string(b) != "from the plugin" {
			t.Errorf("host sees %q, %v", b, err)
		}
		if text, ok := write("/scratch/new.txt", "again"); !ok {
			t.Errorf("overwrite = %q", text)
		}
		if text, ok := call("read_file", map[string]any{"text": "/scratch/new.txt"}); !ok || text != "again" {
			t.Errorf("read back = %q, %v", text, ok)
		}
		if text, _ := call("list_dir", map[string]any{"text": "/scratch"}); !strings.Contains(text, "new.txt") {
			t.Errorf("list_dir(/scratch) = %q", text)
		}
		if text, ok := call("rename", map[string]any{"text": "/scratch/new.txt", "to": "/scratch/renamed.txt"}); !ok {
			t.Errorf("rename inside the directory = %q", text)
		}
		if b, err := os.ReadFile(filepath.Join(scratch, "renamed.txt")); err != nil || string(b) != "again" {
			t.Errorf("renamed file on the host = %q, %v", b, err)
		}
	})

	t.Run("concurrent writes", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				res, text := callText(t, s.session, "write_file", map[string]any{"text": fmt.Sprintf("/scratch/c%d.txt", i), "content": fmt.Sprint(i)})
				if res.IsError {
					t.Errorf("write %d = %q", i, text)
				}
			})
		}
		wg.Wait()
		for i := range 8 {
			if b, err := os.ReadFile(filepath.Join(scratch, fmt.Sprintf("c%d.txt", i))); err != nil || string(b) != fmt.Sprint(i) {
				t.Errorf("c%d.txt = %q, %v", i, b, err)
			}
		}
	})

	t.Run("read-only grant stays read-only", func(t *testing.T) {
		for _, path := range []string{"/data/hello.txt", "/data/new.txt"} {
			if text, ok := write(path, "overwritten"); ok {
				t.Errorf("write_file(%q) into a read-only grant succeeded: %q", path, text)
			}
		}
		if text, ok := call("rename", map[string]any{"text": "/data/hello.txt", "to": "/scratch/stolen.txt"}); ok {
			t.Errorf("rename out of the read-only grant succeeded: %q", text)
		}
		if b, _ := os.ReadFile(filepath.Join(ro, "hello.txt")); string(b) != "read-only hello" {
			t.Errorf("read-only file is now %q", b)
		}
		if entries, _ := os.ReadDir(ro); len(entries) != 1 {
			t.Errorf("read-only directory holds %d entries, want 1", len(entries))
		}
	})

	t.Run("writes that would leave are refused", func(t *testing.T) {
		for _, path := range []string{
			"/scratch/../outside/dotdot.txt", // lexical escape
			"/scratch/../../" + strings.TrimPrefix(filepath.Join(outside, "dotdot2.txt"), "/"),
			filepath.Join(outside, "absolute.txt"), // the host path itself
			"/scratch/to-secret",                   // through a symlink to an existing file
			"/scratch/to-planted",                  // through a symlink to a new file
			"/scratch/to-outside/via-abs-dir.txt",  // through a symlinked directory
			"/scratch/up/via-rel-dir.txt",          // through a relative symlinked directory
		} {
			if text, ok := write(path, "ESCAPED"); ok {
				t.Errorf("write_file(%q) succeeded: %q", path, text)
			}
		}
		if text, ok := call("read_file", map[string]any{"text": "/scratch/to-secret"}); ok || strings.Contains(text, "SECRET") {
			t.Errorf("read through a symlink out of the writable grant = %q", text)
		}
	})

	t.Run("links are refused", func(t *testing.T) {
		for _, target := range []string{secret, "renamed.txt", "../outside"} {
			if text, ok := call("symlink", map[string]any{"text": "/scratch/planted-link", "to": target}); ok {
				t.Errorf("symlink to %q succeeded: %q", target, text)
			}
		}
		if _, err := os.Lstat(filepath.Join(scratch, "planted-link")); !os.IsNotExist(err) {
			t.Errorf("a link was planted: %v", err)
		}
	})

	t.Run("renames that would leave are refused", func(t *testing.T) {
		mustWrite(t, filepath.Join(scratch, "movable.txt"), "movable")
		for _, to := range []string{
			"/scratch/to-outside/moved.txt",
			"/scratch/up/moved.txt",
			"/scratch/../outside/moved.txt",
			filepath.Join(outside, "moved.txt"),
			"/data/moved.txt",
		} {
			if text, ok := call("rename", map[string]any{"text": "/scratch/movable.txt", "to": to}); ok {
				t.Errorf("rename to %q succeeded: %q", to, text)
			}
		}
		if text, ok := call("rename", map[string]any{"text": "/scratch/to-secret", "to": "/scratch/to-secret-moved"}); !ok {
			// Moving a link within the directory moves the link, not its target.
			t.Errorf("rename of a link inside the directory = %q", text)
		}
		if b, err := os.ReadFile(filepath.Join(scratch, "movable.txt")); err != nil || string(b) != "movable" {
			t.Errorf("movable.txt = %q, %v", b, err)
		}
	})

	// Nothing appeared outside, and the secret is untouched.
	if b, _ := os.ReadFile(secret); string(b) != "TOP SECRET" {
		t.Errorf("secret is now %q", b)
	}
	for dir, want := range map[string][]string{outside: {"secret.txt"}, base: {"outside", "ro", "scratch"}} {
		var names []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s holds %v, want %v", dir, names, want)
		}
	}
	if _, text := callText(t, s.session, "echo", map[string]any{"text": "still here"}); text != "still here" {
		t.Errorf("plugin broken after refused writes: %q", text)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
