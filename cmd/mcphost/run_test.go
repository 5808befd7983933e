package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestMain lets the test binary stand in for the mcphost binary: with
// MCPHOST_TEST_MAIN=1 it runs main, so subprocess tests exercise the real
// CLI, stdio and all.
func TestMain(m *testing.M) {
	if os.Getenv("MCPHOST_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(t.Context(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), err
}

func helloConfig(t *testing.T) string {
	return testutil.WriteConfig(t, fmt.Sprintf(`
[server]
log_level = "debug"

[[plugin]]
name = "hello"
path = %q
`, testutil.GoPlugin(t, "plugins/hello")))
}

// TestVersion: version prints the build's Go version and platform, and
// the VCS commit with its time and dirty flag when the build has them.
func TestVersion(t *testing.T) {
	out, _, err := runCLI(t, "version")
	if err != nil || !strings.HasPrefix(out, "mcphost ") || !strings.Contains(out, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("version = %q, %v; want the Go version and platform", out, err)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.1", Settings: []debug.BuildSetting{
		{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "3b16f80c1d2e4f5a6b7c8d9e0f1a2b3c4d5e6f7a"},
		{Key: "vcs.time", Value: "2026-11-25T12:29:19Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	want := "mcphost v1.2.3 (commit 3b16f80c1d2e, 2026-11-25T12:29:19Z, modified; go1.26.1 linux/arm64)"
	if got := describeBuild("v1.2.3", bi); got != want {
		t.Errorf("describeBuild =\n%s\nwant\n%s", got, want)
	}
	bi.Settings = bi.Settings[:2]
	if got := describeBuild("dev", bi); got != "mcphost dev (no VCS information; go1.26.1 linux/arm64)" {
		t.Errorf("describeBuild without VCS = %s", got)
	}
}

// TestHelpIsNotAnError: -h and --help on every command print its usage to
// stdout and succeed; "plugin --help" lists the plugin subcommands.
func TestHelpIsNotAnError(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "mcphost serve"},
		{[]string{"serve", "--help"}, "Usage: mcphost serve [--config FILE]"},
		{[]string{"serve", "-h"}, "-stateless"},
		{[]string{"validate", "--help"}, "Usage: mcphost validate"},
		{[]string{"plugin", "--help"}, "mcphost plugin inspect"},
		{[]string{"plugin", "help"}, "mcphost plugin accept"},
		{[]string{"plugin", "test", "--help"}, "-config-value KEY=VALUE"},
		{[]string{"plugin", "inspect", "-h"}, "Usage: mcphost plugin inspect"},
		{[]string{"plugin", "new", "--help"}, "-lang"},
		{[]string{"plugin", "accept", "--help"}, "Usage: mcphost plugin accept"},
	} {
		out, stderr, err := runCLI(t, tc.args...)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("mcphost %s = %v\nstdout:\n%s\nstderr:\n%s\nwant stdout to contain %q", strings.Join(tc.args, " "), err, out, stderr, tc.want)
		}
	}
	// mcphost --help and plugin --help name every plugin subcommand, and
	// each subcommand answers --help.
	top, _, _ := runCLI(t, "--help")
	plugin, _, _ := runCLI(t, "plugin", "--help")
	for _, sub := range []string{"inspect", "test", "describe", "warm", "new", "build", "accept", "push", "sign", "pull", "update"} {
		if !strings.Contains(top, "mcphost plugin "+sub+" ") || !strings.Contains(plugin, "mcphost plugin "+sub+" ") {
			t.Errorf("mcphost --help or plugin --help does not list plugin %s", sub)
		}
		if out, _, err := runCLI(t, "plugin", sub, "--help"); err != nil || !strings.Contains(out, "mcphost plugin "+sub) {
			t.Errorf("plugin %s --help = %v\n%s", sub, err, out)
		}
	}
	// A mistake still is one: exit 2, usage on stderr.
	out, stderr, err := runCLI(t, "serve", "--nope")
	if err == nil || exitCode(err) != 2 || out != "" || !strings.Contains(stderr, "Usage: mcphost serve") {
		t.Errorf("serve --nope = %v (exit %d)\nstdout %q\nstderr %q", err, exitCode(err), out, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"frobnicate"}, {"serve", "--nope"}, {"validate", "extra"}} {
		_, _, err := runCLI(t, args...)
		if err == nil || exitCode(err) != 2 {
			t.Errorf("run(%q) = %v, want a usage error (exit 2)", args, err)
		}
	}
}

