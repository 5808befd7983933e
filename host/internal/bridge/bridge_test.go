package bridge

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeCaller answers every export with a fixed output: it stands for a
// plugin that lies, which is the point of these tests (the real Wasm path
// is covered by the host's tests).
type fakeCaller struct{ out string }

func (f fakeCaller) Name() string { return "liar" }
func (f fakeCaller) Call(context.Context, string, []byte) ([]byte, error) {
	return []byte(f.out), nil
}

func TestListToolsRefusesWhatAPluginShouldNotOffer(t *testing.T) {
	tool := func(name, desc, schema string) string {
		b, _ := json.Marshal(map[string]any{"name": name, "description": desc, "inputSchema": json.RawMessage(schema)})
		return `{"tools":[` + string(b) + `]}`
	}
	obj := `{"type":"object"}`
	for _, tc := range []struct {
		out, want string
	}{
		{tool("ok", "fine\nmultiline\ttext", obj), ""},
		{tool("bad name!", "x", obj), "name"},
		{tool("hidden", "innocent\u202eesrever", obj), "U+202E"},
		{tool("zero", "look\u200bhere", obj), "U+200B"},
		{tool("bell", "ring\x07", obj), "U+0007"},
		{tool("big", strings.Repeat("a", maxTextBytes+1), obj), "at most"},
		{tool("arr", "x", `{"type":"array"}`), `"type": "object"`},
		{tool("bad", "x", `{"type":"object","properties":{"a":{"type":12}}}`), "inputSchema"},
		{`{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"a","inputSchema":{"type":"object"}}]}`, "listed twice"},
		{`{"tools":[null]}`, "is null"},
		{`{"tools":[{"name":12,"inputSchema":{"type":"object"}}]}`, "tool #2: invalid"},
	} {
		// Each bad tool is left out on its own: the good one beside it
		// stays.
		out := strings.Replace(tc.out, `{"tools":[`, `{"tools":[{"name":"good","inputSchema":{"type":"object"}},`, 1)
		tools, refused, err := ListTools(context.Background(), fakeCaller{out}, Limits{})
		if err != nil {
			t.Errorf("%.60s: %v", tc.out, err)
			continue
		}
		if len(tools) == 0 || tools[0].MCP.Name != "good" {
			t.Errorf("%.60s: the good tool was not kept: %v", tc.out, tools)
		}
		if tc.want == "" {
			if len(refused) > 0 || len(tools) != 2 {
				t.Errorf("%.60s: refused %v", tc.out, refused)
			}
			continue
		}
		if len(refused) != 1 || !strings.Contains(refused[0].Error(), tc.want) {
			t.Errorf("%.60s: refused %v, want one error mentioning %q", tc.out, refused, tc.want)
		}
	}
	// An output that is no list fails as a whole.
	for _, tc := range []struct{ out, want string }{
		{`not json`, "not a JSON object"},
		{`{"tools":[]} trailing`, "trailing"},
		{`{"tools":{}}`, "invalid JSON"},
	} {
		if _, _, err := ListTools(context.Background(), fakeCaller{tc.out}, Limits{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: %v, want an error mentioning %q", tc.out, err, tc.want)
		}
	}
}

func TestCallToolChecksStructuredContentAgainstOutputSchema(t *testing.T) {
	list := `{"tools":[{"name":"sum","inputSchema":{"type":"object"},` +
		`"outputSchema":{"type":"object","properties":{"total":{"type":"number"}},"required":["total"]}}]}`
	tools, refused, err := ListTools(context.Background(), fakeCaller{list}, Limits{})
	if err != nil || len(refused) > 0 {
		t.Fatal(err, refused)
	}
	for _, tc := range []struct{ result, want string }{
		{`{"content":[],"structuredContent":{"total":3}}`, ""},
		{`{"content":[{"type":"text","text":"no"}],"isError":true}`, ""}, // failures need no structure
		{`{"content":[],"structuredContent":{"total":"three"}}`, "does not match its outputSchema"},
		{`{"content":[],"structuredContent":{}}`, "does not match its outputSchema"},
		{`{"content":[{"type":"text","text":"3"}]}`, "no structuredContent"},
	} {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "sum", Arguments: json.RawMessage(`{}`)}}
		_, err := CallTool(context.Background(), fakeCaller{tc.result}, tools[0], req)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.result, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.result, err, tc.want)
		}
	}
}

