package reftest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Differential tests of plugins/sequential-thinking against
// @modelcontextprotocol/server-sequential-thinking: the same calls to
// both, results compared call by call.

const seqTool = "sequentialthinking"

// seqConfig serves plugins/sequential-thinking; its thoughts go to the
// host log (as the reference's go to its stderr) unless quiet.
func seqConfig(t testing.TB, quiet bool) string {
	logging := ""
	if quiet {
		logging = "config = { DISABLE_THOUGHT_LOGGING = \"true\" }\n"
	}
	return "[[plugin]]\nname = \"sequential-thinking\"\npath = " + tomlString(pluginPath(t, "sequential-thinking")) +
		"\nmax_instances = 1\n" + logging
}

// seqPair starts mcphost serving the plugin and the reference server.
func seqPair(t *testing.T, quiet bool) (ours, theirs *mcp.ClientSession) {
	t.Helper()
	var env []string
	if quiet {
		env = []string{"DISABLE_THOUGHT_LOGGING=true"}
	}
	return startMcphost(t, seqConfig(t, quiet), nil), startReference(t, "sequential-thinking", nil, env, nil)
}

// TestSequentialThinkingTools: the same tool, with the same description,
// input schema, output schema, title and annotations.
func TestSequentialThinkingTools(t *testing.T) {
	ours, theirs := seqPair(t, true)
	o, r := listTools(t, ours), listTools(t, theirs)
	sameTools(t, o, r)
	if o[seqTool] == nil || r[seqTool] == nil {
		t.Fatalf("tool %s missing: ours %v, theirs %v", seqTool, o, r)
	}
	for _, part := range []struct {
		name        string
		ours, their any
	}{
		{"inputSchema", o[seqTool].InputSchema, r[seqTool].InputSchema},
		{"outputSchema", o[seqTool].OutputSchema, r[seqTool].OutputSchema},
		{"annotations", o[seqTool].Annotations, r[seqTool].Annotations},
		{"title", o[seqTool].Title, r[seqTool].Title},
	} {
		if a, b := plainJSON(t, part.ours), plainJSON(t, part.their); !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs\nours:   %s\ntheirs: %s", part.name, jsonText(a), jsonText(b))
		}
	}
}

// plainJSON is v as a plain JSON value.
func plainJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// seqCase is one call of a script: its arguments as JSON, and whether the
// host refuses them against the input schema before the plugin sees them
// (the reference's zod refuses them too, in its own words; README.md).
type seqCase struct {
	args        string
	hostRefuses bool
}

// seqCompare sends c to both servers and compares the outcomes: exactly,
// or, for arguments the host refuses, both isError with our text naming
// the first argument the reference names.
func seqCompare(t *testing.T, label string, ours, theirs *mcp.ClientSession, c seqCase) {
	t.Helper()
	o, r := call(t, ours, seqTool, json.RawMessage(c.args)), call(t, theirs, seqTool, json.RawMessage(c.args))
	if !c.hostRefuses {
		sameOutcome(t, label+" "+c.args, o, r, nil)
		return
	}
	if !o.IsError || !r.IsError || len(o.Content) != 1 || len(r.Content) != 1 {
		t.Errorf("%s %s: want both refused (isError)\nours:   %s\ntheirs: %s", label, c.args, o, r)
		return
	}
	if !strings.HasPrefix(r.Content[0], "MCP error -32602: Input validation error:") || !strings.Contains(o.Content[0], "invalid arguments") {
		t.Errorf("%s %s: refusals are not validation errors\nours:   %s\ntheirs: %s", label, c.args, o, r)
	}
}

