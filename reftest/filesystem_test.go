package reftest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFilesystemTools compares the tool lists of plugins/filesystem and
// @modelcontextprotocol/server-filesystem.
func TestFilesystemTools(t *testing.T) {
	s := startFS(t)
	sameTools(t, listTools(t, s.ours), listTools(t, s.theirs))
}

// TestFilesystemCalls makes the same calls, good and bad, to both servers,
// each on a fresh copy of the fixture, and compares the outcomes and the
// trees left behind.
func TestFilesystemCalls(t *testing.T) {
	s := startFS(t)
	root, out := s.f.root, s.f.outside
	in := func(rel string) string { return filepath.Join(root, rel) }
	type c = map[string]any
	cases := []struct {
		tool string
		args c
	}{
		{"list_allowed_directories", c{}},
		// reading
		{"read_text_file", c{"path": in("a.txt")}},
		{"read_file", c{"path": in("a.txt")}},
		{"read_text_file", c{"path": "a.txt"}}, // relative to the allowed directory
		{"read_text_file", c{"path": "sub/../a.txt"}},
		{"read_text_file", c{"path": in("crlf.txt")}},
		{"read_text_file", c{"path": in("utf8.txt")}},
		{"read_text_file", c{"path": in("bad-utf8.txt")}},
		{"read_text_file", c{"path": in("binary.bin")}},
		{"read_text_file", c{"path": in("empty.txt")}},
		{"read_text_file", c{"path": in("space name.txt")}},
		{"read_text_file", c{"path": in("lines.txt"), "head": 5}},
		{"read_text_file", c{"path": in("lines.txt"), "tail": 5}},
		{"read_text_file", c{"path": in("lines.txt"), "head": 1000}},
		{"read_text_file", c{"path": in("lines.txt"), "tail": 1000}},
		{"read_text_file", c{"path": in("long.txt"), "head": 100}},
		{"read_text_file", c{"path": in("long.txt"), "tail": 100}},
		{"read_text_file", c{"path": in("b.md"), "tail": 2}},
		{"read_text_file", c{"path": in("crlf.txt"), "tail": 2}},
		{"read_text_file", c{"path": in("utf8.txt"), "head": 1}},
		{"read_text_file", c{"path": in("empty.txt"), "tail": 3}},
		{"read_text_file", c{"path": in("lines.txt"), "head": 0}},
		{"read_text_file", c{"path": in("lines.txt"), "head": 2.5}},
		{"read_text_file", c{"path": in("lines.txt"), "tail": -2}},
		{"read_text_file", c{"path": in("lines.txt"), "head": 3, "tail": 3}},
		{"read_text_file", c{"path": in("missing.txt")}},
		{"read_text_file", c{"path": in("missing.txt"), "head": 2}},
		{"read_text_file", c{"path": in("missing.txt"), "tail": 2}},
		{"read_text_file", c{"path": in("nodir/missing.txt")}},
		{"read_text_file", c{"path": in("sub")}},
		{"read_text_file", c{"path": in("a.txt/x")}},
		{"read_text_file", c{"path": in("../outside/secret.txt")}},
		{"read_text_file", c{"path": "../outside/secret.txt"}},
		{"read_text_file", c{"path": filepath.Join(out, "secret.txt")}},
		{"read_text_file", c{"path": "/etc/passwd"}},
		{"read_text_file", c{"path": root + "x/a.txt"}}, // a prefix, not a parent
		{"read_text_file", c{"path": "C:\\Windows\\win.ini"}},
		{"read_text_file", c{"path": in("link_in")}},
		{"read_text_file", c{"path": in("link_in_abs")}},
		{"read_text_file", c{"path": in("link_dir/c.txt")}},
		{"read_text_file", c{"path": in("sub/up/a.txt")}},
		{"read_text_file", c{"path": in("escape/link_out")}},
		{"read_text_file", c{"path": in("escape/link_out_rel")}},
		{"read_text_file", c{"path": in("dangling")}},
		{"read_media_file", c{"path": in("image.png")}},
		{"read_media_file", c{"path": in("sound.mp3")}},
		{"read_media_file", c{"path": in("pic.JPG")}},
		{"read_media_file", c{"path": in("vector.svg")}},
		{"read_media_file", c{"path": in("binary.bin")}},
		{"read_media_file", c{"path": in("hash#name%.txt")}},
		{"read_media_file", c{"path": in("space name.txt")}},
		{"read_media_file", c{"path": in(".hidden")}},
		{"read_media_file", c{"path": in("missing.png")}},
		{"read_media_file", c{"path": in("sub")}},
		{"read_media_file", c{"path": in("escape/link_out")}},
		{"read_multiple_files", c{"paths": []string{in("a.txt"), "b.md", in("missing.txt"), in("escape/link_out"), "/etc/passwd", in("sub")}}},
		{"read_multiple_files", c{"paths": []string{in("utf8.txt")}}},
		// writing
		{"write_file", c{"path": in("new.txt"), "content": "new\ncontent"}},
		{"write_file", c{"path": "rel-new.txt", "content": "relative"}},
		{"write_file", c{"path": in("a.txt"), "content": "overwritten\n"}},
		{"write_file", c{"path": in("utf8.txt"), "content": "ünïcödé ✓\r\n"}},
		{"write_file", c{"path": in("sub"), "content": "x"}},
		{"write_file", c{"path": in("nodir/new.txt"), "content": "x"}},
		{"write_file", c{"path": in("a.txt/new.txt"), "content": "x"}},
		{"write_file", c{"path": in("../outside/new.txt"), "content": "x"}},
		{"write_file", c{"path": in("escape/link_out"), "content": "pwned"}},
		{"write_file", c{"path": in("escape/link_out_dir/new.txt"), "content": "pwned"}},
		{"write_file", c{"path": in("link_in"), "content": "through a link\n"}},
		{"write_file", c{"path": in("dangling"), "content": "x"}},
		{"edit_file", c{"path": in("a.txt"), "edits": []c{{"oldText": "beta", "newText": "BETA"}}}},
		{"edit_file", c{"path": in("a.txt"), "edits": []c{{"oldText": "beta", "newText": "BETA"}}, "dryRun": true}},
		{"edit_file", c{"path": in("a.txt"), "edits": []c{{"oldText": "alpha\nbeta", "newText": "one\ntwo\nthree"}, {"oldText": "gamma", "newText": ""}}}},
		{"edit_file", c{"path": in("a.txt"), "edits": []c{{"oldText": "nope", "newText": "x"}}}},
		{"edit_file", c{"path": in("a.txt"), "edits": []c{}}},
		{"edit_file", c{"path": in("a.txt"), "edits": []c{{"oldText": "", "newText": "start "}}}},
		{"edit_file", c{"path": in("b.md"), "edits": []c{{"oldText": "Last line without newline", "newText": "Last line\n"}}}},
		{"edit_file", c{"path": in("crlf.txt"), "edits": []c{{"oldText": "two\r\n", "newText": "TWO\r\n"}}}},
		{"edit_file", c{"path": in("indent.py"), "edits": []c{{"oldText": "x = 1\nif x:", "newText": "x = 2\n  if x > 1:"}}}},
		{"edit_file", c{"path": in("indent.py"), "edits": []c{{"oldText": "  if x:\n      return x", "newText": "if x:\n    return -x\n    # done"}}}},
		{"edit_file", c{"path": in("code.go"), "edits": []c{{"oldText": "println(\"hi\")", "newText": "println(\"bye\")"}}, "dryRun": true}},
		{"edit_file", c{"path": in("lines.txt"), "edits": []c{{"oldText": "line 3: xxx", "newText": "LINE 3"}, {"oldText": "line 30: xx", "newText": "LINE 30"}}}},
		{"edit_file", c{"path": in("lines.txt"), "edits": []c{{"oldText": "line 10: xxx\nline 11: xxxx\n", "newText": ""}}}},
		{"edit_file", c{"path": in("ticks.md"), "edits": []c{{"oldText": "code", "newText": "more code"}}}},
		{"edit_file", c{"path": in("empty.txt"), "edits": []c{{"oldText": "", "newText": "first\n"}}}},
		{"edit_file", c{"path": in("missing.txt"), "edits": []c{{"oldText": "a", "newText": "b"}}}},
		{"edit_file", c{"path": in("sub"), "edits": []c{{"oldText": "a", "newText": "b"}}}},
		{"edit_file", c{"path": in("escape/link_out"), "edits": []c{{"oldText": "secret", "newText": "x"}}}},
		{"create_directory", c{"path": in("newdir")}},
		{"create_directory", c{"path": in("newdir/a/b/c")}},
		{"create_directory", c{"path": in("sub")}},
		{"create_directory", c{"path": in("a.txt")}},
		{"create_directory", c{"path": in("a.txt/sub")}},
		{"create_directory", c{"path": in("../outside/newdir")}},
		{"create_directory", c{"path": in("escape/link_out_dir/newdir")}},
		{"create_directory", c{"path": "relnew/x"}},
		// listing
		{"list_directory", c{"path": root}},
		{"list_directory", c{"path": in("sub")}},
		{"list_directory", c{"path": in("emptydir")}},
		{"list_directory", c{"path": in("big")}},
		{"list_directory", c{"path": in("a.txt")}},
		{"list_directory", c{"path": in("missing")}},
		{"list_directory", c{"path": in("link_dir")}},
		{"list_directory", c{"path": in("escape/link_out_dir")}},
		{"list_directory", c{"path": out}},
		{"list_directory_with_sizes", c{"path": root}},
		{"list_directory_with_sizes", c{"path": root, "sortBy": "size"}},
		{"list_directory_with_sizes", c{"path": in("big"), "sortBy": "size"}},
		{"list_directory_with_sizes", c{"path": in("big")}},
		{"list_directory_with_sizes", c{"path": in("emptydir")}},
		{"list_directory_with_sizes", c{"path": in("a.txt")}},
		{"directory_tree", c{"path": in("sub")}},
		{"directory_tree", c{"path": root, "excludePatterns": []string{"big", "node_modules"}}},
		{"directory_tree", c{"path": root, "excludePatterns": []string{"**/*.ts", ".git", "big/**"}}},
		{"directory_tree", c{"path": "sub", "excludePatterns": []string{"deep"}}},
		{"directory_tree", c{"path": in("emptydir")}},
		{"directory_tree", c{"path": in("a.txt")}},
		{"directory_tree", c{"path": in("../outside")}},
		// moving
		{"move_file", c{"source": in("a.txt"), "destination": in("a2.txt")}},
		{"move_file", c{"source": in("a.txt"), "destination": in("sub/a.txt")}},
		{"move_file", c{"source": in("sub"), "destination": in("sub2")}},
		{"move_file", c{"source": in("a.txt"), "destination": in("b.md")}},
		{"move_file", c{"source": in("a.txt"), "destination": in("link_in")}},
		{"move_file", c{"source": in("missing.txt"), "destination": in("x.txt")}},
		{"move_file", c{"source": in("a.txt"), "destination": in("nodir/x.txt")}},
		{"move_file", c{"source": in("a.txt"), "destination": in("../outside/a.txt")}},
		{"move_file", c{"source": filepath.Join(out, "secret.txt"), "destination": in("s.txt")}},
		{"move_file", c{"source": in("escape/link_out"), "destination": in("s.txt")}},
		{"move_file", c{"source": in("sub"), "destination": in("sub/deep/sub")}},
		// searching
		{"search_files", c{"path": root, "pattern": "*.txt"}},
		{"search_files", c{"path": root, "pattern": "**/*.ts"}},
		{"search_files", c{"path": root, "pattern": "**/*.{ts,js}", "excludePatterns": []string{"node_modules/**"}}},
		{"search_files", c{"path": root, "pattern": "**/.*"}},
		{"search_files", c{"path": root, "pattern": "sub/**"}},
		{"search_files", c{"path": root, "pattern": "**/[a-c].*"}},
		{"search_files", c{"path": root, "pattern": "big/file00?.txt"}},
		{"search_files", c{"path": root, "pattern": "**/*e*", "excludePatterns": []string{"big", "**/deep/**"}}},
		{"search_files", c{"path": root, "pattern": "nothing-matches"}},
		{"search_files", c{"path": root, "pattern": "**"}},
		{"search_files", c{"path": in("sub"), "pattern": "*"}},
		{"search_files", c{"path": in("missing"), "pattern": "*"}},
		{"search_files", c{"path": in("a.txt"), "pattern": "*"}},
		{"search_files", c{"path": out, "pattern": "*"}},
		// metadata
		{"get_file_info", c{"path": in("a.txt")}},
		{"get_file_info", c{"path": in("sub")}},
		{"get_file_info", c{"path": in("empty.txt")}},
		{"get_file_info", c{"path": in("missing.txt")}},
		{"get_file_info", c{"path": in("escape/link_out")}},
	}
	for _, tc := range cases {
		s.compare(t, tc.tool, tc.args)
	}

	// The differences README.md lists, checked to be what it says.
	s.f.reset(t)
	// A link leading out: the plugin cannot look outside its grants, so it
	// names where the path leaves them, not the file below (which the
	// reference names when it exists).
	got := call(t, s.ours, "read_text_file", c{"path": in("escape/link_out_dir/secret.txt")})
	if want := "Access denied - symlink target outside allowed directories: " + out + " not in " + root; !got.IsError || got.Content[0] != want {
		t.Errorf("read through a link to a directory outside: got %s, want the error %q", got, want)
	}
	// Its size (0 B: not visible), where the reference gives the target's.
	got = call(t, s.ours, "list_directory_with_sizes", c{"path": in("escape")})
	if !strings.Contains(got.Content[0], "[FILE] link_out                              0 B") {
		t.Errorf("sizes of links leading outside: %s", got)
	}
	// Arguments that do not fit the input schema: both answer isError,
	// mcphost (which checks them before the plugin runs) in its own words,
	// the reference with zod's.
	for _, args := range []c{{"path": in("a.txt"), "head": "x"}, {}} {
		if got, theirs := call(t, s.ours, "read_text_file", args), call(t, s.theirs, "read_text_file", args); !got.IsError || !theirs.IsError || !strings.Contains(got.Content[0], "invalid arguments") {
			t.Errorf("invalid arguments %v: ours %s, theirs %s", args, got, theirs)
		}
	}
}

