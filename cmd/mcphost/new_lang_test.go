package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// scaffoldLangs are the languages whose scaffold TestPluginNewScaffoldsBuildAndServe
// builds with `plugin build` (through their build.sh, or the bundler for
// JavaScript and TypeScript; the Go scaffold: build_test.go and
// run_test.go), and the tool each scaffold offers.
var scaffoldLangs = []struct {
	lang, tool string
}{
	{"c", "demo_hello"},
	{"rust", "demo_hello"},
	{"as", "demo_hello"},
	{"wat", "demo_ping"},
	{"js", "demo_hello"},
	{"ts", "demo_hello"},
}

// TestPluginNewScaffoldFiles checks what `plugin new` writes for every
// language, without building: subdirectories kept, templates rendered,
// build.sh executable, a .gitignore that lets the built .wasm be committed.
func TestPluginNewScaffoldFiles(t *testing.T) {
	for _, lang := range sortedKeys(languages) {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo")
			if _, _, err := runCLI(t, "plugin", "new", "--lang", lang, "demo", dir); err != nil {
				t.Fatal(err)
			}
			var files []string
			err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
				if err != nil || e.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(dir, p)
				files = append(files, filepath.ToSlash(rel))
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if strings.HasSuffix(p, ".tmpl") || bytes.Contains(b, []byte("{{")) {
					t.Errorf("%s: not rendered", rel)
				}
				if strings.Contains(string(b), "<no value>") {
					t.Errorf("%s: renders a missing template field", rel)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if readme, err := os.ReadFile(filepath.Join(dir, "README.md")); err != nil || !strings.Contains(string(readme), "demo") {
				t.Errorf("README.md: %v (files: %v)", err, files)
			}
			if lang == "go" {
				return
			}
			if lang != "js" && lang != "ts" { // bundled by plugin build itself
				if fi, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil || fi.Mode()&0o111 == 0 {
					t.Errorf("build.sh is missing or not executable: %v", err)
				}
			}
			if gi, err := os.ReadFile(filepath.Join(dir, ".gitignore")); err != nil || !strings.Contains(string(gi), "!demo.wasm") {
				t.Errorf(".gitignore = %q, %v; want an exception for demo.wasm", gi, err)
			}
		})
	}
}

// TestPluginNewScaffoldsBuildAndServe scaffolds a plugin in each language
// but Go, builds it with `plugin build` (then, where the scaffold has a
// build.sh, build.sh --check: the build is reproducible), and serves it with
// the real CLI over stdio to a go-sdk client that calls its tool. A subtest
// is skipped only when build.sh says the toolchain is missing (exit 3); in
// CI, `make test` has installed every toolchain before the tests run.
func TestPluginNewScaffoldsBuildAndServe(t *testing.T) {
	root := testutil.RepoRoot(t)
	for _, tc := range scaffoldLangs {
		t.Run(tc.lang, func(t *testing.T) {
			// Inside the repository, as plugins/NAME would be: an
			// AssemblyScript build.sh may use its scripts/conformance.sh.
			base, err := os.MkdirTemp(filepath.Join(root, "testdata"), "scaffold-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			dir := filepath.Join(base, "demo")
			if out, _, err := runCLI(t, "plugin", "new", "--lang", tc.lang, "demo", dir); err != nil || !strings.Contains(out, "mcphost plugin build "+dir) {
				t.Fatalf("plugin new does not say how to build: %v\n%s", err, out)
			}

			// The one build command of every language runs its build.sh;
			// build.sh --check then finds the module it wrote up to date.
			if out, stderr, err := runCLI(t, "plugin", "build", dir); err != nil {
				if strings.Contains(err.Error(), "toolchain is missing") {
					t.Skipf("%s toolchain missing (build.sh exit 3; as root it installs it):\n%s", tc.lang, stderr)
				}
				t.Fatalf("plugin build: %v\n%s%s", err, out, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "build.sh")); err == nil {
				cmd := exec.CommandContext(t.Context(), filepath.Join(dir, "build.sh"), "--check")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("build.sh --check: %v\n%s", err, out)
				}
			}
			wasm := filepath.Join(dir, "demo.wasm")

			in, err := inspect(t.Context(), wasm)
			if err != nil || !in.Loads || in.ABIVersion != 1 || !reflect.DeepEqual(in.Tools, []string{tc.tool}) {
				t.Fatalf("inspect: %+v, %v", in, err)
			}

			if out, stderr, err := runCLI(t, "plugin", "test", wasm); err != nil || !strings.Contains(out, "PASS  tool     "+tc.tool) {
				t.Errorf("plugin test of the %s scaffold: %v\n%s%s", tc.lang, err, out, stderr)
			}

			cs := serveStdio(t, wasm)
			if tc.tool == "demo_ping" {
				if text := callScaffold(t, cs, tc.tool, map[string]any{}, nil); text != "pong" {
					t.Errorf("%s = %q, want pong", tc.tool, text)
				}
				return
			}
			// A name with JSON escapes and non-ASCII text: the plugin decodes
			// and re-encodes it.
			name := "Ada \"the\" \\ Countess ✓\n😀"
			want := "Hello, " + name + "!"
			var structured map[string]any
			if text := callScaffold(t, cs, tc.tool, map[string]any{"name": name}, &structured); text != want {
				t.Errorf("%s = %q, want %q", tc.tool, text, want)
			}
			if structured["greeting"] != want {
				t.Errorf("%s: structuredContent = %v, want greeting %q", tc.tool, structured, want)
			}
			// Without its required argument the host refuses the call before
			// the plugin sees it (inputSchema).
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
			if err != nil || !res.IsError {
				t.Errorf("%s without name = %+v, %v; want isError", tc.tool, res, err)
			}
			// Envelopes no host sends, and a 64 KiB name: host/lang_scaffold_test.go
			// (the scaffolds import input_read and output_write, which
			// only mcphost's host provides).
		})
	}
}

