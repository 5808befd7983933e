package reftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plugins/memory against @modelcontextprotocol/server-memory: the same
// tools, the same answers to the same calls, the same bytes in the memory
// file, one file shared by both, and what the reference does not do: many
// writers at once, leftovers of a killed writer, grants.

func TestMemoryTools(t *testing.T) {
	p := newMemoryPair(t)
	ours, theirs := listTools(t, p.ours), listTools(t, p.theirs)
	sameTools(t, ours, theirs)
	sameToolDetails(t, ours, theirs)
}

// memoryCalls is a sequence of calls, good and bad, run in order on a
// fresh pair of servers.
var memoryCalls = []memoryCall{
	// An empty graph, no file yet.
	{tool: "read_graph", args: map[string]any{}},
	{tool: "search_nodes", args: map[string]any{"query": "x"}},
	{tool: "open_nodes", args: map[string]any{"names": []string{}}},
	{tool: "delete_entities", args: map[string]any{"entityNames": []string{}}}, // writes an empty file
	{tool: "read_graph", args: map[string]any{"ignored": 1}},
	// Entities: empty, a duplicate within one call (both kept, as the
	// reference keeps them), existing names, extra properties (stripped).
	{tool: "create_entities", args: map[string]any{"entities": []any{}}},
	{tool: "create_entities", args: map[string]any{"entities": []any{
		map[string]any{"name": "Alice", "entityType": "person", "observations": []string{"likes tea", "likes tea"}},
		map[string]any{"name": "Alice", "entityType": "robot", "observations": []string{}},
		map[string]any{"name": "Bob <b>&</b>", "entityType": "person", "observations": []string{"line\nbreak", "sep\u2028arator", "ctl\x01"}},
	}}},
	{tool: "create_entities", args: map[string]any{"entities": []any{
		map[string]any{"name": "Alice", "entityType": "person", "observations": []string{}},
		map[string]any{"name": "Ελλάδα", "entityType": "country", "observations": []string{"ΟΔΟΣ"}, "extra": true},
	}, "alsoIgnored": "x"}},
	// Relations: empty, to unknown entities, a duplicate within one call,
	// existing ones.
	{tool: "create_relations", args: map[string]any{"relations": []any{}}},
	{tool: "create_relations", args: map[string]any{"relations": []any{
		map[string]any{"from": "Alice", "to": "Bob <b>&</b>", "relationType": "knows"},
		map[string]any{"from": "Alice", "to": "Bob <b>&</b>", "relationType": "knows"},
		map[string]any{"from": "Alice", "to": "Nobody", "relationType": "knows"},
	}}},
	{tool: "create_relations", args: map[string]any{"relations": []any{
		map[string]any{"from": "Alice", "to": "Bob <b>&</b>", "relationType": "knows"},
		map[string]any{"from": "Ελλάδα", "to": "Alice", "relationType": "home of", "x": 1},
	}}},
	// Observations: new, already there, repeated within the call, an
	// entity named twice, an unknown entity (the whole call fails and
	// changes nothing), the first of two equal names.
	{tool: "add_observations", args: map[string]any{"observations": []any{}}},
	{tool: "add_observations", args: map[string]any{"observations": []any{
		map[string]any{"entityName": "Alice", "contents": []string{"likes tea", "plays go", "plays go"}},
		map[string]any{"entityName": "Alice", "contents": []string{"plays go", "reads"}},
	}}},
	{tool: "add_observations", args: map[string]any{"observations": []any{
		map[string]any{"entityName": "Ελλάδα", "contents": []string{"sunny"}},
		map[string]any{"entityName": "Nope", "contents": []string{"x"}},
	}}},
	{tool: "add_observations", args: map[string]any{"observations": []any{
		map[string]any{"entityName": "", "contents": []string{}},
	}}},
	{tool: "read_graph", args: map[string]any{}},
	// Searching: case, observations, relation ends outside the result.
	{tool: "search_nodes", args: map[string]any{"query": "ALICE"}},
	{tool: "search_nodes", args: map[string]any{"query": "οδοσ"}},
	{tool: "search_nodes", args: map[string]any{"query": "TEA"}},
	{tool: "search_nodes", args: map[string]any{"query": ""}},
	{tool: "search_nodes", args: map[string]any{"query": "&"}},
	{tool: "open_nodes", args: map[string]any{"names": []string{"Ελλάδα", "Nope", "Ελλάδα"}}},
	{tool: "open_nodes", args: map[string]any{"names": []string{"Bob <b>&</b>"}}},
	// Deleting observations, relations, entities (with their relations).
	{tool: "delete_observations", args: map[string]any{"deletions": []any{}}},
	{tool: "delete_observations", args: map[string]any{"deletions": []any{
		map[string]any{"entityName": "Alice", "observations": []string{"likes tea", "never there"}},
		map[string]any{"entityName": "Nope", "observations": []string{"x"}},
	}}},
	{tool: "delete_relations", args: map[string]any{"relations": []any{
		map[string]any{"from": "Alice", "to": "Nobody", "relationType": "knows"},
		map[string]any{"from": "Alice", "to": "Nobody", "relationType": "KNOWS"},
	}}},
	{tool: "delete_relations", args: map[string]any{"relations": []any{}}},
	{tool: "read_graph", args: map[string]any{}},
	{tool: "delete_entities", args: map[string]any{"entityNames": []string{"Alice", "Nope"}}},
	{tool: "read_graph", args: map[string]any{}},
	// Arguments that break the input schema.
	{tool: "create_entities", args: map[string]any{}, errorOnly: true},
	{tool: "create_entities", args: map[string]any{"entities": "x"}, errorOnly: true},
	{tool: "create_entities", args: map[string]any{"entities": []any{map[string]any{"name": "a"}}}, errorOnly: true},
	{tool: "create_entities", args: map[string]any{"entities": []any{map[string]any{"name": 1, "entityType": "t", "observations": []any{}}}}, errorOnly: true},
	{tool: "create_entities", args: map[string]any{"entities": []any{map[string]any{"name": "a", "entityType": "t", "observations": []any{1}}}}, errorOnly: true},
	{tool: "create_entities", args: map[string]any{"entities": []any{nil}}, errorOnly: true},
	{tool: "create_relations", args: map[string]any{"relations": []any{map[string]any{"from": "a"}}}, errorOnly: true},
	{tool: "create_relations", args: map[string]any{"relations": nil}, errorOnly: true},
	{tool: "add_observations", args: map[string]any{"observations": []any{map[string]any{"entityName": "a", "contents": "x"}}}, errorOnly: true},
	{tool: "add_observations", args: map[string]any{}, errorOnly: true},
	{tool: "delete_entities", args: map[string]any{"entityNames": []any{1}}, errorOnly: true},
	{tool: "delete_entities", args: map[string]any{"entityNames": "Alice"}, errorOnly: true},
	{tool: "delete_observations", args: map[string]any{}, errorOnly: true},
	{tool: "delete_observations", args: map[string]any{"deletions": []any{map[string]any{"entityName": "a"}}}, errorOnly: true},
	{tool: "delete_relations", args: map[string]any{"relations": map[string]any{}}, errorOnly: true},
	{tool: "search_nodes", args: map[string]any{}, errorOnly: true},
	{tool: "search_nodes", args: map[string]any{"query": 5}, errorOnly: true},
	{tool: "open_nodes", args: map[string]any{"names": "a"}, errorOnly: true},
	{tool: "open_nodes", args: map[string]any{"names": []any{true}}, errorOnly: true},
	{tool: "read_graph", args: map[string]any{}},
}

