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