// TestFilesystemRandom runs one seeded random sequence of reads, writes,
// edits, moves and listings on both servers, comparing every outcome and
// the trees after each call. The seed is logged; FILESYSTEM_SEED repeats
// a run.
func TestFilesystemRandom(t *testing.T) {
	s := startFS(t)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("FILESYSTEM_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	t.Logf("seed %d (FILESYSTEM_SEED=%d repeats this run)", seed, seed)
	const n = 300
	calls := randomFSCalls(rand.New(rand.NewPCG(seed, 0)), s.f.root, n)

	run := func(cs *mcp.ClientSession) ([]Outcome, []map[string]string) {
		s.f.reset(t)
		var outs []Outcome
		var trees []map[string]string
		for _, c := range calls {
			outs = append(outs, fsNormOutcome(call(t, cs, c.tool, c.args)))
			trees = append(trees, s.f.snapshot(t))
		}
		return outs, trees
	}
	theirs, theirTrees := run(s.theirs)
	ours, ourTrees := run(s.ours)
	for i, c := range calls {
		label := fmt.Sprintf("call %d: %s %s", i, c.tool, jsonText(c.args))
		sameOutcome(t, label, ours[i], theirs[i], nil)
		sameSnapshot(t, label, ourTrees[i], theirTrees[i])
		if t.Failed() {
			t.Fatalf("stopping at the first difference (seed %d)", seed)
		}
	}
}

// fsCall is one call of a random sequence.
type fsCall struct {
	tool string
	args map[string]any
}

// randomFSCalls makes n calls on a small set of names, so that they meet:
// files written, edited, moved, then read and listed.
func randomFSCalls(r *rand.Rand, root string, n int) []fsCall {
	names := []string{"a.txt", "b.md", "new.txt", "sub/c.txt", "sub/n.txt", "d/e/f.txt", "d", "sub", "lines.txt", "crlf.txt", "missing.txt", "link_in", "escape/link_out", "../x.txt", "sub/deep", "emptydir"}
	words := []string{"alpha", "beta", "gamma", "line 3: xxx", "line 4: xxxx", "one", "two", "x", "", "\n", "Title"}
	pick := func(list []string) string { return list[r.IntN(len(list))] }
	path := func() string {
		name := pick(names)
		if r.IntN(4) == 0 {
			return name // relative
		}
		return filepath.Join(root, name)
	}
	var calls []fsCall
	for len(calls) < n {
		var c fsCall
		switch r.IntN(12) {
		case 0, 1:
			c = fsCall{"read_text_file", map[string]any{"path": path()}}
			if r.IntN(3) == 0 {
				c.args[pick([]string{"head", "tail"})] = r.IntN(5) + 1
			}
		case 2:
			c = fsCall{"write_file", map[string]any{"path": path(), "content": strings.Repeat(pick(words)+"\n", r.IntN(4))}}
		case 3, 4:
			var edits []map[string]any
			for range r.IntN(3) + 1 {
				edits = append(edits, map[string]any{"oldText": pick(words), "newText": pick(words)})
			}
			c = fsCall{"edit_file", map[string]any{"path": path(), "edits": edits, "dryRun": r.IntN(3) == 0}}
		case 5:
			c = fsCall{"move_file", map[string]any{"source": path(), "destination": path()}}
		case 6:
			c = fsCall{"create_directory", map[string]any{"path": path()}}
		case 7:
			c = fsCall{"list_directory", map[string]any{"path": path()}}
		case 8:
			c = fsCall{"list_directory_with_sizes", map[string]any{"path": path(), "sortBy": pick([]string{"name", "size"})}}
		case 9:
			c = fsCall{"search_files", map[string]any{"path": root, "pattern": pick([]string{"*.txt", "**/*.txt", "**/n*", "sub/**"})}}
		case 10:
			c = fsCall{"directory_tree", map[string]any{"path": filepath.Join(root, pick([]string{"sub", "d", "emptydir"}))}}
		case 11:
			c = fsCall{"read_multiple_files", map[string]any{"paths": []string{path(), path()}}}
		}
		calls = append(calls, c)
	}
	return calls
}

// TestFilesystemGrants checks what the sandbox adds: a read-only grant
// refuses every write with isError and leaves the files as they were, and
// a path outside every grant fails, whatever the plugin's config says.
func TestFilesystemGrants(t *testing.T) {
	f := newFSFixture(t)
	ro := startMcphost(t, fsConfig(t, fmt.Sprintf("%s = %s", tomlString(f.root), tomlString(f.root)), ""), nil)
	before := f.snapshot(t)
	in := func(rel string) string { return filepath.Join(f.root, rel) }
	for _, w := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"write_file", map[string]any{"path": in("a.txt"), "content": "x"}, "EROFS: read-only file system, open '" + in("a.txt") + "'"},
		{"write_file", map[string]any{"path": in("new.txt"), "content": "x"}, "EROFS: read-only file system, open '" + in("new.txt") + "'"},
		{"edit_file", map[string]any{"path": in("a.txt"), "edits": []map[string]any{{"oldText": "beta", "newText": "x"}}}, "EROFS: read-only file system, open '" + in("a.txt") + ".TEMP.tmp'"},
		{"create_directory", map[string]any{"path": in("newdir")}, "EROFS: read-only file system, mkdir '" + in("newdir") + "'"},
		{"move_file", map[string]any{"source": in("a.txt"), "destination": in("z.txt")}, "EROFS: read-only file system, rename '" + in("a.txt") + "' -> '" + in("z.txt") + "'"},
	} {
		got := fsNormOutcome(call(t, ro, w.tool, w.args))
		if !got.IsError || len(got.Content) != 1 || got.Content[0] != w.want {
			t.Errorf("%s on a read-only grant: got %s, want the error %q", w.tool, got, w.want)
		}
	}
	sameSnapshot(t, "read-only grant", f.snapshot(t), before)
	// Reading still works, and dryRun (which writes nothing) too.
	if got := call(t, ro, "read_text_file", map[string]any{"path": in("a.txt")}); got.IsError || got.Content[0] != "alpha\nbeta\ngamma\n" {
		t.Errorf("read on a read-only grant: %s", got)
	}
	if got := call(t, ro, "edit_file", map[string]any{"path": in("a.txt"), "edits": []map[string]any{{"oldText": "beta", "newText": "x"}}, "dryRun": true}); got.IsError {
		t.Errorf("dryRun edit on a read-only grant: %s", got)
	}

	// A config naming a directory outside every grant is refused.
	bad := startMcphost(t, fsConfig(t, fmt.Sprintf("%s = %s", tomlString(in("sub")), tomlString(in("sub"))),
		fmt.Sprintf("config = { allowed_directories = %s }\n", tomlString(f.outside))), nil)
	got := call(t, bad, "read_text_file", map[string]any{"path": filepath.Join(f.outside, "secret.txt")})
	if !got.IsError || !strings.Contains(got.Content[0], "is not inside a granted directory") {
		t.Errorf("allowed_directories outside the grants: got %s", got)
	}
	// A config narrowing the grant: only that directory is served.
	narrow := startMcphost(t, fsConfig(t, fmt.Sprintf("%s = %s", tomlString(f.root), tomlString(f.root)),
		fmt.Sprintf("config = { allowed_directories = %s }\n", tomlString(in("sub")))), nil)
	if got := call(t, narrow, "list_allowed_directories", map[string]any{}); got.IsError || got.Content[0] != "Allowed directories:\n"+in("sub") {
		t.Errorf("narrowed list_allowed_directories: %s", got)
	}
	if got := call(t, narrow, "read_text_file", map[string]any{"path": in("a.txt")}); !got.IsError || !strings.HasPrefix(got.Content[0], "Access denied - path outside allowed directories: ") {
		t.Errorf("read outside the narrowed directory: %s", got)
	}
	// Two writable grants: a move between them is refused, naming why.
	two := startMcphost(t, fsConfig(t, fmt.Sprintf("%s = %s, %s = %s", tomlString("rw:"+f.root), tomlString(f.root), tomlString("rw:"+f.outside), tomlString(f.outside)), ""), nil)
	dst := filepath.Join(f.outside, "moved.txt")
	if got := call(t, two, "move_file", map[string]any{"source": in("a.txt"), "destination": dst}); !got.IsError || got.Content[0] != "EXDEV: cross-device link not permitted, rename '"+in("a.txt")+"' -> '"+dst+"'" {
		t.Errorf("move between two grants: %s", got)
	}
	if got := call(t, two, "list_allowed_directories", map[string]any{}); got.IsError || !strings.Contains(got.Content[0], f.outside) || !strings.Contains(got.Content[0], f.root) {
		t.Errorf("two grants listed: %s", got)
	}
	// Outside every grant.
	for _, p := range []string{filepath.Join(f.outside, "secret.txt"), in("../outside/secret.txt"), "/etc/passwd", in("escape/link_out")} {
		got := call(t, ro, "read_text_file", map[string]any{"path": p})
		if !got.IsError || !strings.HasPrefix(got.Content[0], "Access denied - ") {
			t.Errorf("read %s outside the grant: %s", p, got)
		}
	}
}