func TestValidateGoodConfig(t *testing.T) {
	out, _, err := runCLI(t, "validate", "--config", helloConfig(t))
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if !strings.Contains(out, "ok, 1 plugin(s)") || !strings.Contains(out, "4 tools: add, echo, fail, greet") ||
		!strings.Contains(out, "grants nothing beyond the sandbox") || !strings.Contains(out, "limits 30s per call") {
		t.Errorf("validate output = %q", out)
	}
}

// TestValidateWritesNothing: validate loads every plugin and compares it
// with the lock file, but leaves the config's directory as it found it —
// no lock file, no audit log.
func TestValidateWritesNothing(t *testing.T) {
	cfg := testutil.WriteConfig(t, fmt.Sprintf(`
[server.audit]
file = "audit.jsonl"

[[plugin]]
name = "hello"
path = %q
`, testutil.GoPlugin(t, "plugins/hello")))
	dir := filepath.Dir(cfg)
	listing := func() []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	before := listing()
	if out, stderr, err := runCLI(t, "validate", "--config", cfg); err != nil {
		t.Fatalf("validate: %v\n%s%s", err, out, stderr)
	}
	if after := listing(); !slices.Equal(before, after) {
		t.Errorf("validate changed %s: before %q, after %q", dir, before, after)
	}
}

