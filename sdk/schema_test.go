package sdk

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
)

type schemaInner struct {
	Tag string `json:"tag"`
}

type schemaEmbedded struct {
	Shared int `json:"shared,omitempty"`
}

type schemaNode struct {
	Name     string        `json:"name"`
	Children []*schemaNode `json:"children,omitempty"`
}

type schemaAll struct {
	schemaEmbedded
	Text     string            `json:"text" jsonschema:"Some text."`
	Count    uint8             `json:"count"`
	Ratio    float64           `json:"ratio,omitzero"`
	Flag     bool              `json:"flag,omitempty"`
	Maybe    *int              `json:"maybe"`
	Bytes    []byte            `json:"bytes,omitempty"`
	List     []schemaInner     `json:"list,omitempty"`
	Pair     [2]string         `json:"pair,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Any      any               `json:"any,omitempty"`
	When     time.Time         `json:"when,omitzero"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Tree     schemaNode        `json:"tree,omitzero"`
	Skipped  string            `json:"-"`
	Untagged string
	hidden   string
}

func TestSchemaForFollowsEncodingJSON(t *testing.T) {
	b, err := SchemaFor[schemaAll]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{` +
		`"Untagged":{"type":"string"},` +
		`"any":{},` +
		`"bytes":{"contentEncoding":"base64","type":"string"},` +
		`"count":{"minimum":0,"type":"integer"},` +
		`"flag":{"type":"boolean"},` +
		`"labels":{"additionalProperties":{"type":"string"},"type":"object"},` +
		`"list":{"items":{"additionalProperties":false,"properties":{"tag":{"type":"string"}},"required":["tag"],"type":"object"},"type":"array"},` +
		`"maybe":{"type":["integer","null"]},` +
		`"pair":{"items":{"type":"string"},"maxItems":2,"minItems":2,"type":"array"},` +
		`"ratio":{"type":"number"},` +
		`"raw":{},` +
		`"shared":{"type":"integer"},` +
		`"text":{"description":"Some text.","type":"string"},` +
		`"tree":{"additionalProperties":false,"properties":{"children":{"items":{},"type":"array"},"name":{"type":"string"}},"required":["name"],"type":"object"},` +
		`"when":{}` +
		`},"required":["text","count","Untagged"],"type":"object"}`
	if string(b) != want {
		t.Errorf("SchemaFor:\n got %s\nwant %s", b, want)
	}
	if _, err := SchemaFor[struct{ C chan int }](); err == nil || !strings.Contains(err.Error(), "field C") {
		t.Errorf("a channel field = %v, want an error naming it", err)
	}
	if _, err := SchemaFor[map[int]string](); err == nil {
		t.Error("a map with int keys gave no error")
	}
}

// TestTypedToolSchemasAreDerived: AddTypedTool without schemas lists the
// ones derived from its types; given ones are kept.
func TestTypedToolSchemasAreDerived(t *testing.T) {
	type in struct {
		N int `json:"n" jsonschema:"How many."`
	}
	type out struct {
		Double int `json:"double"`
	}
	r := newRegistry()
	saved := std
	std = r
	defer func() { std = saved }()
	AddTypedTool(abiTool("double"), func(_ *Context, v in) (*out, error) { return &out{2 * v.N}, nil })
	AddTypedTool(abiTool("nothing"), func(_ *Context, v in) (struct{}, error) { return struct{}{}, nil })
	jsonEq(t, call(t, r, "list_tools", `{}`), `{"tools":[`+
		`{"name":"double","inputSchema":{"additionalProperties":false,"properties":{"n":{"description":"How many.","type":"integer"}},"required":["n"],"type":"object"},`+
		`"outputSchema":{"additionalProperties":false,"properties":{"double":{"type":"integer"}},"required":["double"],"type":"object"}},`+
		`{"name":"nothing","inputSchema":{"additionalProperties":false,"properties":{"n":{"description":"How many.","type":"integer"}},"required":["n"],"type":"object"}}]}`)
}

func abiTool(name string) abi.Tool { return abi.Tool{Name: name} }