func TestMemoryCalls(t *testing.T) {
	p := newMemoryPair(t)
	for i, c := range memoryCalls {
		p.compare(t, fmt.Sprintf("call %d", i), c)
		p.sameFiles(t, fmt.Sprintf("after call %d (%s)", i, c))
	}
	for _, f := range []string{p.oursFile, p.theirsFile} {
		if fi, err := os.Stat(f); err == nil {
			t.Logf("%s: mode %v", filepath.Base(f), fi.Mode())
		}
	}
	// The graph as a resource.
	ot, om := readResource(t, p.ours, "memory://knowledge-graph")
	tt, tm := readResource(t, p.theirs, "memory://knowledge-graph")
	if ot != tt || om != tm {
		t.Errorf("resource memory://knowledge-graph differs\nours:   %s %q\ntheirs: %s %q", om, ot, tm, tt)
	}
}

// TestMemoryRandom runs a seeded random sequence of calls on both servers,
// comparing every outcome and, every 25 calls
// and at the end, the memory files byte for byte.
func TestMemoryRandom(t *testing.T) {
	seed := memorySeed(t)
	r := rand.New(rand.NewPCG(seed, 0))
	p := newMemoryPair(t)
	const n = 300
	for i := range n {
		c := randomMemoryCall(r)
		p.compare(t, fmt.Sprintf("seed %d call %d", seed, i), c)
		if t.Failed() {
			t.FailNow()
		}
		if i%25 == 24 {
			p.sameFiles(t, fmt.Sprintf("seed %d after call %d", seed, i))
		}
	}
	p.sameFiles(t, fmt.Sprintf("seed %d at the end", seed))
	data, err := os.ReadFile(p.oursFile)
	if err != nil {
		t.Fatal(err)
	}
	g := parseMemoryFile(t, data)
	t.Logf("%d calls; the graph has %d entities and %d relations (%d bytes)", n, len(g.Entities), len(g.Relations), len(data))
}