func TestValidateBadConfigs(t *testing.T) {
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "notwasm.wasm")
	os.WriteFile(notWasm, []byte("this is text, not wasm"), 0o644)
	hello := testutil.GoPlugin(t, "plugins/hello")
	for _, tc := range []struct {
		name, config string
		want         []string
	}{
		{"unknown key", fmt.Sprintf("[[plugin]]\nname = \"hello\"\npath = %q\nmemory = 5\n", hello),
			[]string{`unknown key "memory"`, ":4"}},
		{"missing plugin file", "[[plugin]]\nname = \"ghost\"\npath = \"ghost.wasm\"\n",
			[]string{`plugin "ghost"`, "ghost.wasm", "no such file"}},
		{"not wasm", fmt.Sprintf("[[plugin]]\nname = \"text\"\npath = %q\n", notWasm),
			[]string{`plugin "text"`, "not a WebAssembly module"}},
		{"bad duration", fmt.Sprintf("[[plugin]]\nname = \"hello\"\npath = %q\ntimeout = \"soon\"\n", hello),
			[]string{`plugin "hello"`, "timeout", `"soon" is not a duration`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, "validate", "--config", testutil.WriteConfig(t, tc.config))
			if err == nil {
				t.Fatal("validate succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	_, _, err := runCLI(t, "validate", "--config", filepath.Join(dir, "absent.toml"))
	if err == nil || !strings.Contains(err.Error(), "absent.toml") {
		t.Errorf("validate of a missing config = %v", err)
	}
}

// TestServeOverStdio starts the real CLI as a subprocess and talks to it
// with the go-sdk client over its stdin/stdout.
func TestServeOverStdio(t *testing.T) {
	cfg := helloConfig(t)
	cmd := exec.Command(os.Args[0], "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "MCPHOST_TEST_MAIN=1", "EXTISM_ENABLE_WASI_OUTPUT=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer func() {
		if t.Failed() {
			t.Logf("mcphost stderr:\n%s", stderr.String())
		}
	}()
	if got := cs.InitializeResult().ServerInfo.Name; got != "mcphost" {
		t.Errorf("server name = %q", got)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("ListTools = %v, %v", tools, err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over stdio"}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "over stdio" {
		t.Errorf("echo = %+v", res.Content)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if !strings.Contains(stderr.String(), "plugin loaded") || !strings.Contains(stderr.String(), "echo") {
		t.Errorf("stderr does not log the loaded plugin and its tools:\n%s", stderr.String())
	}
}

func TestPluginInspect(t *testing.T) {
	out, _, err := runCLI(t, "plugin", "inspect", "--json", testutil.GoPlugin(t, "plugins/everything"))
	if err != nil {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	var in inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("inspect --json output is not JSON: %v\n%s", err, out)
	}
	if !in.Loads || in.Flavor != "mcphost" || len(in.SHA256) != 64 || in.Size == 0 ||
		!slices.Contains(in.Tools, "echo") || !slices.Contains(in.Resources, "test://static-text") ||
		!slices.Contains(in.Templates, "test://template/{id}/data") || !slices.Contains(in.Prompts, "test_simple_prompt") ||
		!slices.Contains(in.Exports, "mcphost_abi_version") || !slices.Contains(in.Imports, "extism:host/user.notify_progress") {
		t.Errorf("inspection = %+v", in)
	}
	if !slices.Contains(in.Tasks, "slow_compute (optional)") || !slices.Contains(in.Tasks, "failing_job (required)") || slices.ContainsFunc(in.Tasks, func(s string) bool { return strings.HasPrefix(s, "echo") }) {
		t.Errorf("inspection's tasks = %v, want the tools that may run as tasks with their support", in.Tasks)
	}

	text, _, err := runCLI(t, "plugin", "inspect", testutil.GoPlugin(t, "testdata/plugins/hypermcp-v2"))
	if err != nil || !strings.Contains(text, "hyper-mcp v2") || !strings.Contains(text, "keyring secret: refused") || !strings.Contains(text, "sampling") {
		t.Errorf("inspect of a hyper-mcp plugin = %v\n%s", err, text)
	}

	notWasm := filepath.Join(t.TempDir(), "x.wasm")
	os.WriteFile(notWasm, []byte("hello"), 0o644)
	if _, _, err := runCLI(t, "plugin", "inspect", notWasm); err == nil || !strings.Contains(err.Error(), "not a valid WebAssembly module") {
		t.Errorf("inspect of a text file = %v", err)
	}
}

// TestPluginNewScaffoldsPluginsThatLoad scaffolds a plugin per template,
// builds it with its toolchain, and checks the host loads it as is.
func TestPluginNewScaffoldsPluginsThatLoad(t *testing.T) {
	root := testutil.RepoRoot(t)
	for _, tc := range []struct {
		lang  string
		build func(t *testing.T, dir, name string) string // returns the .wasm
	}{
		{"go", func(t *testing.T, dir, name string) string {
			out := filepath.Join(dir, name+".wasm")
			rel, _ := filepath.Rel(root, dir)
			// Inside the repository it is a package of the module, built
			// from the root: the README says so with a relative path, even
			// though plugin new was given an absolute one.
			readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
			if want := "-o " + filepath.ToSlash(rel) + "/" + name + ".wasm ./" + filepath.ToSlash(rel) + "\n"; !strings.Contains(string(readme), want) {
				t.Errorf("README.md lacks %q:\n%s", want, readme)
			}
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				t.Error("a Go scaffold inside the repository has a go.mod of its own")
			}
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./"+filepath.ToSlash(rel))
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("build scaffolded Go plugin: %v\n%s", err, b)
			}
			return out
		}},
		{"wat", func(t *testing.T, dir, name string) string {
			if _, err := exec.LookPath("wat2wasm"); err != nil {
				t.Skip("wat2wasm not installed (Debian package wabt; make plugins installs it)")
			}
			out := filepath.Join(dir, name+".wasm")
			if b, err := exec.Command("wat2wasm", filepath.Join(dir, name+".wat"), "-o", out).CombinedOutput(); err != nil {
				t.Fatalf("wat2wasm: %v\n%s", err, b)
			}
			return out
		}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			// Inside the module, so that a Go plugin resolves the SDK.
			base, err := os.MkdirTemp(filepath.Join(root, "testdata"), "scaffold-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			dir := filepath.Join(base, "demo")
			out, _, err := runCLI(t, "plugin", "new", "--lang", tc.lang, "demo", dir)
			if err != nil || !strings.Contains(out, "README.md") {
				t.Fatalf("plugin new: %v\n%s", err, out)
			}
			if _, _, err := runCLI(t, "plugin", "new", "--lang", tc.lang, "demo", dir); err == nil {
				t.Error("plugin new overwrote an existing plugin")
			}
			wasm := tc.build(t, dir, "demo")
			in, err := inspect(t.Context(), wasm)
			if err != nil || !in.Loads || len(in.Tools) != 1 || !strings.HasPrefix(in.Tools[0], "demo_") {
				t.Errorf("scaffolded %s plugin: %+v, %v", tc.lang, in, err)
			}
		})
	}
	if _, _, err := runCLI(t, "plugin", "new", "--lang", "cobol", "x"); err == nil || exitCode(err) != 2 {
		t.Errorf("unknown language: %v", err)
	}
	if _, _, err := runCLI(t, "plugin", "new", "Bad-Name"); err == nil || exitCode(err) != 2 {
		t.Errorf("bad name: %v", err)
	}
}

// TestPluginNewGoBuildsWhereItIsMade: a Go scaffold made outside the
// repository is a module of its own that builds in its directory as its
// README says — offline, against this checkout — and passes plugin test.
func TestPluginNewGoBuildsWhereItIsMade(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "greeter")
	if out, stderr, err := runCLI(t, "plugin", "new", "--lang", "go", "greeter", dir); err != nil {
		t.Fatalf("plugin new: %v\n%s%s", err, out, stderr)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const build = "GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o greeter.wasm ."
	if !strings.Contains(string(readme), build) || !strings.Contains(string(readme), testutil.RepoRoot(t)) {
		t.Errorf("README.md does not say to run %q here, against %s:\n%s", build, testutil.RepoRoot(t), readme)
	}
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", "greeter.wasm", ".")
	cmd.Dir = dir
	// GOFLAGS is cleared so that -mod=readonly holds: go.mod and go.sum
	// must be complete as written. GOPROXY=off: no network.
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false", "GOPROXY=off", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", dir, err, b)
	}
	// It needs the SDK's modules only, not the host's: none of wazero,
	// Extism's go-sdk, the MCP go-sdk or sigstore is in its module graph,
	// and its go line is the SDK's, not the host's.
	list := exec.Command("go", "list", "-m", "all")
	list.Dir = dir
	list.Env = cmd.Env
	mods, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all in %s: %v\n%s", dir, err, mods)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(mods)), "\n") {
		names = append(names, strings.Fields(line)[0])
	}
	if want := []string{"greeter", "github.com/extism/go-pdk", "github.com/mcphost/mcphost/abi", "github.com/mcphost/mcphost/sdk"}; !slices.Equal(names, want) {
		t.Errorf("go list -m all = %q, want %q", names, want)
	}
	sdkMod, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "sdk", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if g := goLine.FindSubmatch(sdkMod); g == nil || !bytes.Contains(mod, []byte("\ngo "+string(g[1])+"\n")) {
		t.Errorf("go.mod does not have sdk/go.mod's go line:\n%s", mod)
	}
	out, stderr, err := runCLI(t, "plugin", "test", filepath.Join(dir, "greeter.wasm"))
	if err != nil || !strings.Contains(out, "PASS  tool     greeter_hello") {
		t.Errorf("plugin test of the scaffold: %v\n%s%s", err, out, stderr)
	}
}

// TestSDKGoLine: the go line a scaffold made without a checkout takes is
// sdk/go.mod's.
func TestSDKGoLine(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "sdk", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if g := goLine.FindSubmatch(mod); g == nil || string(g[1]) != sdkGo {
		t.Errorf("sdk/go.mod's go line is %q, sdkGo %q: make them equal", g, sdkGo)
	}
}

// TestGoModuleWithoutACheckout: with no mcphost checkout to point at, the
// scaffold's go.mod pins nothing it cannot know: no replace, no made-up
// version.
func TestGoModuleWithoutACheckout(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeGoModule(dir, "lonely", goModule{}); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(mod), "module lonely\n\ngo "+sdkGo+"\n") || strings.Contains(string(mod), "replace") || strings.Contains(string(mod), "v0.0.0-") {
		t.Errorf("go.mod:\n%s", mod)
	}
	for v, want := range map[string]bool{"v1.2.3": true, "v1.2.3-rc.1": true, "dev": false,
		"v0.0.0-20261125122919-3b16f80c1d2e": false, "v1.2.4-0.20261125122919-3b16f80c1d2e": false, "v1.2.3+dirty": false} {
		if isRelease(v) != want {
			t.Errorf("isRelease(%q) = %v", v, !want)
		}
	}
}