// serveStdio runs `mcphost serve` (this test binary) with a config loading
// only wasm, and connects a go-sdk client to it over stdio. Its log is
// shown if the test fails.
func serveStdio(t *testing.T, wasm string) *mcp.ClientSession {
	t.Helper()
	cfg := testutil.WriteConfig(t, fmt.Sprintf("[server]\nwatch = false\n\n[[plugin]]\nname = \"demo\"\npath = %q\n", wasm))
	cmd := exec.Command(os.Args[0], "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "MCPHOST_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "scaffold-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("mcphost stderr:\n%s", stderr.String())
		}
	})
	return cs
}

// callScaffold calls tool, which must succeed with one text content, and
// returns that text; structured, if not nil, receives the structured content.
func callScaffold(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, structured *map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("call %s = %+v", tool, res)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: content %T", tool, res.Content[0])
	}
	if structured != nil {
		m, ok := res.StructuredContent.(map[string]any)
		if !ok {
			t.Fatalf("call %s: structuredContent %T %v", tool, res.StructuredContent, res.StructuredContent)
		}
		*structured = m
	}
	return text.Text
}

// TestScaffoldSharedFilesMatchExamples keeps the files the scaffolds copy
// from the example plugins (the kernel declarations and JSON readers) the
// same as the examples', which their tests exercise.
func TestScaffoldSharedFilesMatchExamples(t *testing.T) {
	root := testutil.RepoRoot(t)
	for _, pair := range [][2]string{
		{"templates/c/extism.h", "plugins/c/extism.h"},
		{"templates/rust/src/extism.rs", "plugins/rust/src/extism.rs"},
		{"templates/rust/src/json.rs", "plugins/rust/src/json.rs"},
		{"templates/as/assembly/json.ts", "plugins/assemblyscript/assembly/json.ts"},
		{"templates/ts/mcphost.d.ts", "sdk/js/mcphost.d.ts"},
		{"templates/ts/mcphost.d.ts", "plugins/ts-hello/mcphost.d.ts"},
		{"templates/ts/tsconfig.json", "plugins/ts-hello/tsconfig.json"},
	} {
		tmpl, example := pair[0], pair[1]
		got, err := templates.ReadFile(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(root, example))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("cmd/mcphost/%s differs from %s: copy it over (cp %s cmd/mcphost/%s)", tmpl, example, example, tmpl)
		}
	}
}