// memorySeed is a new seed for a random sequence, or MEMORY_SEED's to
// repeat one; it is logged.
func memorySeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MEMORY_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("MEMORY_SEED %q: %v", s, err)
		}
	}
	t.Logf("seed %d (MEMORY_SEED=%d repeats this sequence)", seed, seed)
	return seed
}

// TestMemorySharedFile points both servers at one file and alternates
// random calls between them: each reads what the other wrote, and both
// read the same graph after every call.
func TestMemorySharedFile(t *testing.T) {
	seed := memorySeed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	file := filepath.Join(dir, "shared.jsonl")
	ours := startMemory(t, dir, file, nil)
	theirs := startMemoryReference(t, file, nil)
	for i := range 120 {
		c := randomMemoryCall(r)
		writer, name := ours, "ours"
		if r.IntN(2) == 0 {
			writer, name = theirs, "theirs"
		}
		if out := call(t, writer, c.tool, c.args); out.ProtocolError != "" {
			t.Fatalf("seed %d call %d on %s: %s: %s", seed, i, name, c, out)
		}
		og, tg := call(t, ours, "read_graph", map[string]any{}), call(t, theirs, "read_graph", map[string]any{})
		sameOutcome(t, fmt.Sprintf("seed %d read_graph after call %d on %s (%s)", seed, i, name, c), og, tg, nil)
		if t.Failed() {
			t.FailNow()
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	parseMemoryFile(t, data)
}

// TestMemoryConcurrent has two mcphost processes (four instances each)
// write one file at once, from several goroutines each: no update may be
// lost and the file must parse.
func TestMemoryConcurrent(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	hosts := []*mcp.ClientSession{startMemory(t, dir, file, nil), startMemory(t, dir, file, nil)}
	if out := call(t, hosts[0], "create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "hub", "entityType": "counter", "observations": []string{}},
	}}); out.IsError || out.ProtocolError != "" {
		t.Fatalf("create hub: %s", out)
	}
	const goroutines, rounds = 4, 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	start := time.Now()
	for h, cs := range hosts {
		for g := range goroutines {
			wg.Go(func() {
				for i := range rounds {
					id := fmt.Sprintf("h%d-g%d-i%d", h, g, i)
					for _, c := range []memoryCall{
						{tool: "create_entities", args: map[string]any{"entities": []any{map[string]any{"name": id, "entityType": "item", "observations": []string{id}}}}},
						{tool: "add_observations", args: map[string]any{"observations": []any{map[string]any{"entityName": "hub", "contents": []string{id}}}}},
						{tool: "create_relations", args: map[string]any{"relations": []any{map[string]any{"from": id, "to": "hub", "relationType": "counts"}}}},
					} {
						if out := call(t, cs, c.tool, c.args); out.IsError || out.ProtocolError != "" {
							mu.Lock()
							failures = append(failures, fmt.Sprintf("%s: %s", c, out))
							mu.Unlock()
						}
					}
				}
			})
		}
	}
	wg.Wait()
	writes := len(hosts) * goroutines * rounds * 3
	t.Logf("%d writes from %d goroutines on 2 hosts in %v", writes, len(hosts)*goroutines, time.Since(start).Round(time.Millisecond))
	for _, f := range failures {
		t.Error(f)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	g := parseMemoryFile(t, data)
	var hub *memoryEntity
	names := map[string]bool{}
	for i, e := range g.Entities {
		names[e.Name] = true
		if e.Name == "hub" {
			hub = &g.Entities[i]
		}
	}
	if hub == nil {
		t.Fatal("hub is gone")
	}
	for h := range hosts {
		for g2 := range goroutines {
			for i := range rounds {
				id := fmt.Sprintf("h%d-g%d-i%d", h, g2, i)
				if !names[id] {
					t.Errorf("entity %s was lost", id)
				}
				if !slices.Contains(hub.Observations, id) {
					t.Errorf("observation %s of hub was lost", id)
				}
			}
		}
	}
	if want := len(hosts) * goroutines * rounds; len(g.Relations) != want {
		t.Errorf("%d relations, want %d", len(g.Relations), want)
	}
	leftovers(t, dir, "memory.jsonl")
}

// leftovers fails the test if dir holds anything but keep.
func leftovers(t *testing.T, dir string, keep ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains(keep, e.Name()) {
			t.Errorf("left behind in the memory directory: %s", e.Name())
		}
	}
}