func TestPluginAccept(t *testing.T) {
	cfg := helloConfig(t)
	out, _, err := runCLI(t, "plugin", "accept", "--config", cfg, "hello")
	if err != nil || !strings.Contains(out, "accepted hello") {
		t.Fatalf("accept: %v, %s", err, out)
	}
	lock, err := os.ReadFile(strings.TrimSuffix(cfg, ".toml") + ".lock")
	if err != nil || !strings.Contains(string(lock), `"echo"`) {
		t.Errorf("lock file = %s, %v", lock, err)
	}
	if _, _, err := runCLI(t, "plugin", "accept", "--config", cfg, "ghost"); err == nil || !strings.Contains(err.Error(), `"ghost"`) {
		t.Errorf("accepting an unknown plugin: %v", err)
	}
}

// Issue 25 item 6: validate exited 0 when serve would leave out items of a
// plugin. It fails now, and names every item left out: the config file,
// the plugin, the item, the JSON Pointer of the fault and why; a hostile
// plugin is reported left out whole.
func TestValidateFailsWhatServeLeavesOut(t *testing.T) {
	cfg := testutil.WriteConfig(t, fmt.Sprintf(`
[server]
lock_file = "off"

[[plugin]]
name = "buggy"
path = %q

[[plugin]]
name = "hostile"
path = %q
prefix = "h_"
`, testutil.GoPlugin(t, "testdata/plugins/leftout"), testutil.GoPlugin(t, "testdata/plugins/leftout", "hostile")))
	out, stderr, err := runCLI(t, "validate", "--config", cfg)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("validate = %v (exit %d), want a failure (exit 1)\n%s\n%s", err, exitCode(err), out, stderr)
	}
	if !strings.Contains(out, cfg+": FAILED, 2 plugin(s)") {
		t.Errorf("validate output does not say it failed:\n%s", out)
	}
	lines := strings.Split(err.Error(), "\n")
	if !strings.Contains(lines[0], "22 item(s) left out") {
		t.Errorf("error begins %q, want the number of items left out", lines[0])
	}
	// Every item, in the error (stderr) and in the report (stdout).
	type want struct{ plugin, item, pointer, reason string }
	var wants []want
	for _, f := range leftOutFaults {
		wants = append(wants, want{"buggy", f.item, f.pointer, f.reason}, want{"hostile", f.item, f.pointer, f.reason})
	}
	for _, f := range hostileFaults {
		wants = append(wants, want{"hostile", strings.Replace(f.item, `"fine"`, `"h_fine"`, 1), f.pointer, f.reason})
	}
	wants = append(wants, want{"hostile", "left out whole", "", "hides text or offers look-alike names"})
	for _, w := range wants {
		at := ""
		if w.pointer != "" {
			at = " at " + w.pointer
		}
		prefix := fmt.Sprintf("%s: plugin %q: %s%s", cfg, w.plugin, w.item, at)
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), prefix) })
		if i < 0 || !strings.Contains(lines[i], w.reason) {
			t.Errorf("the error has no line %q…%q", prefix, w.reason)
		}
		if !strings.Contains(out, "LEFT OUT "+w.item+at) {
			t.Errorf("the report does not show %s%s", w.item, at)
		}
	}
	if len(lines) != 1+len(wants) {
		t.Errorf("the error has %d lines, want %d:\n%s", len(lines), 1+len(wants), err)
	}

	// A good config still passes.
	if _, _, err := runCLI(t, "validate", "--config", helloConfig(t)); err != nil {
		t.Errorf("validate of a good config: %v", err)
	}
}

