package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestAppsThroughEveryEntryPoint: validate, plugin test and plugin
// inspect agree on an app (testdata/plugins/ui, whose page reaches
// https://api.example.com): within the grants, validate and plugin test
// pass and show what it reaches; outside them, both fail naming the
// source (as serve refuses the plugin); inspect, which grants nothing,
// passes and says which grant the app needs; an app whose source is
// malformed fails all three.
func TestAppsThroughEveryEntryPoint(t *testing.T) {
	wasm := testutil.GoPlugin(t, "testdata/plugins/ui")
	config := func(extra string) string {
		return testutil.WriteConfig(t, fmt.Sprintf("[server]\nlock_file = \"off\"\n[[plugin]]\nname = \"ui\"\npath = %q\n%s", wasm, extra))
	}
	const reaches = "app ui://test/app: shows the results of show; reaches connectDomains https://api.example.com"

	out, _, err := runCLI(t, "validate", "--config", config(`allowed_hosts = ["api.example.com"]`))
	if err != nil || !strings.Contains(out, reaches) {
		t.Errorf("validate within the grants = %v\n%s", err, out)
	}
	_, _, err = runCLI(t, "validate", "--config", config(`allowed_hosts = ["other.example.com"]`))
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), `"https://api.example.com" is outside the plugin's grants (allowed_hosts ["other.example.com"])`) {
		t.Errorf("validate outside the grants = %v (exit %d)", err, exitCode(err))
	}

	out, _, err = runCLI(t, "plugin", "test", "--allow-host", "api.example.com", wasm)
	if err != nil || !strings.Contains(out, "PASS  app      ui://test/app: shows the results of show; reaches connectDomains https://api.example.com") {
		t.Errorf("plugin test within the grants = %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "plugin", "test", wasm)
	if err == nil || exitCode(err) != 1 || !strings.Contains(out, `"https://api.example.com" is outside the plugin's grants`) {
		t.Errorf("plugin test outside the grants = %v (exit %d)\n%s", err, exitCode(err), out)
	}

	out, _, err = runCLI(t, "plugin", "inspect", wasm)
	if err != nil || !strings.Contains(out, "  app      ui://test/app: shows the results of show; reaches connectDomains https://api.example.com") ||
		!strings.Contains(out, `needs    its app ui://test/app reaches connectDomains https://api.example.com: host "api.example.com" is not in allowed_hosts`) {
		t.Errorf("plugin inspect = %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "plugin", "inspect", "--json", wasm)
	if err != nil || !strings.Contains(out, `"reaches": [`) {
		t.Errorf("plugin inspect --json = %v\n%s", err, out)
	}

	// A fault of form, not of grants: every entry point refuses it.
	read := `{"contents":[{"uri":"ui://test/app","mimeType":"text/html;profile=mcp-app","text":"x","_meta":{"ui":{"csp":{"connectDomains":["https://api.example.com; script-src *"]}}}}]}`
	_, _, err = runCLI(t, "validate", "--config", config(`allowed_hosts = ["*"]`+"\n"+`config = { read = '`+read+`' }`))
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "could end the CSP directive") {
		t.Errorf("validate of a malformed source = %v (exit %d)", err, exitCode(err))
	}
	out, _, err = runCLI(t, "plugin", "test", "--allow-host", "*", "--config-value", "read="+read, wasm)
	if err == nil || exitCode(err) != 1 || !strings.Contains(out, "has the character ';'") {
		t.Errorf("plugin test of a malformed source = %v (exit %d)\n%s", err, exitCode(err), out)
	}
}