// TestMemoryKilledWriter leaves what a writer killed mid-call leaves: a
// lock file and a torn temporary file. Neither corrupts the memory file
// nor blocks writers for ever.
func TestMemoryKilledWriter(t *testing.T) {
	createA := map[string]any{"entities": []any{map[string]any{"name": "A", "entityType": "t", "observations": []string{}}}}
	createB := map[string]any{"entities": []any{map[string]any{"name": "B", "entityType": "t", "observations": []string{}}}}

	t.Run("stale", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "memory.jsonl")
		old := time.Now().Add(-time.Hour)
		if err := os.WriteFile(file, []byte(`{"type":"entity","name":"A","entityType":"t","observations":[]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		staleTemp := file + ".0123456789abcdef0123456789abcdef.tmp"
		youngTemp := file + ".fedcba9876543210fedcba9876543210.tmp"
		for _, f := range []string{file + ".lock", staleTemp, youngTemp} {
			if err := os.WriteFile(f, []byte(`{"type":"entity","name":"torn`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{file + ".lock", staleTemp} {
			if err := os.Chtimes(f, old, old); err != nil {
				t.Fatal(err)
			}
		}
		cs := startMemory(t, dir, file, nil)
		if out := call(t, cs, "create_entities", createB); out.IsError || out.ProtocolError != "" {
			t.Fatalf("create_entities past a stale lock: %s", out)
		}
		g := readGraph(t, cs)
		if len(g.Entities) != 2 || g.Entities[0].Name != "A" || g.Entities[1].Name != "B" {
			t.Errorf("graph %+v, want A and B", g)
		}
		// The stale lock and temporary file are gone; a young temporary
		// file may be another writer's, at work: it stays.
		leftovers(t, dir, "memory.jsonl", filepath.Base(youngTemp))
	})

	t.Run("fresh lock, taken as abandoned after MEMORY_LOCK_STALE_AFTER", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "memory.jsonl")
		if err := os.WriteFile(file+".lock", []byte("someone\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cs := startMcphost(t, memoryConfig(t, rwGrant(dir), "MEMORY_FILE_PATH = "+tomlString(file)+", MEMORY_LOCK_STALE_AFTER = \"1s\""), nil)
		if out := call(t, cs, "create_entities", createA); out.IsError || out.ProtocolError != "" {
			t.Fatalf("create_entities: %s", out)
		}
		leftovers(t, dir, "memory.jsonl")
	})

	t.Run("fresh lock, not stale yet", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "memory.jsonl")
		if err := os.WriteFile(file+".lock", []byte("someone\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cs := startMemory(t, dir, file, nil)
		out := call(t, cs, "create_entities", createA)
		if !out.IsError || len(out.Content) != 1 || !strings.Contains(out.Content[0], "MEMORY_FILE_PATH") || !strings.Contains(out.Content[0], file+".lock") {
			t.Fatalf("create_entities under another writer's lock: %s", out)
		}
		t.Logf("under a live lock: %s", out.Content[0])
		// Readers need no lock.
		if g := readGraph(t, cs); len(g.Entities) != 0 {
			t.Errorf("graph %+v, want none", g)
		}
	})
}

