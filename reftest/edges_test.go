package reftest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// More edge cases of the filesystem tools, compared call by call: writes
// through links and onto directories, moves onto themselves, edits that
// chain or match nothing, glob and exclude forms, odd path spellings.
func TestFilesystemEdges(t *testing.T) {
	s := startFS(t)
	root := s.f.root
	in := func(rel string) string { return filepath.Join(root, rel) }
	type c = map[string]any
	for _, tc := range []struct {
		tool string
		args c
	}{
		{"write_file", c{"path": in("new/deeper/x.txt"), "content": "x"}},
		{"write_file", c{"path": in("sub"), "content": "x"}},
		{"write_file", c{"path": in("link_in"), "content": "through link"}},
		{"write_file", c{"path": in("dangling"), "content": "creates?"}},
		{"move_file", c{"source": in("a.txt"), "destination": in("nodir/a.txt")}},
		{"move_file", c{"source": in("a.txt"), "destination": in("sub")}},
		{"move_file", c{"source": in("sub"), "destination": in("sub2")}},
		{"move_file", c{"source": in("a.txt"), "destination": in("a.txt")}},
		{"edit_file", c{"path": in("lines.txt"), "edits": []any{c{"oldText": "line 1\n", "newText": "L1\n"}}}},
		{"edit_file", c{"path": in("a.txt"), "edits": []any{c{"oldText": "alpha", "newText": "A"}, c{"oldText": "A", "newText": "B"}}, "dryRun": true}},
		{"edit_file", c{"path": in("a.txt"), "edits": []any{}}},
		{"edit_file", c{"path": in("a.txt"), "edits": []any{c{"oldText": "", "newText": "pre"}}}},
		{"edit_file", c{"path": in("indent.py"), "edits": []any{c{"oldText": "x = 1\nif x:", "newText": "y = 2\nif y:"}}}},
		{"edit_file", c{"path": in("crlf.txt"), "edits": []any{c{"oldText": "one\ntwo", "newText": "1\n2"}}}},
		{"search_files", c{"path": root, "pattern": "*.txt"}},
		{"search_files", c{"path": root, "pattern": "txt"}},
		{"search_files", c{"path": root, "pattern": "**/*.ts", "excludePatterns": []any{"deep"}}},
		{"search_files", c{"path": root, "pattern": "**/*.ts", "excludePatterns": []any{"**/deep/**"}}},
		{"search_files", c{"path": root, "pattern": "{a,b}.*"}},
		{"search_files", c{"path": root, "pattern": "[Zz]eta.txt"}},
		{"search_files", c{"path": in("sub"), "pattern": "**"}},
		{"directory_tree", c{"path": in("sub"), "excludePatterns": []any{"*.ts"}}},
		{"directory_tree", c{"path": in("sub"), "excludePatterns": []any{"deep"}}},
		{"directory_tree", c{"path": in("a.txt")}},
		{"list_directory", c{"path": in("a.txt")}},
		{"list_directory", c{"path": root + "/"}},
		{"list_directory", c{"path": root + "//sub"}},
		{"list_directory", c{"path": "."}},
		{"list_directory", c{"path": ""}},
		{"list_directory_with_sizes", c{"path": in("big"), "sortBy": "size"}},
		{"list_directory_with_sizes", c{"path": root}},
		{"get_file_info", c{"path": in("sub")}},
		{"get_file_info", c{"path": in("link_in")}},
		{"read_media_file", c{"path": in("a.txt")}},
		{"read_media_file", c{"path": in("vector.svg")}},
		{"read_multiple_files", c{"paths": []any{in("a.txt"), in("missing"), "/etc/passwd", in("sub")}}},
		{"create_directory", c{"path": in("a.txt")}},
		{"create_directory", c{"path": in("a/b/c")}},
		{"read_text_file", c{"path": "file://" + in("a.txt")}},
		{"read_text_file", c{"path": in("a.txt") + "/"}},
		{"read_text_file", c{"path": in("sub")}},
		{"read_text_file", c{"path": in("lines.txt"), "head": -1}},
		{"read_text_file", c{"path": in("b.md"), "head": 1, "tail": 0}},
		{"read_text_file", c{"path": root + "/../" + filepath.Base(root) + "/a.txt"}},
		{"read_text_file", c{"path": root + "x/a.txt"}},
	} {
		s.compare(t, tc.tool, tc.args)
	}
}