// TestSequentialThinkingScript: good input, revisions, branches (IDs
// JavaScript orders first, IDs it finds on Object.prototype), booleans as
// strings, and bad input, call by call against the reference.
func TestSequentialThinkingScript(t *testing.T) {
	ours, theirs := seqPair(t, false)
	script := []seqCase{
		{args: `{"thought":"Start","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":3}`},
		{args: `{"thought":"Number past the total","nextThoughtNeeded":"TRUE","thoughtNumber":5,"totalThoughts":3}`},
		{args: `{"thought":"A revision","nextThoughtNeeded":true,"thoughtNumber":3,"totalThoughts":5,"isRevision":true,"revisesThought":1}`},
		{args: `{"thought":"Revision without a number","nextThoughtNeeded":true,"thoughtNumber":4,"totalThoughts":5,"isRevision":"True"}`},
		{args: `{"thought":"Branch b","nextThoughtNeeded":true,"thoughtNumber":5,"totalThoughts":6,"branchFromThought":2,"branchId":"b"}`},
		{args: `{"thought":"Branch 10","nextThoughtNeeded":true,"thoughtNumber":6,"totalThoughts":6,"branchFromThought":2,"branchId":"10"}`},
		{args: `{"thought":"Branch 2","nextThoughtNeeded":true,"thoughtNumber":7,"totalThoughts":6,"branchFromThought":3,"branchId":"2"}`},
		{args: `{"thought":"Branch b again","nextThoughtNeeded":true,"thoughtNumber":8,"totalThoughts":9,"branchFromThought":2,"branchId":"b"}`},
		{args: `{"thought":"Not an index","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":1,"branchId":"02"}`},
		{args: `{"thought":"Largest index","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":1,"branchId":"4294967294"}`},
		{args: `{"thought":"Past the indices","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":1,"branchId":"4294967295"}`},
		{args: `{"thought":"Empty branch id","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":1,"branchId":""}`},
		{args: `{"thought":"Branch id alone","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchId":"lonely"}`},
		{args: `{"thought":"Branch from alone","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":4}`},
		{args: `{"thought":"Quoting","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":1,"branchId":"<&>\u2028\u0001\t\"\\é😀"}`},
		{args: `{"thought":"Prototype","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":1,"branchId":"__proto__"}`},
		{args: `{"thought":"Prototype","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":1,"branchId":"constructor"}`},
		{args: `{"thought":"Prototype","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":1,"branchId":"toString"}`},
		{args: `{"thought":"Own property","nextThoughtNeeded":true,"thoughtNumber":9,"totalThoughts":9,"branchFromThought":1,"branchId":"length"}`},
		{args: `{"thought":"Floats that are integers","nextThoughtNeeded":false,"thoughtNumber":3.0,"totalThoughts":2e0}`},
		{args: `{"thought":"Unknown keys are dropped","nextThoughtNeeded":"false","thoughtNumber":1,"totalThoughts":1,"mood":"happy"}`},
		{args: `{"thought":"","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":1,"needsMoreThoughts":"FALSE"}`},
		// Booleans as strings that are neither: the plugin answers as zod.
		{args: `{"thought":"x","nextThoughtNeeded":"yes","thoughtNumber":1,"totalThoughts":3}`},
		{args: `{"thought":"x","nextThoughtNeeded":"yes","thoughtNumber":1,"totalThoughts":3,"isRevision":"no \"q\"","needsMoreThoughts":""}`},
		{args: `{"thought":"x","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":3,"needsMoreThoughts":"maybe"}`},
		// Refused against the schema, by the host and by zod.
		{args: `{}`, hostRefuses: true},
		{args: `{"nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":3}`, hostRefuses: true},
		{args: `{"thought":5,"nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":3}`, hostRefuses: true},
		{args: `{"thought":"x","nextThoughtNeeded":true,"thoughtNumber":0,"totalThoughts":3}`, hostRefuses: true},
		{args: `{"thought":"x","nextThoughtNeeded":true,"thoughtNumber":1.5,"totalThoughts":3}`, hostRefuses: true},
		{args: `{"thought":"x","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":9007199254740993}`, hostRefuses: true},
		{args: `{"thought":"x","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":3,"branchId":null}`, hostRefuses: true},
		{args: `{"thought":"x","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":3,"revisesThought":-2}`, hostRefuses: true},
		// After all that, the history counts on.
		{args: `{"thought":"End","nextThoughtNeeded":false,"thoughtNumber":10,"totalThoughts":10}`},
	}
	for i, c := range script {
		seqCompare(t, fmt.Sprintf("call %d", i+1), ours, theirs, c)
	}
}

