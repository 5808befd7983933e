package host_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// Issue 15, item 7: a tool whose inputSchema (or outputSchema) is not a
// JSON Schema ("type": "numbr") loaded, and every call to it failed. It is
// refused at load, with an error naming the plugin, the tool, where in the
// schema and what is wrong; the plugin's other tools are served.
func TestInvalidToolSchemasAreRefusedAtLoad(t *testing.T) {
	p := testutil.WATPlugin{Tools: tools(
		`{"name":"fine","inputSchema":{"type":"object","properties":{"n":{"type":"number"}}}}`,
		`{"name":"typo","inputSchema":{"type":"object","properties":{"n":{"type":"numbr"}}}}`,
		`{"name":"negative","inputSchema":{"type":"object","properties":{"s":{"type":"string","maxLength":-1}}}}`,
		`{"name":"output","inputSchema":{"type":"object"},"outputSchema":{"type":"object","required":"total"}}`,
		`{"name":"dialect","inputSchema":{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}}`,
	)}
	s := start(t, hostileConfig(t, p, ""))
	names, _, _, _ := hostileNames(t, s.session)
	if !slices.Contains(names, "fine") {
		t.Errorf("tools/list = %v, missing fine", names)
	}
	for _, bad := range []string{"typo", "negative", "output", "dialect"} {
		if slices.Contains(names, bad) {
			t.Errorf("tools/list = %v: %q was not refused", names, bad)
		}
	}
	wantLogged(t, s,
		`tool \"typo\": inputSchema: not a valid JSON Schema: at \"/properties/n/type\": \"numbr\" is not a JSON Schema type (one of array, boolean, integer, null, number, object, string)`,
		`tool \"negative\": inputSchema: not a valid JSON Schema: at \"/properties/s/maxLength\": must be a non-negative integer, not the number -1`,
		`tool \"output\": outputSchema: not a valid JSON Schema: at \"/required\": must be an array of property names, not the string \"total\"`,
		`tool \"dialect\": inputSchema: not a valid JSON Schema: at \"/$schema\"`,
	)
	for _, line := range strings.Split(s.log.String(), "\n") {
		if strings.Contains(line, `tool \"typo\"`) && !strings.Contains(line, "plugin=hostile") {
			t.Errorf("the refusal does not name the plugin: %s", line)
		}
	}
	if res, text := callText(t, s.session, "fine", map[string]any{"n": 1}); res.IsError {
		t.Errorf("fine: %s", text)
	}
	afterFault(t, s)
}

// Issue 15, item 7: a null argument where the schema wants a string was
// reported as `type: <invalid reflect.Value> has type "null"…`, under the
// schema's path. The error names the argument and the problem.
func TestArgumentErrorsNameTheArgumentPlainly(t *testing.T) {
	s := start(t, helloConfig)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"text": nil}, `tool "echo": invalid arguments: argument "text": null has type "null", want "string"`},
		{map[string]any{}, `tool "echo": invalid arguments: missing required arguments: ["text"]`},
		{map[string]any{"text": "a", "loud": true}, `tool "echo": invalid arguments: unexpected arguments: ["loud"]`},
	} {
		res, text := callText(t, s.session, "echo", c.args)
		if !res.IsError || text != c.want {
			t.Errorf("echo %v = %q (isError %v), want %q", c.args, text, res.IsError, c.want)
		}
	}
}

// Issue 15, item 7: test_tool_with_progress answered "<nil>" when the
// request carried no progress token.
func TestProgressToolWithoutATokenSaysSo(t *testing.T) {
	cs := connect(t, everythingHost(t), nil, "2025-11-25")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.IsError {
		t.Fatalf("result = %+v", res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "no progress token") {
		t.Errorf("text = %q, want it to say there was no progress token", text)
	}
}
