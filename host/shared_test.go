package host_test

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPluginsOfOneFileShareCompiledCode: three plugins of one file and two
// of another, kept warm (idle_timeout "0"), hold two compiled modules,
// each loaded once; through a go-sdk client each plugin still sees its
// own config, and a trap in one leaves its twin (and itself) serving.
func TestPluginsOfOneFileShareCompiledCode(t *testing.T) {
	cfg := "[server.metrics]\nenabled = true\n"
	for i := range 3 {
		cfg += fmt.Sprintf("\n[[plugin]]\nname = \"h%d\"\npath = \"{hello}\"\nprefix = \"h%d_\"\nidle_timeout = \"0\"\nconfig = { greeting = \"Greeting %d\" }\n", i, i, i)
	}
	for i := range 2 {
		cfg += fmt.Sprintf("\n[[plugin]]\nname = \"f%d\"\npath = \"{faulty}\"\nprefix = \"f%d_\"\nidle_timeout = \"0\"\ntimeout = \"30s\"\n", i, i)
	}
	s := start(t, cfg)
	if v := metric(t, s.host, "mcphost_code_modules"); v != 2 {
		t.Errorf("mcphost_code_modules = %v for five plugins of two files, want 2", v)
	}
	if v := metric(t, s.host, "mcphost_code_loads_total"); v != 2 {
		t.Errorf("mcphost_code_loads_total = %v for five plugins of two files, want 2 (one compile each)", v)
	}
	for i := range 3 {
		want := fmt.Sprintf("Greeting %d, you!", i)
		if _, text := callText(t, s.session, fmt.Sprintf("h%d_greet", i), map[string]any{"name": "you"}); text != want {
			t.Errorf("h%d_greet = %q, want its own config: %q", i, text, want)
		}
	}
	res, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "f0_trap", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Fatalf("f0_trap succeeded: %+v", res)
	}
	for _, name := range []string{"f1_echo", "f0_echo"} {
		if _, text := callText(t, s.session, name, map[string]any{"text": "still here"}); text != "still here" {
			t.Errorf("%s after a trap in f0 = %q", name, text)
		}
	}
	if v := metric(t, s.host, "mcphost_code_loads_total"); v != 2 {
		t.Errorf("mcphost_code_loads_total = %v after the calls, want still 2", v)
	}
}

// TestPluginsOfOneFileKeepTheirOwnMemoryCaps: sharing compiled code must
// not share the memory cap, which wazero applies when it decodes a module
// for a runtime, not in the code. The plugin with the larger cap is called
// first, so that the code the other one gets is the code compiled for it.
func TestPluginsOfOneFileKeepTheirOwnMemoryCaps(t *testing.T) {
	cfg := `
[[plugin]]
name = "roomy"
path = "{faulty}"
prefix = "roomy_"
memory_mb = 256
max_output_kb = 65536
idle_timeout = "0"
timeout = "30s"

[[plugin]]
name = "tight"
path = "{faulty}"
prefix = "tight_"
memory_mb = 16
max_output_kb = 65536
idle_timeout = "0"
timeout = "30s"
`
	s := start(t, cfg)
	args := map[string]any{"bytes": 12 << 20} // under go-sdk's 16 MiB frame
	res, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "roomy_big", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("roomy_big (12 MiB in 256 MiB) = %+v, %v; want it to fit", res, err)
	}
	if _, text := callText(t, s.session, "tight_echo", map[string]any{"text": "runs"}); text != "runs" {
		t.Fatalf("tight_echo = %q: the tight plugin does not run at all", text)
	}
	res, err = s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "tight_big", Arguments: args})
	if err == nil && !res.IsError {
		t.Fatalf("tight_big (12 MiB, twice, in 16 MiB) succeeded: its memory cap was not its own")
	}
	if _, text := callText(t, s.session, "roomy_echo", map[string]any{"text": "still here"}); text != "still here" {
		t.Errorf("roomy_echo after tight's failure = %q", text)
	}
}
