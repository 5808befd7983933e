package skills

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/wasmbin"
)

const manifest = "---\nname: pdf-tools\ndescription: Fill PDF forms with the plugin's tools.\nlicense: MIT\nmetadata:\n  version: \"1.2\"\nwhen: 2024-01-02\n---\n\n# PDF tools\n\nSee references/FORMS.md.\n"

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPackIsDeterministicAndParses: the same files give the same bytes,
// dotfiles are skipped, and Parse gives the front matter as JSON values
// (a date stays a string), SKILL.md first with its digest and size.
func TestPackIsDeterministicAndParses(t *testing.T) {
	files := map[string]string{
		"pdf-tools/SKILL.md":            manifest,
		"pdf-tools/references/FORMS.md": "# Forms\n",
		"pdf-tools/scripts/fill.py":     "print('fill')\n",
		"pdf-tools/.DS_Store":           "\x00junk",
		".git/config":                   "x",
	}
	a, err := Pack(writeTree(t, files))
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	b, err := Pack(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("two packs of the same files differ:\n%s\n%s", a, b)
	}
	got, err := Parse(a)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(got) != 1 || got[0].Name != "pdf-tools" || len(got[0].Files) != 3 {
		t.Fatalf("Parse = %+v", got)
	}
	s := got[0]
	if s.Files[0].Path != ManifestName || s.Files[0].MIMEType != "text/markdown" || s.Files[0].Size() != len(manifest) ||
		!strings.HasPrefix(s.Files[0].Digest, "sha256:") || len(s.Files[0].Digest) != 71 {
		t.Errorf("first file = %+v", s.Files[0])
	}
	if s.Files[2].Path != "scripts/fill.py" || s.Files[2].MIMEType != "text/x-python" {
		t.Errorf("third file = %+v", s.Files[2])
	}
	if s.Frontmatter["when"] != "2024-01-02" || s.Frontmatter["metadata"].(map[string]any)["version"] != "1.2" {
		t.Errorf("front matter = %#v", s.Frontmatter)
	}
}

