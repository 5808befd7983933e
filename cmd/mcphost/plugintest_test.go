package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcphost/mcphost/internal/testutil"
)

func TestPluginTestPassesAGoodPlugin(t *testing.T) {
	out, stderr, err := runCLI(t, "plugin", "test", "--args", `echo={"text":"given"}`, testutil.GoPlugin(t, "plugins/hello"))
	if err != nil {
		t.Fatalf("plugin test of hello: %v\n%s\n%s", err, out, stderr)
	}
	for _, want := range []string{
		`PASS  tool     echo`, `args {"text":"given"}`, // given arguments win
		`PASS  tool     add`, `args {"a":1.5,"b":1.5}`, // made up from the schema
		`WARN  tool     fail`, "this tool always fails",
		"4 checks: 3 passed, 1 warnings, 0 failed, 0 skipped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPluginTestReportsAFaultyPlugin(t *testing.T) {
	out, _, err := runCLI(t, "plugin", "test", "--json", "--timeout", "2s", testutil.GoPlugin(t, "testdata/plugins/faulty"))
	if err == nil || !strings.Contains(err.Error(), "checks failed") {
		t.Fatalf("plugin test of faulty = %v, want checks failed", err)
	}
	var checks []check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	status := map[string]checkStatus{}
	detail := map[string]string{}
	for _, c := range checks {
		status[c.Name], detail[c.Name] = c.Status, c.Detail
	}
	for name, want := range map[string]checkStatus{"echo": checkPass, "trap": checkFail, "garbage": checkFail, "spin": checkFail, "exit": checkFail} {
		if status[name] != want {
			t.Errorf("%s: %s (%s), want %s", name, status[name], detail[name], want)
		}
	}
	if !strings.Contains(detail["spin"], "timeout") || !strings.Contains(detail["garbage"], "not a JSON object") {
		t.Errorf("details do not say what went wrong: spin %q, garbage %q", detail["spin"], detail["garbage"])
	}
}

func TestPluginTestRefusesBadInput(t *testing.T) {
	if _, _, err := runCLI(t, "plugin", "test", "--args", "echo={not json", "x.wasm"); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("bad --args = %v", err)
	}
	if _, _, err := runCLI(t, "plugin", "test"); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no file = %v", err)
	}
	out, _, err := runCLI(t, "plugin", "test", "/nonexistent/p.wasm")
	if err == nil || !strings.Contains(out, "FAIL  plugin") {
		t.Errorf("missing file = %v\n%s", err, out)
	}
}

func TestExampleForSatisfiesCommonSchemas(t *testing.T) {
	for _, text := range []string{
		`{"type":"object","properties":{"n":{"type":"integer","minimum":10,"maximum":20}},"required":["n"]}`,
		`{"type":"object","properties":{"s":{"type":"string","minLength":12,"format":"email"}},"required":["s"]}`,
		`{"type":"object","properties":{"e":{"enum":["red","green"]}},"required":["e"]}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"number","exclusiveMinimum":2},"minItems":2}},"required":["a"]}`,
		`{"type":"object","properties":{"o":{"type":"object","properties":{"b":{"type":"boolean"}},"required":["b"]}},"required":["o"]}`,
		`{"type":"object","properties":{"x":{"type":["null","string"],"maxLength":3}},"required":["x"]}`,
		`{"type":"object","properties":{"d":{"type":"string","default":"given"}},"required":["d"]}`,
	} {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			t.Fatal(err)
		}
		resolved, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		v := exampleFor(&s, 0)
		if err := resolved.Validate(v); err != nil {
			t.Errorf("%s: made up %v: %v", text, v, err)
		}
	}
}

// TestPluginTestShowsWhatATrapWrote: a Go plugin's panic traps with only
// "unreachable"; the panic message is on its stderr, written a few bytes
// per fd_write. plugin test shows it under the failed check, joined into
// whole lines.
func TestPluginTestShowsWhatATrapWrote(t *testing.T) {
	faulty := testutil.GoPlugin(t, "testdata/plugins/faulty")
	out, _, err := runCLI(t, "plugin", "test", "--json", "--timeout", "2s", faulty)
	if err == nil {
		t.Fatal("plugin test of faulty passed")
	}
	var checks []check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	var panicked *check
	for i := range checks {
		if checks[i].Name == "panic" {
			panicked = &checks[i]
		}
	}
	if panicked == nil || panicked.Status != checkFail {
		t.Fatalf("panic check = %+v", panicked)
	}
	for _, want := range []string{"stderr: panic: faulty: deliberate panic", "stderr: goroutine 1 [running]:", "stderr: main.callTool()"} {
		if !slices.Contains(panicked.Output, want) {
			t.Errorf("output of the panic check lacks the line %q:\n%s", want, strings.Join(panicked.Output, "\n"))
		}
	}
	text, _, _ := runCLI(t, "plugin", "test", "--timeout", "2s", faulty)
	if !strings.Contains(text, "call_tool: wasm error: unreachable\n        stderr: panic: faulty: deliberate panic\n") {
		t.Errorf("the report does not show the panic under the failed check:\n%s", text)
	}
}

// TestPluginTestReadsResourceTemplates: each resource template is
// expanded (given variables, else made up) and read.
func TestPluginTestReadsResourceTemplates(t *testing.T) {
	everything := testutil.GoPlugin(t, "plugins/everything")
	out, stderr, err := runCLI(t, "plugin", "test", "--args", `test://template/{id}/data={"id":"42"}`, everything)
	if !strings.Contains(out, `PASS  template test://template/{id}/data`) || !strings.Contains(out, "read test://template/42/data") {
		t.Errorf("plugin test does not read the template with the given id: %v\n%s\n%s", err, out, stderr)
	}
	out, _, _ = runCLI(t, "plugin", "test", everything)
	if !strings.Contains(out, `PASS  template test://template/{id}/data`) || !strings.Contains(out, `args {"id":"example"}`) {
		t.Errorf("plugin test does not read the template with a made-up id:\n%s", out)
	}
}