// TestEnvelopeSaysRootsOnlyWhenDeclared: go-sdk encodes "roots" for every
// client; the plugin must see it only from a client that declared it, or
// it asks clients for roots they never offered (SEP-2322).
func TestEnvelopeSaysRootsOnlyWhenDeclared(t *testing.T) {
	for _, tc := range []struct {
		name  string
		caps  *mcp.ClientCapabilities
		roots bool
	}{
		{"sampling only", &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}, false},
		{"nothing", &mcp.ClientCapabilities{}, false},
		{"roots", &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := envelope(nil, nil, tc.caps, nil)
			if err != nil {
				t.Fatal(err)
			}
			var in struct {
				Context struct {
					ClientCapabilities map[string]json.RawMessage `json:"clientCapabilities"`
				} `json:"context"`
			}
			if err := json.Unmarshal(b, &in); err != nil {
				t.Fatal(err)
			}
			if _, ok := in.Context.ClientCapabilities["roots"]; ok != tc.roots {
				t.Errorf("clientCapabilities = %s, want roots present = %v", b, tc.roots)
			}
			if _, ok := in.Context.ClientCapabilities["sampling"]; ok != (tc.caps.Sampling != nil) {
				t.Errorf("clientCapabilities = %s: sampling lost or invented", b)
			}
		})
	}
}