// TestMemoryGrants: the memory file must lie inside a grant, writable to
// be written; every refusal names MEMORY_FILE_PATH.
func TestMemoryGrants(t *testing.T) {
	create := map[string]any{"entities": []any{map[string]any{"name": "A", "entityType": "t", "observations": []string{}}}}
	refused := func(t *testing.T, cs *mcp.ClientSession, tool string, args any, want ...string) {
		t.Helper()
		out := call(t, cs, tool, args)
		if !out.IsError || len(out.Content) != 1 {
			t.Fatalf("%s: %s, want a refusal", tool, out)
		}
		for _, w := range append(want, "MEMORY_FILE_PATH") {
			if !strings.Contains(out.Content[0], w) {
				t.Errorf("%s: %q does not say %q", tool, out.Content[0], w)
			}
		}
		t.Logf("%s: %s", tool, out.Content[0])
	}

	t.Run("no grant", func(t *testing.T) {
		dir := t.TempDir()
		cs := startMcphost(t, memoryConfig(t, "", "MEMORY_FILE_PATH = "+tomlString(filepath.Join(dir, "m.jsonl"))), nil)
		refused(t, cs, "read_graph", map[string]any{}, "allowed_paths")
		refused(t, cs, "create_entities", create, "allowed_paths")
	})
	t.Run("read-only grant", func(t *testing.T) {
		dir := t.TempDir()
		cs := startMcphost(t, memoryConfig(t, tomlString(dir)+" = "+tomlString(dir), "MEMORY_FILE_PATH = "+tomlString(filepath.Join(dir, "m.jsonl"))), nil)
		if g := readGraph(t, cs); len(g.Entities) != 0 {
			t.Errorf("graph %+v", g)
		}
		refused(t, cs, "create_entities", create, `"rw:"`)
		leftovers(t, dir)
	})
	t.Run("outside the grant", func(t *testing.T) {
		granted, other := t.TempDir(), t.TempDir()
		if err := os.Symlink(other, filepath.Join(granted, "link")); err != nil {
			t.Fatal(err)
		}
		for _, file := range []string{
			filepath.Join(other, "m.jsonl"),
			granted + "/../" + filepath.Base(other) + "/m.jsonl",
			filepath.Join(granted, "link", "m.jsonl"), // a symlink out of the grant
		} {
			cs := startMemory(t, granted, file, nil)
			refused(t, cs, "create_entities", create)
			refused(t, cs, "read_graph", map[string]any{})
		}
		leftovers(t, other)
	})
	t.Run("default path, legacy memory.json, relative path", func(t *testing.T) {
		dir := t.TempDir()
		legacy := `{"type":"entity","name":"Old","entityType":"t","observations":["from memory.json"]}`
		if err := os.WriteFile(filepath.Join(dir, "memory.json"), []byte(legacy), 0o600); err != nil {
			t.Fatal(err)
		}
		grant := tomlString("rw:"+dir) + ` = "/memory"`
		cs := startMcphost(t, memoryConfig(t, grant, ""), nil)
		if g := readGraph(t, cs); len(g.Entities) != 1 || g.Entities[0].Name != "Old" {
			t.Errorf("graph %+v, want the legacy file's", g)
		}
		if out := call(t, cs, "create_entities", create); out.IsError {
			t.Fatalf("create_entities: %s", out)
		}
		leftovers(t, dir, "memory.jsonl")

		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		cs = startMcphost(t, memoryConfig(t, grant, `MEMORY_FILE_PATH = "sub/rel.jsonl"`), nil)
		if out := call(t, cs, "create_entities", create); out.IsError {
			t.Fatalf("create_entities: %s", out)
		}
		if _, err := os.Stat(filepath.Join(dir, "sub", "rel.jsonl")); err != nil {
			t.Errorf("relative MEMORY_FILE_PATH: %v", err)
		}
	})
}

