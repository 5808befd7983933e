package reftest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memoryConfig is an mcphost.toml serving plugins/memory with dir granted
// read-write at the same path inside the sandbox, and config as the
// plugin's config table (TOML inline table members, "" for none).
func memoryConfig(t testing.TB, grant, config string) string {
	t.Helper()
	s := fmt.Sprintf("[[plugin]]\nname = \"memory\"\npath = %s\nmax_instances = 4\n", tomlString(pluginPath(t, "memory")))
	if grant != "" {
		s += "allowed_paths = { " + grant + " }\n"
	}
	if config != "" {
		s += "config = { " + config + " }\n"
	}
	return s
}

// rwGrant grants dir read-write, mounted at the same path.
func rwGrant(dir string) string {
	return tomlString("rw:"+dir) + " = " + tomlString(dir)
}

// startMemory serves plugins/memory with dir granted read-write and
// MEMORY_FILE_PATH set to file (a path inside dir).
func startMemory(t testing.TB, dir, file string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return startMcphost(t, memoryConfig(t, rwGrant(dir), "MEMORY_FILE_PATH = "+tomlString(file)), opts)
}

// startMemoryReference runs the reference server with MEMORY_FILE_PATH
// set to file.
func startMemoryReference(t testing.TB, file string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return startReference(t, "memory", nil, []string{"MEMORY_FILE_PATH=" + file}, opts)
}

// memoryPair is mcphost serving plugins/memory and the reference server,
// each with a memory file of its own.
type memoryPair struct {
	ours, theirs         *mcp.ClientSession
	oursFile, theirsFile string
}

func newMemoryPair(t testing.TB) *memoryPair {
	t.Helper()
	oursDir, theirsDir := t.TempDir(), t.TempDir()
	p := &memoryPair{
		oursFile:   filepath.Join(oursDir, "ours.jsonl"),
		theirsFile: filepath.Join(theirsDir, "theirs.jsonl"),
	}
	p.ours = startMemory(t, oursDir, p.oursFile, nil)
	p.theirs = startMemoryReference(t, p.theirsFile, nil)
	return p
}

// memoryCall is one tools/call of a comparison. For an errorOnly call
// both sides must answer with isError, each in its own words (README.md,
// differences): arguments that break the input schema (zod's message
// against the host's JSON Schema validator's), a memory file that is not
// JSON (V8's JSON.parse message against ours).
type memoryCall struct {
	tool      string
	args      any
	errorOnly bool
}

func (c memoryCall) String() string { return c.tool + " " + jsonText(c.args) }

// compare makes the call on both servers and fails the test unless the
// outcomes agree.
func (p *memoryPair) compare(t testing.TB, label string, c memoryCall) Outcome {
	t.Helper()
	ours, theirs := call(t, p.ours, c.tool, c.args), call(t, p.theirs, c.tool, c.args)
	if c.errorOnly {
		if !ours.IsError || !theirs.IsError {
			t.Errorf("%s: %s: both should answer with isError\nours:   %s\ntheirs: %s", label, c, ours, theirs)
		}
		return ours
	}
	sameOutcome(t, label+": "+c.String(), ours, theirs, nil)
	return ours
}

// sameFiles fails the test unless both memory files hold the same bytes
// (or neither exists).
func (p *memoryPair) sameFiles(t testing.TB, label string) {
	t.Helper()
	ours, oerr := os.ReadFile(p.oursFile)
	theirs, terr := os.ReadFile(p.theirsFile)
	if os.IsNotExist(oerr) && os.IsNotExist(terr) {
		return
	}
	if oerr != nil || terr != nil {
		t.Fatalf("%s: reading the memory files: ours: %v; theirs: %v", label, oerr, terr)
	}
	if !bytes.Equal(ours, theirs) {
		t.Fatalf("%s: the memory files differ\nours:\n%s\ntheirs:\n%s", label, ours, theirs)
	}
}

// readGraph is read_graph's structured result on cs.
func readGraph(t testing.TB, cs *mcp.ClientSession) memoryGraph {
	t.Helper()
	out := call(t, cs, "read_graph", map[string]any{})
	if out.IsError || out.ProtocolError != "" || len(out.Content) != 1 {
		t.Fatalf("read_graph: %s", out)
	}
	var g memoryGraph
	if err := json.Unmarshal([]byte(out.Content[0]), &g); err != nil {
		t.Fatalf("read_graph text: %v", err)
	}
	return g
}

type memoryEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

type memoryRelation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

type memoryGraph struct {
	Entities  []memoryEntity   `json:"entities"`
	Relations []memoryRelation `json:"relations"`
}

// parseMemoryFile checks that data is a memory file (every line a JSON
// object of type entity or relation, entities first) and returns its
// graph.
func parseMemoryFile(t testing.TB, data []byte) memoryGraph {
	t.Helper()
	g := memoryGraph{Entities: []memoryEntity{}, Relations: []memoryRelation{}}
	if len(data) == 0 {
		return g
	}
	for i, line := range strings.Split(string(data), "\n") {
		var item struct {
			Type string `json:"type"`
			memoryEntity
			memoryRelation
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&item); err != nil {
			t.Fatalf("memory file line %d %q: %v", i+1, line, err)
		}
		switch item.Type {
		case "entity":
			if len(g.Relations) > 0 {
				t.Fatalf("memory file line %d: an entity after a relation", i+1)
			}
			g.Entities = append(g.Entities, item.memoryEntity)
		case "relation":
			g.Relations = append(g.Relations, item.memoryRelation)
		default:
			t.Fatalf("memory file line %d: type %q", i+1, item.Type)
		}
	}
	return g
}

