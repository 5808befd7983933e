package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginBuildGo: `plugin build` builds the Go scaffold where it is
// made (a module of its own, pinned to this checkout's SDK), into
// DIR/NAME.wasm or -o, and the module passes plugin test.
func TestPluginBuildGo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "greeter")
	if out, _, err := runCLI(t, "plugin", "new", "--lang", "go", "greeter", dir); err != nil || !strings.Contains(out, "mcphost plugin build "+dir) {
		t.Fatalf("plugin new: %v\n%s", err, out)
	}
	t.Setenv("GOFLAGS", "-buildvcs=false")
	t.Setenv("GOPROXY", "off")
	out, stderr, err := runCLI(t, "plugin", "build", dir)
	if err != nil || !strings.Contains(out, "greeter.wasm (Go)") {
		t.Fatalf("plugin build: %v\n%s%s", err, out, stderr)
	}
	other := filepath.Join(t.TempDir(), "other.wasm")
	if out, stderr, err := runCLI(t, "plugin", "build", "-o", other, dir); err != nil {
		t.Fatalf("plugin build -o: %v\n%s%s", err, out, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "greeter.wasm"))
	b, _ := os.ReadFile(other)
	if len(a) == 0 || len(b) != len(a) {
		t.Errorf("the module built into DIR has %d bytes, with -o %d", len(a), len(b))
	}
	if out, stderr, err := runCLI(t, "plugin", "test", other); err != nil || !strings.Contains(out, "PASS  tool     greeter_hello") {
		t.Errorf("plugin test of the built module: %v\n%s%s", err, out, stderr)
	}
}

// TestPluginBuildErrors: a directory it cannot tell how to build, a file,
// a Go compile error and a JavaScript syntax error each fail, naming the
// cause (exit 1), and a second directory argument is a usage error.
func TestPluginBuildErrors(t *testing.T) {
	empty := t.TempDir()
	if _, _, err := runCLI(t, "plugin", "build", empty); err == nil || !strings.Contains(err.Error(), "cannot tell how to build") || exitCode(err) != 1 {
		t.Errorf("an empty directory: %v", err)
	}
	file := filepath.Join(empty, "x.wasm")
	if err := os.WriteFile(file, []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "plugin", "build", file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file: %v", err)
	}
	broken := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module broken\n\ngo 1.24\n", "main.go": "package main\n\nfunc main() { undefined() }\n"} {
		if err := os.WriteFile(filepath.Join(broken, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, stderr, err := runCLI(t, "plugin", "build", broken); err == nil || !strings.Contains(err.Error(), "go build in") || !strings.Contains(stderr, "undefined") {
		t.Errorf("a Go compile error: %v\n%s", err, stderr)
	}
	js := t.TempDir()
	if err := os.WriteFile(filepath.Join(js, "main.js"), []byte("const = 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "plugin", "build", js); err == nil || !strings.Contains(err.Error(), "main.js:1:7") {
		t.Errorf("a JavaScript syntax error: %v", err)
	}
	// An error thrown while the module is first evaluated names the place
	// in the TypeScript source, through the positions the build puts first.
	ts := t.TempDir()
	for name, text := range map[string]string{
		"main.ts":     "import { McpServer } from \"mcphost\";\nimport { boom } from \"./lib/boom\";\nconst s = new McpServer();\ns.registerTool(\"x\", {}, () => \"x\");\nboom(1);\n",
		"lib/boom.ts": "// comment\n\nexport function boom(n: number): never {\n  throw new Error(\"boom \" + n);\n}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ts, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ts, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "boom.wasm")
	if _, _, err := runCLI(t, "plugin", "build", "-o", out, ts); err != nil {
		t.Fatal(err)
	}
	if stdout, _, err := runCLI(t, "plugin", "test", out); exitCode(err) != 1 || !strings.Contains(stdout, "Error: boom 1 (at lib/boom.ts:4:") {
		t.Errorf("plugin test of a plugin that throws as it starts: %v, want exit 1 and the error at lib/boom.ts:4\n%s", err, stdout)
	}
	if _, _, err := runCLI(t, "plugin", "build", empty, js); exitCode(err) != 2 {
		t.Errorf("two directories: %v, want a usage error", err)
	}
}