// TestMemorySubscription: a client subscribed to the graph resource hears
// of every change a tool makes, as from the reference.
func TestMemorySubscription(t *testing.T) {
	dir := t.TempDir()
	for name, start := range map[string]func(*mcp.ClientOptions) *mcp.ClientSession{
		"ours": func(o *mcp.ClientOptions) *mcp.ClientSession {
			return startMemory(t, dir, filepath.Join(dir, "m.jsonl"), o)
		},
		"theirs": func(o *mcp.ClientOptions) *mcp.ClientSession {
			return startMemoryReference(t, filepath.Join(dir, "r.jsonl"), o)
		},
	} {
		updated := make(chan string, 10)
		cs := start(&mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		}})
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "memory://knowledge-graph"}); err != nil {
			t.Fatalf("%s: subscribe: %v", name, err)
		}
		if out := call(t, cs, "delete_entities", map[string]any{"entityNames": []string{}}); out.IsError {
			t.Fatalf("%s: %s", name, out)
		}
		select {
		case uri := <-updated:
			if uri != "memory://knowledge-graph" {
				t.Errorf("%s: updated %q", name, uri)
			}
		case <-ctx.Done():
			t.Errorf("%s: no notifications/resources/updated after a change", name)
		}
		cancel()
	}
}

// TestMemoryForeignFile starts both servers on files written by hand, odd
// but readable (blank and CRLF lines, members in another order or
// repeated, lines of other types or not objects, an entity after a
// relation, escapes), or unreadable: both read them alike, and write the
// same bytes back.
func TestMemoryForeignFile(t *testing.T) {
	odd := "\n\n" +
		`{"observations":["o","\u00e9\/"],"entityType":"t","name":"a","type":"entity","extra":{"x":[1,2.5e3,null]}}` + "\r\n" +
		`{"type":"note","text":"x"}` + "\n   \n5\n[1]\n\"s\"\n" +
		`{"type":"relation","relationType":"r","to":"b","from":"a"}` + "\n" +
		`{"type":"entity","name":"x","name":"b","entityType":"t","observations":[]}` + "\n\t"
	for name, file := range map[string]struct {
		content    string
		unreadable bool
	}{
		"odd":          {content: odd},
		"empty":        {content: ""},
		"blank lines":  {content: "\n \n\t\n"},
		"not JSON":     {content: `{"type":"entity","name":"a","entityType":"t","observations":[]}` + "\n" + `{"type":"entity"`, unreadable: true},
		"byte order":   {content: "\ufeff" + `{"type":"entity","name":"a","entityType":"t","observations":[]}`, unreadable: true},
		"control char": {content: "{\"type\":\"entity\",\"name\":\"a\x01\",\"entityType\":\"t\",\"observations\":[]}", unreadable: true},
	} {
		t.Run(name, func(t *testing.T) {
			content := file.content
			p := newMemoryPair(t)
			for _, f := range []string{p.oursFile, p.theirsFile} {
				if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for i, c := range []memoryCall{
				{tool: "read_graph", args: map[string]any{}},
				{tool: "search_nodes", args: map[string]any{"query": "é"}},
				{tool: "add_observations", args: map[string]any{"observations": []any{map[string]any{"entityName": "b", "contents": []string{"new"}}}}},
				{tool: "read_graph", args: map[string]any{}},
			} {
				c.errorOnly = file.unreadable
				p.compare(t, fmt.Sprintf("%s: call %d", name, i), c)
			}
			p.sameFiles(t, name)
		})
	}
}
