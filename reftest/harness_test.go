package reftest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTimeout bounds one call to either server: generous, it only keeps a
// hung server from hanging the test run (never a timing assertion).
const callTimeout = 60 * time.Second

// sharedCache is the cache directory (XDG_CACHE_HOME) of every mcphost
// the tests start: a plugin is compiled once for the whole run, not once
// per test, as on a user's machine after the first start.
var sharedCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcphost-reftest-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "reftest:", err)
		os.Exit(1)
	}
	sharedCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is the checkout's root (this package's parent directory).
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	return filepath.Dir(filepath.Dir(file))
}

// pluginPath is the absolute path of plugins/NAME/NAME.wasm, which must
// have been built (make plugins).
func pluginPath(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "plugins", name, name+".wasm")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("plugin %s is not built (make plugins): %v", name, err)
	}
	return p
}

// mcphostBin is MCPHOST_BIN, the mcphost binary under test; the test is
// skipped without it.
func mcphostBin(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("MCPHOST_BIN")
	if bin == "" {
		t.Skip("MCPHOST_BIN is not set: the reference tests run through `make reference` (part of `make test`)")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// referenceEntry is the entry point (dist/index.js) of the npm package
// @modelcontextprotocol/server-NAME installed under MCPHOST_REFERENCE_DIR,
// and the Node binary to run it with (MCPHOST_NODE, else node on PATH).
// The test is skipped without MCPHOST_BIN, and fails when MCPHOST_BIN is
// set but the reference servers are not installed: `make reference`
// installs them, so their absence there is a failure, not a skip.
func referenceEntry(t testing.TB, name string) (node, entry string) {
	t.Helper()
	mcphostBin(t)
	dir := os.Getenv("MCPHOST_REFERENCE_DIR")
	if dir == "" {
		t.Fatal("MCPHOST_REFERENCE_DIR is not set: run the reference tests with `make reference`")
	}
	entry = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-"+name, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("reference server %s is not installed in %s: %v", name, dir, err)
	}
	node = os.Getenv("MCPHOST_NODE")
	if node == "" {
		node = "node"
	}
	return node, entry
}

// connect starts cmd as an MCP server over stdio and connects a go-sdk
// client to it (opts may be nil); the session is closed, and the server
// stopped, at the end of the test.
func connect(t testing.TB, cmd *exec.Cmd, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cmd.Stderr = &testLogWriter{t: t, prefix: filepath.Base(cmd.Path) + ": "}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcphost-reftest", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", strings.Join(cmd.Args, " "), err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// startMcphost serves config (the text of an mcphost.toml) over stdio
// with the mcphost binary under test, as a desktop client starts it, and
// returns a client connected to it. The config is written to a temporary
// directory; the compilation cache is shared by the run (sharedCache)
// unless the config sets cache_dir.
func startMcphost(t testing.TB, config string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	bin := mcphostBin(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", file)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+sharedCache)
	return connect(t, cmd, opts)
}

// startReference runs the npm reference server NAME
// (@modelcontextprotocol/server-NAME) with args and the extra environment
// env ("KEY=value"), and returns a client connected to it.
func startReference(t testing.TB, name string, args, env []string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	node, entry := referenceEntry(t, name)
	cmd := exec.Command(node, append([]string{entry}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return connect(t, cmd, opts)
}

// Outcome is what a tools/call came to, in a form two servers' answers
// can be compared in: a protocol error (its message), or a result.
type Outcome struct {
	ProtocolError string `json:",omitempty"`
	IsError       bool
	// Content is each content item: the text of a text item, else the
	// item as JSON.
	Content    []string
	Structured any `json:",omitempty"`
}

// String shows the outcome in test failures.
func (o Outcome) String() string {
	b, _ := json.MarshalIndent(o, "", "  ")
	return string(b)
}

// call calls tool name with args on cs and returns its outcome; a
// transport failure (the server died) fails the test.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			t.Fatalf("call %s: %v", name, err) // not an answer: the server died or hung
		}
		return Outcome{ProtocolError: err.Error()}
	}
	out := Outcome{IsError: res.IsError, Structured: res.StructuredContent}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.Content = append(out.Content, tc.Text)
			continue
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("call %s: content %T: %v", name, c, err)
		}
		out.Content = append(out.Content, string(b))
	}
	if out.Structured != nil {
		// Both sides as plain JSON values (go-sdk may keep raw JSON).
		b, err := json.Marshal(out.Structured)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		out.Structured = v
	}
	return out
}

// sameOutcome fails the test unless ours and theirs agree: both protocol
// errors (their messages may differ: each SDK words its own), or results
// with the same isError, content and structured content, after norm (if
// not nil) has rewritten every content text of both (for what differs by
// design, e.g. temporary paths).
func sameOutcome(t testing.TB, label string, ours, theirs Outcome, norm func(string) string) {
	t.Helper()
	if norm != nil {
		ours, theirs = normalized(ours, norm), normalized(theirs, norm)
	}
	if (ours.ProtocolError != "") != (theirs.ProtocolError != "") {
		t.Errorf("%s: one side is a protocol error\nours:   %s\ntheirs: %s", label, ours, theirs)
		return
	}
	if ours.ProtocolError != "" {
		return
	}
	if ours.IsError != theirs.IsError || !slices.Equal(ours.Content, theirs.Content) || !reflect.DeepEqual(ours.Structured, theirs.Structured) {
		t.Errorf("%s: results differ\nours:   %s\ntheirs: %s", label, ours, theirs)
	}
}

func normalized(o Outcome, norm func(string) string) Outcome {
	o.Content = slices.Clone(o.Content)
	for i, c := range o.Content {
		o.Content[i] = norm(c)
	}
	return o
}

// listTools returns every tool cs lists, by name.
func listTools(t testing.TB, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		tools[tool.Name] = tool
	}
	return tools
}

// sameTools fails the test unless ours lists exactly the tools theirs
// does, each with the same description, the same input schema properties
// (names, types, descriptions, defaults) and the same required list.
// Other schema keywords (additionalProperties, $schema) are not compared:
// each SDK adds its own.
func sameTools(t testing.TB, ours, theirs map[string]*mcp.Tool) {
	t.Helper()
	for name := range theirs {
		if ours[name] == nil {
			t.Errorf("tool %q of the reference server is missing", name)
		}
	}
	for name, o := range ours {
		r := theirs[name]
		if r == nil {
			t.Errorf("tool %q is not a tool of the reference server", name)
			continue
		}
		if o.Description != r.Description {
			t.Errorf("tool %q: description differs\nours:   %q\ntheirs: %q", name, o.Description, r.Description)
		}
		os, rs := schemaShape(t, o.InputSchema), schemaShape(t, r.InputSchema)
		if !reflect.DeepEqual(os, rs) {
			t.Errorf("tool %q: input schema differs\nours:   %s\ntheirs: %s", name, jsonText(os), jsonText(rs))
		}
	}
}

// schemaShape is what sameTools compares of an input schema: its
// properties and its required list (sorted).
func schemaShape(t testing.TB, schema any) map[string]any {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("input schema %s: %v", b, err)
	}
	slices.Sort(s.Required)
	shape := map[string]any{"properties": s.Properties}
	if len(s.Required) > 0 {
		shape["required"] = s.Required
	}
	return shape
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// testLogWriter sends a server's stderr to the test log, line by line.
type testLogWriter struct {
	t      testing.TB
	prefix string
	buf    []byte
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := slices.Index(w.buf, '\n')
		if i < 0 {
			break
		}
		w.t.Log(w.prefix + string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	return fmt.Sprintf("%q", s)
}