// Issue 25 item 6: plugin inspect reports what serve would leave out, and
// fails.
func TestPluginInspectFailsWhatServeLeavesOut(t *testing.T) {
	wasm := testutil.GoPlugin(t, "testdata/plugins/leftout", "hostile")
	out, _, err := runCLI(t, "plugin", "inspect", "--json", wasm)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "14 item(s) left out") ||
		!strings.Contains(err.Error(), wasm+`: tool #11 "rlo" at /description: string at "/description" has an invisible or control character U+202E`) {
		t.Fatalf("inspect = %v (exit %d)", err, exitCode(err))
	}
	var in inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("inspect --json output is not JSON: %v\n%s", err, out)
	}
	if !in.Loads || !in.Hostile || len(in.LeftOut) != len(leftOutFaults)+len(hostileFaults) || len(in.Tools) != 0 {
		t.Fatalf("inspection: loads %v, hostile %v, %d left out, tools %v", in.Loads, in.Hostile, len(in.LeftOut), in.Tools)
	}
	if l := in.LeftOut[5]; l.Kind != "tool" || l.Name != "lookahead" || l.Index != 7 || l.Pointer != "/inputSchema/properties/x/pattern" || l.Hostile {
		t.Errorf("left out #7 = %+v", l)
	}
	if l := in.LeftOut[8]; l.Name != "r\u0435ad_file" || l.Pointer != "/name" || !l.Hostile {
		t.Errorf("left out #10 = %+v", l)
	}
	text, _, err := runCLI(t, "plugin", "inspect", testutil.GoPlugin(t, "testdata/plugins/leftout"))
	if err == nil || !strings.Contains(text, `LEFT OUT tool #8 "not_an_object" at /inputSchema/type: inputSchema: must be a JSON Schema with "type": "object"`) ||
		strings.Contains(text, "left out whole") || !strings.Contains(text, "tools    fine") {
		t.Errorf("inspect of the buggy plugin = %v\n%s", err, text)
	}
}