// leftOutFaults are the tools testdata/plugins/leftout lists that serve
// leaves out: each with the part at fault and what the reason says.
var leftOutFaults = []struct{ item, pointer, reason string }{
	{`tool #2 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"… (10000 bytes)`, "/name", "is invalid"},
	{`tool #3 "read file"`, "/name", "is invalid"},
	{`tool #4 "../etc/passwd"`, "/name", "is invalid"},
	{`tool #5 (no name)`, "/name", `name "" is invalid`},
	{`tool #6 "long_description"`, "/description", "is 65537 bytes (at most 65536)"},
	{`tool #7 "lookahead"`, "/inputSchema/properties/x/pattern", "is not a regular expression"},
	{`tool #8 "not_an_object"`, "/inputSchema/type", `must be a JSON Schema with "type": "object"`},
	{`tool #9 "null_schema"`, "/inputSchema", "missing"},
}

// hostileFaults are what the hostile build adds: hidden text and a
// look-alike name, which leave out the whole plugin (its good tool and
// prompt too).
var hostileFaults = []struct{ item, pointer, reason string }{
	{`tool #10 "r\u0435ad_file"`, "/name", "is a look-alike: it mixes Latin and Cyrillic letters"},
	{`tool #11 "rlo"`, "/description", "invisible or control character U+202E"},
	{`tool #12 "zwsp"`, "/title", "invisible or control character U+200B"},
	{`tool #13 "tags"`, "/description", "invisible or control character U+E0049"},
	{`tool "fine"`, "", "left out with its plugin"},
	{`prompt "fine_prompt"`, "", "left out with its plugin"},
}

// Issue 25 item 6: plugin test fails a plugin whose items serve would
// leave out, with a FAIL naming each one, the JSON Pointer of its fault and
// why; a hostile plugin fails whole.
func TestPluginTestFailsWhatServeLeavesOut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tags    []string
		faults  int
		hostile bool
	}{
		{"buggy", nil, len(leftOutFaults), false},
		{"hostile", []string{"hostile"}, len(leftOutFaults) + len(hostileFaults), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wasm := testutil.GoPlugin(t, "testdata/plugins/leftout", tc.tags...)
			out, stderr, err := runCLI(t, "plugin", "test", "--json", wasm)
			if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "checks failed") {
				t.Fatalf("plugin test = %v (exit %d), want checks failed\n%s\n%s", err, exitCode(err), out, stderr)
			}
			var checks []check
			if err := json.Unmarshal([]byte(out), &checks); err != nil {
				t.Fatalf("--json output: %v\n%s", err, out)
			}
			var left []check
			whole := false
			for _, c := range checks {
				if c.LeftOut {
					left = append(left, c)
				}
				if c.Kind == "plugin" && c.Status == checkFail && strings.Contains(c.Detail, "left out whole") {
					whole = true
				}
			}
			if whole != tc.hostile {
				t.Errorf("a FAIL for the whole plugin: %v, want %v", whole, tc.hostile)
			}
			want := slices.Clone(leftOutFaults)
			if tc.hostile {
				want = append(want, hostileFaults...)
			}
			if len(left) != len(want) {
				t.Fatalf("%d left-out checks, want %d: %+v", len(left), len(want), left)
			}
			for i, w := range want {
				c := left[i]
				if c.Status != checkFail || c.Kind+" "+c.Name != w.item || c.Pointer != w.pointer || !strings.Contains(c.Detail, w.reason) {
					t.Errorf("check %d = %s %s %s (pointer %q): %s; want %s at %q: %s", i, c.Status, c.Kind, c.Name, c.Pointer, c.Detail, w.item, w.pointer, w.reason)
				}
			}
			// What serve does serve is still tried.
			passed := slices.ContainsFunc(checks, func(c check) bool { return c.Name == "fine" && c.Status == checkPass })
			if passed == tc.hostile {
				t.Errorf("tool fine tried and passed: %v; want %v", passed, !tc.hostile)
			}
		})
	}
}

// `plugin test --allow-path` grants a directory as allowed_paths does: the
// memory plugin, which fails its resource read in the default sandbox
// (no directory for its file), passes with its directory granted, and
// writes its file there.
func TestPluginTestGrantsADirectory(t *testing.T) {
	memory := testutil.GoPlugin(t, "plugins/memory")
	out, stderr, err := runCLI(t, "plugin", "test", memory)
	if err == nil || !strings.Contains(out, "FAIL  resource memory://knowledge-graph") || !strings.Contains(out, "MEMORY_FILE_PATH") {
		t.Fatalf("plugin test of memory without a grant: %v\n%s\n%s", err, out, stderr)
	}
	dir := t.TempDir()
	out, stderr, err = runCLI(t, "plugin", "test", "--allow-path", "rw:"+dir+"=/memory", memory)
	if err != nil || !strings.Contains(out, "PASS  resource memory://knowledge-graph") {
		t.Fatalf("plugin test of memory with its directory granted: %v\n%s\n%s", err, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "memory.jsonl")); err != nil {
		t.Errorf("the granted directory holds no memory file: %v", err)
	}
	_, _, err = runCLI(t, "plugin", "test", "--allow-path", "rw:"+filepath.Join(dir, "missing")+"=/memory", memory)
	if err == nil || !strings.Contains(err.Error(), "1 of 1 checks failed") {
		t.Errorf("plugin test with a missing directory granted: %v", err)
	}
}