// TestParseRefuses: each fault refuses the skills, naming the skill and
// the file.
func TestParseRefuses(t *testing.T) {
	ok := "---\nname: s\ndescription: d\n---\nbody\n"
	cases := []struct {
		name  string
		files []File
		want  string
	}{
		{"hidden character", []File{{"s/SKILL.md", ok}, {"s/references/A.md", "look\u200bhere"}}, `skill "s": file "references/A.md": its text has an invisible or control character U+200B`},
		{"hidden in SKILL.md", []File{{"s/SKILL.md", "---\nname: s\ndescription: d\u202e\n---\n"}}, `file "SKILL.md": its text has an invisible or control character U+202E`},
		{"traversal", []File{{"s/SKILL.md", ok}, {"s/../x.md", "x"}}, `file "s/../x.md": path segment ".."`},
		{"absolute", []File{{"/etc/passwd", "x"}}, "absolute path"},
		{"backslash", []File{{`s\..\x`, "x"}}, "absolute path, or one with '\\'"},
		{"outside a skill", []File{{"README.md", "x"}}, "outside any skill"},
		{"duplicate", []File{{"s/SKILL.md", ok}, {"s/SKILL.md", ok}}, `"s/SKILL.md" is there twice`},
		{"file and directory", []File{{"s/SKILL.md", ok}, {"s/a", "x"}, {"s/a/b", "y"}}, `"s/a" is a file and a directory`},
		{"no SKILL.md", []File{{"s/README.md", ok}}, `skill "s": no SKILL.md`},
		{"name differs", []File{{"s/SKILL.md", "---\nname: t\ndescription: d\n---\n"}}, `name "t" differs from its directory "s"`},
		{"bad name", []File{{"Bad--Name/SKILL.md", ok}}, `skill "Bad--Name": the directory's name is no skill name`},
		{"no description", []File{{"s/SKILL.md", "---\nname: s\n---\n"}}, "no description (required)"},
		{"no front matter", []File{{"s/SKILL.md", "# s\n"}}, "does not begin with YAML front matter"},
		{"unterminated", []File{{"s/SKILL.md", "---\nname: s\n"}}, "has no end"},
		{"not YAML", []File{{"s/SKILL.md", "---\nname: [s\n---\n"}}, "front matter is not YAML"},
		{"duplicate key", []File{{"s/SKILL.md", "---\nname: s\nname: s\ndescription: d\n---\n"}}, `the key "name" is there twice`},
		{"metadata number", []File{{"s/SKILL.md", "---\nname: s\ndescription: d\nmetadata:\n  version: 1.0\n---\n"}}, "metadata.version is not a string"},
		{"reserved metadata", []File{{"s/SKILL.md", "---\nname: s\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n---\n"}}, "is reserved for MCP extensions"},
		{"alias", []File{{"s/SKILL.md", "---\nname: &n s\ndescription: *n\n---\n"}}, "anchors and aliases are not read"},
		{"merge key", []File{{"s/SKILL.md", "---\nname: s\ndescription: d\nx:\n  <<: {a: b}\n---\n"}}, "a key that is not a string (!!merge)"},
		{"infinity", []File{{"s/SKILL.md", "---\nname: s\ndescription: d\nx: .inf\n---\n"}}, "is no JSON number"},
		{"long description", []File{{"s/SKILL.md", "---\nname: s\ndescription: " + strings.Repeat("d", 1025) + "\n---\n"}}, "description of 1025 characters (at most 1024)"},
		{"file too big", []File{{"s/SKILL.md", ok}, {"s/big.md", strings.Repeat("x", MaxFileBytes+1)}}, `file "big.md": 1048577 bytes`},
		{"space in name", []File{{"s/SKILL.md", ok}, {"s/a b.md", "x"}}, "names are letters, digits"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := Encode(c.files)
			if err == nil {
				t.Fatalf("Encode accepted %v: %s", c.files, data)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
	// Hidden text is hostile, as in a tool's description.
	_, err := Encode([]File{{"s/SKILL.md", ok}, {"s/a.md", "\u2066x"}})
	if !bridge.IsHostile(err) {
		t.Errorf("hidden character error %v is not hostile", err)
	}
}

// TestSizeCaps: a skill of more than 512 files, and a section over
// MaxSectionBytes, are refused.
func TestSizeCaps(t *testing.T) {
	files := []File{{"s/SKILL.md", "---\nname: s\ndescription: d\n---\n"}}
	for i := range MaxFilesPerSkill {
		files = append(files, File{Path: "s/f" + strconv.Itoa(i) + ".md", Text: "x"})
	}
	if _, err := Encode(files); err == nil || !strings.Contains(err.Error(), "513 files, more than a skill may hold (512") {
		t.Errorf("513 files: %v", err)
	}
	big := []File{{"s/SKILL.md", "---\nname: s\ndescription: d\n---\n"}}
	for i := range 5 {
		big = append(big, File{Path: "s/big" + strconv.Itoa(i) + ".md", Text: strings.Repeat("y", MaxFileBytes)})
	}
	if _, err := Encode(big); err == nil || !strings.Contains(err.Error(), "more than a module may carry") {
		t.Errorf("5 MiB of skills: %v", err)
	}
}

// TestPackRefusesSymlinks: a link in the skills directory is an error, not
// followed.
func TestPackRefusesSymlinks(t *testing.T) {
	dir := writeTree(t, map[string]string{"s/SKILL.md": "---\nname: s\ndescription: d\n---\n"})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "s", "passwd")); err != nil {
		t.Skip(err)
	}
	if _, err := Pack(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Pack with a symlink: %v", err)
	}
}

// TestEmbedFindStrip: the section round-trips through a module, replaces
// an earlier one, is found in a file by its headers alone, and two of them
// are refused.
func TestEmbedFindStrip(t *testing.T) {
	module := wasmbin.AppendSection(append([]byte(nil), wasmbin.Header...), 1, []byte{0}) // an empty type section
	data, err := Encode([]File{{"s/SKILL.md", "---\nname: s\ndescription: d\n---\n"}})
	if err != nil {
		t.Fatal(err)
	}
	w1, err := Embed(module, []byte(`{"format":1,"files":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	w2, err := Embed(w1, data)
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := Find(w2)
	if err != nil || !found || !bytes.Equal(got, data) {
		t.Fatalf("Find = %q, %v, %v", got, found, err)
	}
	path := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(path, w2, 0o644); err != nil {
		t.Fatal(err)
	}
	got, found, err = FindInFile(path)
	if err != nil || !found || !bytes.Equal(got, data) {
		t.Fatalf("FindInFile = %q, %v, %v", got, found, err)
	}
	stripped, err := Embed(w2, nil)
	if err != nil || !bytes.Equal(stripped, module) {
		t.Fatalf("Embed(nil) = %x, %v; want the module back", stripped, err)
	}
	body := wasmbin.AppendName(nil, SectionName)
	twice := wasmbin.AppendSection(w2, 0, append(body, data...))
	if _, _, err := Find(twice); err == nil || !strings.Contains(err.Error(), "two mcphost.skills sections") {
		t.Errorf("Find of two sections: %v", err)
	}
	if err := os.WriteFile(path, twice, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := FindInFile(path); err == nil || !strings.Contains(err.Error(), "two mcphost.skills sections") {
		t.Errorf("FindInFile of two sections: %v", err)
	}
}

// BenchmarkLoadSkills measures what a load adds for a plugin's skills:
// finding the section in a 4 MB module (in memory, and in its file by the
// section headers alone, as for a plugin served from its cached
// description) and parsing and checking plugins/everything's skill.
func BenchmarkLoadSkills(b *testing.B) {
	dir := filepath.Join("..", "..", "..", "plugins", "everything", "skills")
	data, err := Pack(dir)
	if err != nil {
		b.Fatal(err)
	}
	module := wasmbin.AppendSection(append([]byte(nil), wasmbin.Header...), 1, []byte{0})
	module = wasmbin.AppendSection(module, 10, bytes.Repeat([]byte{0}, 4<<20)) // a code section's size
	wasm, err := Embed(module, data)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "m.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("Find", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := Find(wasm); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("FindInFile", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := FindInFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Parse(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
