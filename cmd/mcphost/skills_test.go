package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestPluginSkills: `plugin skills` packs skills/ beside a module into it,
// the same files giving the same bytes; inspect and validate list them; a
// skill with a hidden character is refused with the file named, and the
// module stays as it was; --remove takes them out.
func TestPluginSkills(t *testing.T) {
	path := copyPlugin(t, testutil.GoPlugin(t, "plugins/hello"))
	dir := filepath.Join(filepath.Dir(path), "skills", "greeting")
	if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("SKILL.md", "---\nname: greeting\ndescription: Greet with the greet tool.\n---\nCall greet.\n")
	write("references/STYLE.md", "Be brief.\n")
	if _, _, err := runCLI(t, "plugin", "skills", path); err != nil {
		t.Fatalf("plugin skills: %v", err)
	}
	first, _ := os.ReadFile(path)
	if _, _, err := runCLI(t, "plugin", "skills", path); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(path); !bytes.Equal(first, second) {
		t.Error("packing the same skills twice changed the module")
	}
	out, _, err := runCLI(t, "plugin", "inspect", path)
	if err != nil || !strings.Contains(out, "skills   skill://inspected/greeting/SKILL.md") {
		t.Errorf("inspect: %v\n%s", err, out)
	}
	cfg := testutil.WriteConfig(t, "[[plugin]]\nname = \"hello\"\npath = \""+path+"\"\n")
	if out, _, err := runCLI(t, "validate", "--config", cfg); err != nil || !strings.Contains(out, "1 skills: skill://hello/greeting/SKILL.md") {
		t.Errorf("validate: %v\n%s", err, out)
	}

	write("references/STYLE.md", "Be brief.\u202e\n")
	_, _, err = runCLI(t, "plugin", "skills", path)
	if err == nil || !strings.Contains(err.Error(), `skill "greeting": file "references/STYLE.md": its text has an invisible or control character U+202E`) {
		t.Errorf("plugin skills with a hidden character: %v", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, first) {
		t.Error("a refused pack changed the module")
	}
	if _, _, err := runCLI(t, "plugin", "skills", "--remove", path); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := runCLI(t, "plugin", "inspect", path); strings.Contains(out, "skills ") {
		t.Errorf("inspect after --remove still lists skills:\n%s", out)
	}
}