// TestSequentialThinkingRandom: a seeded random sequence of valid calls
// (thoughts, revisions, branches from a small pool of IDs, booleans in
// every accepted form), compared call by call. REFTEST_SEED replays one.
func TestSequentialThinkingRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REFTEST_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("REFTEST_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (REFTEST_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	ours, theirs := seqPair(t, true)
	for i := range 150 {
		args := randomThought(rng)
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		seqCompare(t, fmt.Sprintf("seed %d call %d", seed, i+1), ours, theirs, seqCase{args: string(b)})
		if t.Failed() {
			return // one difference is enough to look at
		}
	}
}

// randomThought returns the arguments of one valid call.
func randomThought(rng *rand.Rand) map[string]any {
	booleans := []any{true, false, "true", "false", "TRUE", "False", "tRuE"}
	ids := []string{"a", "b", "main", "7", "0", "42", "007", "alt-2", "ünïcødé", "__proto__", "valueOf", ""}
	texts := []string{"plain", "", "quotes \" and \\ backslash", "tab\tnew\nline", "emoji 😀 and é", "<html> & stuff", "\u2028\u0001"}
	n := 1 + rng.IntN(12)
	args := map[string]any{
		"thought":           texts[rng.IntN(len(texts))] + strconv.Itoa(rng.IntN(100)),
		"nextThoughtNeeded": booleans[rng.IntN(len(booleans))],
		"thoughtNumber":     n,
		"totalThoughts":     1 + rng.IntN(12),
	}
	if rng.IntN(4) == 0 {
		args["isRevision"] = booleans[rng.IntN(len(booleans))]
		if rng.IntN(2) == 0 {
			args["revisesThought"] = 1 + rng.IntN(n)
		}
	}
	if rng.IntN(3) == 0 {
		args["branchFromThought"] = 1 + rng.IntN(n)
	}
	if rng.IntN(3) == 0 {
		args["branchId"] = ids[rng.IntN(len(ids))]
	}
	if rng.IntN(5) == 0 {
		args["needsMoreThoughts"] = booleans[rng.IntN(len(booleans))]
	}
	if rng.IntN(20) == 0 {
		args["extra"] = rng.IntN(10)
	}
	return args
}

// TestSequentialThinkingSessionsApart: one mcphost serving HTTP, two
// go-sdk sessions, each compared with a reference process of its own
// (the reference keeps one history per process, ours one per session);
// their calls interleave, and neither sees the other's thoughts or
// branches.
func TestSequentialThinkingSessionsApart(t *testing.T) {
	endpoint := startMcphostHTTP(t, seqConfig(t, true))
	env := []string{"DISABLE_THOUGHT_LOGGING=true"}
	var ours, theirs [2]*mcp.ClientSession
	for i := range 2 {
		ours[i] = connectHTTP(t, endpoint)
		theirs[i] = startReference(t, "sequential-thinking", nil, env, nil)
	}
	for step := range 6 {
		for i := range 2 {
			c := seqCase{args: fmt.Sprintf(`{"thought":"session %d step %d","nextThoughtNeeded":true,"thoughtNumber":%d,"totalThoughts":6,"branchFromThought":1,"branchId":"s%d-b%d"}`,
				i, step, step+1, i, step%2)}
			seqCompare(t, fmt.Sprintf("session %d step %d", i, step), ours[i], theirs[i], c)
		}
	}
}

// startMcphostHTTP serves config with `mcphost serve --http 127.0.0.1:0`
// until the test ends, and returns its MCP endpoint (which it prints on
// stderr).
func startMcphostHTTP(t *testing.T, config string) string {
	t.Helper()
	bin := mcphostBin(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", file, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	endpoint := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		sent := false
		for lines.Scan() {
			line := lines.Text()
			if url, ok := strings.CutPrefix(line, "mcphost: MCP endpoint "); ok && !sent {
				endpoint <- url
				sent = true
			}
		}
		if !sent {
			close(endpoint)
		}
	}()
	select {
	case url, ok := <-endpoint:
		if !ok {
			t.Fatal("mcphost serve --http ended without printing its endpoint")
		}
		return url
	case <-time.After(callTimeout):
		t.Fatalf("mcphost serve --http printed no endpoint in %s", callTimeout)
		return ""
	}
}

// connectHTTP connects a go-sdk client to endpoint (stateful, 2025-11-25).
func connectHTTP(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcphost-reftest", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