// More edge cases of the memory tools: duplicates inside one batch,
// relations to nobody, deletions of what is not there, odd characters.
func TestMemoryEdges(t *testing.T) {
	p := newMemoryPair(t)
	type c = map[string]any
	e := func(name, typ string, obs ...any) c {
		return c{"name": name, "entityType": typ, "observations": append([]any{}, obs...)}
	}
	r := func(from, to, typ string) c { return c{"from": from, "to": to, "relationType": typ} }
	for i, mc := range []memoryCall{
		{tool: "read_graph", args: c{}},
		{tool: "search_nodes", args: c{"query": ""}},
		{tool: "open_nodes", args: c{"names": []any{}}},
		{tool: "create_entities", args: c{"entities": []any{e("A", "t", "x", "x"), e("B", "u"), e("A", "v", "dup")}}},
		{tool: "create_relations", args: c{"relations": []any{r("A", "B", "knows"), r("A", "Z", "ghost"), r("A", "B", "knows")}}},
		{tool: "add_observations", args: c{"observations": []any{c{"entityName": "A", "contents": []any{"x", "y", "y"}}}}},
		{tool: "add_observations", args: c{"observations": []any{c{"entityName": "Nope", "contents": []any{"y"}}}}},
		{tool: "search_nodes", args: c{"query": "KNOWS"}},
		{tool: "search_nodes", args: c{"query": "y"}},
		{tool: "open_nodes", args: c{"names": []any{"A", "Z"}}},
		{tool: "delete_observations", args: c{"deletions": []any{c{"entityName": "A", "observations": []any{"x", "nope"}}, c{"entityName": "Nope", "observations": []any{"x"}}}}},
		{tool: "delete_relations", args: c{"relations": []any{r("A", "Z", "ghost"), r("Q", "R", "s")}}},
		{tool: "delete_entities", args: c{"entityNames": []any{"B", "nobody"}}},
		{tool: "read_graph", args: c{}},
		{tool: "create_entities", args: c{"entities": []any{e("emoji 😀\u2028", "t", "<tag> & \"q\"")}}},
		{tool: "search_nodes", args: c{"query": "😀"}},
		{tool: "read_graph", args: c{}},
	} {
		p.compare(t, fmt.Sprint(i), mc)
		p.sameFiles(t, fmt.Sprint(i))
	}
}

// More edge cases of sequentialthinking: totals adjusted, revisions,
// branches with and without ids, numeric branch ids, empty thoughts.
func TestSequentialThinkingEdges(t *testing.T) {
	theirs := startReference(t, "sequential-thinking", nil, []string{"DISABLE_THOUGHT_LOGGING=true"}, nil)
	ours := startMcphost(t, "[[plugin]]\nname = \"s\"\npath = "+tomlString(pluginPath(t, "sequential-thinking"))+"\n", nil)
	type c = map[string]any
	for i, args := range []c{
		{"thought": "a", "thoughtNumber": 5, "totalThoughts": 2, "nextThoughtNeeded": true},
		{"thought": "b", "thoughtNumber": 2, "totalThoughts": 3, "nextThoughtNeeded": true, "isRevision": true, "revisesThought": 1},
		{"thought": "c", "thoughtNumber": 3, "totalThoughts": 3, "nextThoughtNeeded": true, "branchFromThought": 1, "branchId": "b1"},
		{"thought": "d", "thoughtNumber": 4, "totalThoughts": 3, "nextThoughtNeeded": true, "branchFromThought": 1},
		{"thought": "e", "thoughtNumber": 4, "totalThoughts": 3, "nextThoughtNeeded": false, "branchId": "b2"},
		{"thought": "f", "thoughtNumber": 4, "totalThoughts": 3, "nextThoughtNeeded": false, "branchFromThought": 2, "branchId": "10"},
		{"thought": "g", "thoughtNumber": 4, "totalThoughts": 3, "nextThoughtNeeded": false, "branchFromThought": 2, "branchId": "2"},
		{"thought": "", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": false},
		{"thought": "h", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": false, "needsMoreThoughts": true},
	} {
		sameOutcome(t, fmt.Sprint(i, args), call(t, ours, "sequentialthinking", args), call(t, theirs, "sequentialthinking", args), nil)
	}
}

// "~" in a path is the home directory when the plugin is granted HOME
// (env = ["HOME"], as examples/reference-servers.toml does), as the
// reference expands it.
func TestFilesystemHomeExpansion(t *testing.T) {
	f := newFSFixture(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory:", err)
	}
	theirs := startReference(t, "filesystem", []string{f.root}, []string{"TZ=UTC"}, nil)
	ours := startMcphost(t, fsConfig(t, fmt.Sprintf("%s = %s", tomlString("rw:"+f.root), tomlString(f.root)), "env = [\"HOME\"]\n"), nil)
	for _, path := range []string{"~/x", "~", "~nobody/x"} {
		args := map[string]any{"path": path}
		sameOutcome(t, "read_text_file "+path+" (HOME="+home+")", call(t, ours, "read_text_file", args), call(t, theirs, "read_text_file", args), nil)
	}
}
