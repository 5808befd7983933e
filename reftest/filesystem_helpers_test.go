package reftest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fsFixture is the tree both filesystem servers are compared on: text,
// CRLF, binary and media files, nested directories, a large directory, and
// symbolic links inside, to the outside and dangling.
type fsFixture struct {
	base    string // holds root and outside
	root    string // the allowed directory
	outside string // a directory outside it, with a secret
}

// newFSFixture makes the directories (real paths: no /tmp symlinks to
// make the two servers' paths differ) and fills root.
func newFSFixture(t *testing.T) *fsFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fsFixture{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	if err := os.MkdirAll(f.outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "secret.txt"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.reset(t)
	return f
}

// pngBytes is a 1×1 PNG.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")

// reset empties root and writes the fixture again. Root itself stays:
// mcphost holds it open (its grant), a new directory would not be it.
func (f *fsFixture) reset(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadDir(f.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range old {
		if err := os.RemoveAll(filepath.Join(f.root, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	var lines []string
	for i := 1; i <= 40; i++ {
		lines = append(lines, fmt.Sprintf("line %d: %s", i, strings.Repeat("x", i%7)))
	}
	long := strings.Repeat("0123456789abcdef\n", 300) // > 4 KiB: several chunks for head/tail
	files := map[string]string{
		"a.txt":                   "alpha\nbeta\ngamma\n",
		"b.md":                    "# Title\n\nSome *markdown* text.\nLast line without newline",
		"crlf.txt":                "one\r\ntwo\r\nthree\r\n",
		"lines.txt":               strings.Join(lines, "\n") + "\n",
		"long.txt":                long,
		"empty.txt":               "",
		"code.go":                 "package main\n\nfunc main() {\n\tif true {\n\t\tprintln(\"hi\")\n\t}\n}\n",
		"indent.py":               "def f():\n    x = 1\n    if x:\n        return x\n    return 0\n",
		"utf8.txt":                "héllo wörld ✓ 日本語\n",
		"bad-utf8.txt":            "ok \xff\xfe bad \xe2\x82 end\n",
		"binary.bin":              "\x00\x01\x02\xff\xfe\x00abc",
		"image.png":               string(pngBytes),
		"sound.mp3":               "ID3\x03\x00\x00\x00\x00\x00\x0ffake mp3 data",
		"pic.JPG":                 "\xff\xd8\xff\xe0fake jpeg",
		"vector.svg":              "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
		"space name.txt":          "spaces\n",
		"hash#name%.txt":          "odd name\n",
		".hidden":                 "hidden\n",
		"ticks.md":                "```go\ncode\n```\n",
		"sub/c.txt":               "c\n",
		"sub/d.ts":                "export const d = 1;\n",
		"sub/deep/e.ts":           "export const e = 2;\n",
		"sub/deep/f.js":           "f\n",
		"sub/.git/config":         "[core]\n",
		"node_modules/pkg/i.js":   "module.exports = 1;\n",
		"Zeta.txt":                "Z\n",
		"zeta.txt":                "z\n",
		"_under.txt":              "_\n",
		"10.txt":                  "10\n",
		"9.txt":                   "9\n",
		"big/" + "placeholder.ts": "p\n",
	}
	for i := 0; i < 150; i++ {
		files[fmt.Sprintf("big/file%03d.txt", i)] = strings.Repeat("b", i*13)
	}
	for name, content := range files {
		p := filepath.Join(f.root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"emptydir", "sub/emptydir", "escape"} {
		if err := os.MkdirAll(filepath.Join(f.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link_in":             "a.txt",                                // relative, inside
		"link_in_abs":         filepath.Join(f.root, "b.md"),          // absolute, inside
		"link_dir":            "sub",                                  // a directory, inside
		"escape/link_out":     filepath.Join(f.outside, "secret.txt"), // absolute, outside
		"escape/link_out_rel": "../../outside/secret.txt",             // relative, outside
		"escape/link_out_dir": f.outside,                              // a directory outside
		"dangling":            "does-not-exist.txt",                   // nowhere
		"sub/up":              "..",                                   // back to root
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(f.root, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot describes every entry under root: its type and content (a
// symlink's target), to compare what two servers left behind.
func (f *fsFixture) snapshot(t *testing.T) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(f.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(f.root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			snap[rel] = "link:" + target
		case d.IsDir():
			snap[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			snap[rel] = "file:" + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// sameSnapshot fails the test unless the two trees are the same.
func sameSnapshot(t *testing.T, label string, ours, theirs map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range theirs {
		if ov, ok := ours[k]; !ok {
			diffs = append(diffs, "missing in ours: "+k)
		} else if ov != v {
			diffs = append(diffs, fmt.Sprintf("%s: ours %q, theirs %q", k, ov, v))
		}
	}
	for k := range ours {
		if _, ok := theirs[k]; !ok {
			diffs = append(diffs, "only in ours: "+k)
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: the trees differ:\n%s", label, strings.Join(diffs, "\n"))
	}
}

var (
	tempNameRe = regexp.MustCompile(`\.[0-9a-f]{32}\.tmp`)
	// The times and permission bits of get_file_info differ by design
	// (README: WASI has no birth time, permission bits or time zone; the
	// two servers also run at different times).
	fileInfoRe = regexp.MustCompile(`(?m)^(created|modified|accessed|permissions): .*$`)
)

// fsNorm rewrites what differs between two runs by design.
func fsNorm(s string) string {
	s = tempNameRe.ReplaceAllString(s, ".TEMP.tmp")
	return fileInfoRe.ReplaceAllString(s, "$1: …")
}

// fsServers is a reference server and mcphost serving the same directory.
type fsServers struct {
	f            *fsFixture
	ours, theirs *mcp.ClientSession
}

// fsConfig is an mcphost.toml serving plugins/filesystem with the grants
// given (TOML inline table entries) and config.
func fsConfig(t *testing.T, grants, config string) string {
	return fmt.Sprintf("[server]\nwatch = false\n\n[[plugin]]\nname = \"filesystem\"\npath = %s\ntimeout = \"60s\"\nmemory_mb = 256\nallowed_paths = { %s }\n%s",
		tomlString(pluginPath(t, "filesystem")), grants, config)
}

// startFS starts both servers on a fresh fixture: the reference with root
// as its argument, mcphost with root granted read-write at its own path.
func startFS(t *testing.T) *fsServers {
	t.Helper()
	f := newFSFixture(t)
	theirs := startReference(t, "filesystem", []string{f.root}, []string{"TZ=UTC"}, nil)
	ours := startMcphost(t, fsConfig(t, fmt.Sprintf("%s = %s", tomlString("rw:"+f.root), tomlString(f.root)), ""), nil)
	return &fsServers{f: f, ours: ours, theirs: theirs}
}

// compare makes the same call on a fresh fixture to each server and
// compares the outcomes and the trees they leave.
func (s *fsServers) compare(t *testing.T, tool string, args map[string]any) {
	t.Helper()
	label := fmt.Sprintf("%s %s", tool, jsonText(args))
	s.f.reset(t)
	theirs := call(t, s.theirs, tool, args)
	theirTree := s.f.snapshot(t)
	s.f.reset(t)
	ours := call(t, s.ours, tool, args)
	ourTree := s.f.snapshot(t)
	sameOutcome(t, label, fsNormOutcome(ours), fsNormOutcome(theirs), nil)
	sameSnapshot(t, label, ourTree, theirTree)
}

// fsNormOutcome applies fsNorm to the texts of o, structured content
// included.
func fsNormOutcome(o Outcome) Outcome {
	o = normalized(o, fsNorm)
	if m, ok := o.Structured.(map[string]any); ok {
		if c, ok := m["content"].(string); ok {
			o.Structured = map[string]any{"content": fsNorm(c)}
		}
	}
	return o
}