// TestEnvelopeShape: the envelope's exact bytes (ABI.md §3, draft 6): a
// list call's context alone; a call's params without their _meta, which
// is the context's, less the client capabilities a 2026-07-28 request
// carries in it, which are clientCapabilities; a template match.
func TestEnvelopeShape(t *testing.T) {
	id := regexp.MustCompile(`"id":[0-9]+,`)
	caps := &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}
	meta := mcp.Meta{
		mcp.MetaKeyClientCapabilities: map[string]any{"sampling": map[string]any{}},
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		"progressToken":               7,
	}
	params := &mcp.ReadResourceParams{URI: "note://a<b>"}
	for _, tc := range []struct {
		name    string
		request any
		meta    map[string]any
		caps    *mcp.ClientCapabilities
		match   *TemplateMatch
		want    string
	}{
		{"list", nil, nil, nil, nil, `{"context":{"id":N,"_meta":{}}}`},
		{"stateful", params, mcp.Meta{"progressToken": "t"}, caps, nil,
			`{"request":{"uri":"note://a\u003cb\u003e"},"context":{"id":N,"_meta":{"progressToken":"t"},"clientCapabilities":{"sampling":{}}}}`},
		{"stateless", params, meta, caps, nil,
			`{"request":{"uri":"note://a\u003cb\u003e"},"context":{"id":N,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7},"clientCapabilities":{"sampling":{}}}}`},
		{"capabilities only in _meta", params, meta, nil, nil,
			`{"request":{"uri":"note://a\u003cb\u003e"},"context":{"id":N,"_meta":{"io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7}}}`},
		{"template", params, nil, nil, &TemplateMatch{Template: "note://{id}", Variables: map[string]any{"id": "a<b>"}},
			`{"request":{"uri":"note://a\u003cb\u003e"},"context":{"id":N,"_meta":{},"uriTemplate":"note://{id}","uriVariables":{"id":"a\u003cb\u003e"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := envelope(tc.request, tc.meta, tc.caps, tc.match)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(b) {
				t.Fatalf("envelope is not JSON: %s", b)
			}
			if got := id.ReplaceAllString(string(b), `"id":N,`); got != tc.want {
				t.Errorf("envelope =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if len(meta) != 3 {
		t.Errorf("envelope modified the request's _meta: %v", meta)
	}
}

// countingCaller answers every export with a fixed output and counts the
// calls.
type countingCaller struct {
	out   string
	calls *int
}

func (c countingCaller) Name() string { return "counted" }
func (c countingCaller) Call(context.Context, string, []byte) ([]byte, error) {
	*c.calls++
	return []byte(c.out), nil
}

// TestDeferredSchemasAreCheckedAtFirstUse: with Limits.Deferred (a cached
// description) a schema's meta-schema check and resolution wait for the
// tool's first call, where they hold as at load: bad arguments are refused
// before the plugin runs, and a schema refused then refuses the call.
// Sizes are still checked at once.
func TestDeferredSchemasAreCheckedAtFirstUse(t *testing.T) {
	list := `{"tools":[` +
		`{"name":"good","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}},` +
		`{"name":"bad","inputSchema":{"type":"object","properties":{"a":{"type":12}}}},` +
		`{"name":"huge","inputSchema":{"type":"object","description":"` + strings.Repeat("x", maxSchemaBytes) + `"}}]}`
	tools, refused, err := ListTools(context.Background(), fakeCaller{list}, Limits{Deferred: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].MCP.Name != "good" || tools[1].MCP.Name != "bad" {
		t.Fatalf("tools %v, want good and bad (deferred), not huge", tools)
	}
	if len(refused) != 1 || !strings.Contains(refused[0].Error(), "bytes") {
		t.Errorf("refused %v, want huge refused for its size at once", refused)
	}
	call := func(tool Tool, args string) (*mcp.CallToolResult, int, error) {
		n := 0
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool.MCP.Name, Arguments: json.RawMessage(args)}}
		res, err := CallTool(context.Background(), countingCaller{`{"content":[{"type":"text","text":"ran"}]}`, &n}, tool, req)
		return res, n, err
	}
	if res, n, err := call(tools[0], `{"n":"three"}`); err != nil || !res.IsError || n != 0 {
		t.Errorf("good with bad arguments: %+v, %v, %d plugin calls; want a tool error and none", res, err, n)
	}
	if res, n, err := call(tools[0], `{"n":3}`); err != nil || res.IsError || n != 1 {
		t.Errorf("good with good arguments: %+v, %v, %d plugin calls; want it to run once", res, err, n)
	}
	res, n, err := call(tools[1], `{}`)
	if n != 0 || err == nil && !res.IsError {
		t.Fatalf("bad: %+v, %v, %d plugin calls; want it refused without running", res, err, n)
	}
	text := ""
	if err != nil {
		text = err.Error()
	} else {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	if !strings.Contains(text, "not checked") {
		t.Errorf("bad: %q, want the schema's refusal", text)
	}
}

// TestEncodedSchemasKeepTheirBytes: a tool's schemas are kept encoded
// (encodeSchemas) for tools/list, and the lock file fingerprints the tool
// as encoded; both must be the bytes the decoded map gave, or every lock
// file written before would report a rug pull.
func TestEncodedSchemasKeepTheirBytes(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"z":{"type":"string","description":"<b>&amp; é ✓ \u2028"},"a":{"type":"number","minimum":1.0,"maximum":1e3}},"required":["z"]}`,
		`{"type":"object","$defs":{"n":{"type":["integer","null"],"enum":[1,2.5,null]}},"properties":{"n":{"$ref":"#/$defs/n"}}}`,
	} {
		raw := `{"name":"t","inputSchema":` + schema + `,"outputSchema":` + schema + `}`
		var decoded mcp.Tool
		if err := json.Unmarshal([]byte(raw), &decoded); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(&decoded)
		if err != nil {
			t.Fatal(err)
		}
		encoded := decoded
		if err := encodeSchemas(&encoded); err != nil {
			t.Fatal(err)
		}
		if _, ok := encoded.InputSchema.(json.RawMessage); !ok {
			t.Fatalf("inputSchema kept as %T, want its encoding", encoded.InputSchema)
		}
		got, err := json.Marshal(&encoded)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("schema %s:\nencoded %s\nwant    %s", schema, got, want)
		}
	}
}
