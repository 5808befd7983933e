package jsbundle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBundleTypeScript: a TypeScript entry importing a local module and
// the engine's: types stripped, the local module inlined, "mcphost" kept
// as an import, and a source map naming the sources.
func TestBundleTypeScript(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"src/main.ts": `import { McpServer } from "mcphost";
import { shout } from "./shout";
interface Args { name: string }
const server = new McpServer({ name: "ts", version: "1.0.0" });
server.registerTool("greet", { description: "Greets" }, ({ name }: Args) => shout("hello " + name));
`,
		"src/shout.ts": "export function shout(s: string): string { return s.toUpperCase(); }\n",
	})
	entry, err := FindEntry(dir)
	if err != nil || entry != "src/main.ts" {
		t.Fatalf("FindEntry = %q, %v", entry, err)
	}
	res, err := Bundle(dir, entry)
	if err != nil {
		t.Fatal(err)
	}
	js := string(res.JS)
	if !strings.Contains(js, `from "mcphost"`) || strings.Contains(js, "interface Args") || !strings.Contains(js, "toUpperCase") {
		t.Errorf("bundle:\n%s", js)
	}
	var m struct {
		Version int      `json:"version"`
		Sources []string `json:"sources"`
	}
	if err := json.Unmarshal(res.SourceMap, &m); err != nil || m.Version != 3 || !slices.Contains(m.Sources, "src/main.ts") || !slices.Contains(m.Sources, "src/shout.ts") {
		t.Errorf("source map: %v %+v", err, m)
	}
}

// TestBundleErrorsNameTheirPlace: a syntax error and a Node built-in are
// refused with file:line:column, the second with the reason.
func TestBundleErrorsNameTheirPlace(t *testing.T) {
	dir := writeFiles(t, map[string]string{"main.js": "import fs from \"fs\";\nconst x = ;\n"})
	_, err := Bundle(dir, "main.js")
	if err == nil || !strings.Contains(err.Error(), "main.js:2:11: Unexpected \";\"") {
		t.Errorf("syntax error: %v", err)
	}
	dir = writeFiles(t, map[string]string{"main.js": "import fs from \"node:fs\";\nfs.readFileSync(\"x\");\n"})
	if _, err := Bundle(dir, "main.js"); err == nil || !strings.Contains(err.Error(), "main.js:1:16") || !strings.Contains(err.Error(), "not in Node") {
		t.Errorf("node:fs: %v", err)
	}
	if _, err := FindEntry(t.TempDir()); err == nil || !strings.Contains(err.Error(), "main.ts") {
		t.Errorf("FindEntry of an empty directory: %v", err)
	}
}

// TestWithPositions: the table put on a bundle's first line maps a line of
// the bundle back to the file and line it came from; the bundle follows it
// unchanged.
func TestWithPositions(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"main.ts":     "import { McpServer } from \"mcphost\";\nimport { boom } from \"./lib/boom\";\n\n\nconst s: number = 1;\nboom(s);\n",
		"lib/boom.ts": "// comment\n\nexport function boom(n: number): never {\n  throw new Error(\"boom \" + n);\n}\n",
	})
	res, err := Bundle(dir, "main.ts")
	if err != nil {
		t.Fatal(err)
	}
	js, err := res.WithPositions()
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(js), "\n")
	if rest != string(res.JS) || !strings.Contains(first, `Symbol.for("mcphost.positions")`) {
		t.Fatalf("the bundle changed or has no table first:\n%s", js)
	}
	// The throw's line in the bundle maps to lib/boom.ts line 4 (0-based 3).
	var throwLine int
	for i, l := range strings.Split(string(js), "\n") {
		if strings.Contains(l, "throw new Error") {
			throwLine = i
		}
	}
	last := first
	var p positions
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(last), `Object.defineProperty(globalThis, Symbol.for("mcphost.positions"), { value: `), " });")), &p); err != nil {
		t.Fatalf("table: %v\n%s", err, last)
	}
	seg := p.Lines[throwLine]
	if len(seg) < 4 || p.Sources[seg[1]] != "lib/boom.ts" || seg[2] != 3 {
		t.Errorf("line %d of the bundle maps to %v (sources %v), want lib/boom.ts line 3", throwLine, seg, p.Sources)
	}
	if _, err := decodeVLQ("A#"); err == nil {
		t.Error("decodeVLQ accepted a character outside Base64")
	}
	if _, err := decodeMappings("AAAA,gggggggggA", 1); err == nil {
		t.Error("decodeMappings accepted a number too large")
	}
}