// Random operations for the seeded sequence: small pools of names, types
// and observations make collisions (duplicates, missing entities,
// repeated relations) common. Names hold what JSON escapes differently in
// JavaScript and Go, and letters whose lower case differs between them.
var (
	memNames = []string{"Alice", "bob", "Ärger", "ΟΔΟΣ", "<b>&amp;</b>", "line\nbreak", `quote"back\slash`, "sep\u2028arator", "İstanbul", "😀 emoji", "tab\there", "ctl\x01\x1f\x7f"}
	memTypes = []string{"person", "Person", "city", "ΣΟΦΙΑ", "<type>"}
	memObs   = []string{"likes tea", "LIKES TEA", "ΟΔΟΣ ΑΘΗΝΩΝ", "σ and ς", "a&b<c>", "", " ", "multi\nline", "üñí", "İ", "\u00a0nbsp", "😀"}
	memQuery = []string{"", "a", "A", "tea", "TEA", "οδος", "οδοσ", "ς", "σ", "i̇", "i", "<", "&", "\n", "😀", "zzz", "person", "ΣΟΦΙΑ", "σοφια"}
)

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

// somePicks is 0 to max-1 items of list (repeats allowed).
func somePicks[T any](r *rand.Rand, list []T, max int) []T {
	out := []T{}
	for range r.IntN(max) {
		out = append(out, pick(r, list))
	}
	return out
}

func randomEntity(r *rand.Rand) map[string]any {
	return map[string]any{"name": pick(r, memNames), "entityType": pick(r, memTypes), "observations": somePicks(r, memObs, 4)}
}

func randomRelation(r *rand.Rand) map[string]any {
	return map[string]any{"from": pick(r, memNames), "to": pick(r, memNames), "relationType": pick(r, []string{"knows", "lives in", "KNOWS", "Σ"})}
}

// randomMemoryCall is one random, well-formed call.
func randomMemoryCall(r *rand.Rand) memoryCall {
	n := 1 + r.IntN(3)
	switch r.IntN(10) {
	case 0, 1:
		var es []any
		for range n {
			es = append(es, randomEntity(r))
		}
		return memoryCall{tool: "create_entities", args: map[string]any{"entities": es}}
	case 2, 3:
		var rs []any
		for range n {
			rs = append(rs, randomRelation(r))
		}
		return memoryCall{tool: "create_relations", args: map[string]any{"relations": rs}}
	case 4:
		var os []any
		for range n {
			os = append(os, map[string]any{"entityName": pick(r, memNames), "contents": somePicks(r, memObs, 4)})
		}
		return memoryCall{tool: "add_observations", args: map[string]any{"observations": os}}
	case 5:
		return memoryCall{tool: "delete_entities", args: map[string]any{"entityNames": somePicks(r, memNames, 3)}}
	case 6:
		var ds []any
		for range n {
			ds = append(ds, map[string]any{"entityName": pick(r, memNames), "observations": somePicks(r, memObs, 4)})
		}
		return memoryCall{tool: "delete_observations", args: map[string]any{"deletions": ds}}
	case 7:
		var rs []any
		for range n {
			rs = append(rs, randomRelation(r))
		}
		return memoryCall{tool: "delete_relations", args: map[string]any{"relations": rs}}
	case 8:
		if r.IntN(2) == 0 {
			return memoryCall{tool: "read_graph", args: map[string]any{}}
		}
		return memoryCall{tool: "search_nodes", args: map[string]any{"query": pick(r, memQuery)}}
	default:
		return memoryCall{tool: "open_nodes", args: map[string]any{"names": somePicks(r, memNames, 4)}}
	}
}

// readResource reads uri on cs and returns its one text content.
func readResource(t testing.TB, cs *mcp.ClientSession, uri string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0].Text, res.Contents[0].MIMEType
}

// sameToolDetails fails the test unless each tool of ours has the title,
// annotations and output schema (properties, required) of the reference's
// tool of that name: what sameTools leaves out.
func sameToolDetails(t testing.TB, ours, theirs map[string]*mcp.Tool) {
	t.Helper()
	for name, o := range ours {
		r := theirs[name]
		if r == nil {
			continue
		}
		if o.Title != r.Title {
			t.Errorf("tool %q: title %q, the reference's %q", name, o.Title, r.Title)
		}
		if !reflect.DeepEqual(annotationHints(o.Annotations), annotationHints(r.Annotations)) {
			t.Errorf("tool %q: annotations %s, the reference's %s", name, jsonText(o.Annotations), jsonText(r.Annotations))
		}
		if o.OutputSchema == nil || r.OutputSchema == nil {
			t.Errorf("tool %q: output schema ours %v, theirs %v", name, o.OutputSchema != nil, r.OutputSchema != nil)
			continue
		}
		if !reflect.DeepEqual(schemaWithout(t, o.OutputSchema, "$schema"), schemaWithout(t, r.OutputSchema, "$schema")) {
			t.Errorf("tool %q: output schema differs\nours:   %s\ntheirs: %s", name, jsonText(o.OutputSchema), jsonText(r.OutputSchema))
		}
	}
}

// annotationHints is what annotations say, with the defaults of the
// specification filled in (false, false, false... except destructive and
// open-world, true).
func annotationHints(a *mcp.ToolAnnotations) [4]bool {
	if a == nil {
		return [4]bool{false, true, false, true}
	}
	destructive, openWorld := true, true
	if a.DestructiveHint != nil {
		destructive = *a.DestructiveHint
	}
	if a.OpenWorldHint != nil {
		openWorld = *a.OpenWorldHint
	}
	return [4]bool{a.ReadOnlyHint, destructive, a.IdempotentHint, openWorld}
}

// schemaWithout is schema as plain JSON values, without the top-level key.
func schemaWithout(t testing.TB, schema any, key string) map[string]any {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, key)
	return m
}
