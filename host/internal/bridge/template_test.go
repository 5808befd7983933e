package bridge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder is a Caller that keeps the input of its last call.
type recorder struct {
	out string
	in  []byte
}

func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Call(_ context.Context, _ string, in []byte) ([]byte, error) {
	r.in = in
	return []byte(r.out), nil
}

func TestTemplatesAreCheckedAsRFC6570(t *testing.T) {
	out := `{"resourceTemplates":[` +
		`{"uriTemplate":"note://{id}","name":"a"},{"uriTemplate":"https://{host}/x{?q}","name":"b"},` +
		`{"uriTemplate":"x:{+a}{#b}{.c}{/d*}{;e}{?f:3}{&g}","name":"c"},` +
		`{"uriTemplate":"note://{id","name":"d"},{"uriTemplate":"{}","name":"e"},{"uriTemplate":"/rel/{id}","name":"f"}]}`
	templates, refused, err := ListResourceTemplates(context.Background(), &recorder{out: out}, Limits{})
	if err != nil || len(templates) != 3 || len(refused) != 3 {
		t.Fatalf("kept %d, refused %v, %v", len(templates), refused, err)
	}
	for i, want := range []string{
		`template "note://{id": not an RFC 6570 URI template: '{' at byte 7 is not closed`,
		`template "{}": not an RFC 6570 URI template: expression "{}" at byte 0: is empty`,
		`template "/rel/{id}": has no scheme`,
	} {
		if !strings.Contains(refused[i].Error(), want) {
			t.Errorf("refused[%d] = %v, want it to say %s", i, refused[i], want)
		}
	}
}

func TestReadResourcePassesTheTemplateMatch(t *testing.T) {
	r := &recorder{out: `{"contents":[]}`}
	req := &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "note://42"}}
	if _, err := ReadResource(context.Background(), r, req, &TemplateMatch{Template: "note://{id}", Variables: map[string]any{"id": "42"}}); err != nil {
		t.Fatal(err)
	}
	var in struct {
		Context map[string]json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(r.in, &in); err != nil {
		t.Fatal(err)
	}
	if string(in.Context["uriTemplate"]) != `"note://{id}"` || string(in.Context["uriVariables"]) != `{"id":"42"}` {
		t.Errorf("context = %s", r.in)
	}
	// A concrete resource: neither.
	if _, err := ReadResource(context.Background(), r, req, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(r.in), "uriTemplate") || strings.Contains(string(r.in), "uriVariables") {
		t.Errorf("context of a resource read = %s", r.in)
	}
}
