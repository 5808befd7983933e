package host_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// Issue 15, item 6: a template with a variable in the authority
// (note://{id}, https://{host}/x{?q}) was refused as "not an absolute URI
// template". Every RFC 6570 template with a scheme loads; a read through a
// go-sdk client reaches the plugin with the template it matched and the
// values of its variables.
func TestTemplatesMatchAnyRFC6570Form(t *testing.T) {
	s := start(t, `
[[plugin]]
name = "templates"
path = "`+testutil.GoPlugin(t, "testdata/plugins/templates")+`"
timeout = "10s"
`)
	list, err := s.session.ListResourceTemplates(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tm := range list.ResourceTemplates {
		listed = append(listed, tm.URITemplate)
	}
	if want := []string{"file://{/path*}{?keys*}", "https://{host}/x{?q}", "note://{id}"}; !reflect.DeepEqual(listed, want) {
		t.Errorf("resources/templates/list = %v, want %v", listed, want)
	}
	for _, c := range []struct {
		uri, template string
		vars          map[string]any
	}{
		{"note://42", "note://{id}", map[string]any{"id": "42"}},
		{"note://a%20b", "note://{id}", map[string]any{"id": "a b"}},
		{"https://example.com/x?q=hello%20world", "https://{host}/x{?q}", map[string]any{"host": "example.com", "q": "hello world"}},
		{"https://example.com/x", "https://{host}/x{?q}", map[string]any{"host": "example.com"}},
		{"file:///a/b?mode=r", "file://{/path*}{?keys*}", map[string]any{"path": []any{"a", "b"}, "keys": map[string]any{"mode": "r"}}},
	} {
		res, err := s.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: c.uri})
		if err != nil {
			t.Errorf("read %s: %v", c.uri, err)
			continue
		}
		var got struct {
			URITemplate  string            `json:"uriTemplate"`
			URIVariables map[string]any    `json:"uriVariables"`
			HandlerVars  map[string]string `json:"handlerVars"`
		}
		if len(res.Contents) != 1 || json.Unmarshal([]byte(res.Contents[0].Text), &got) != nil {
			t.Errorf("read %s = %+v", c.uri, res.Contents)
			continue
		}
		if got.URITemplate != c.template || !reflect.DeepEqual(got.URIVariables, c.vars) {
			t.Errorf("read %s: the plugin got template %q, variables %v; want %q, %v", c.uri, got.URITemplate, got.URIVariables, c.template, c.vars)
		}
		if len(got.HandlerVars) != len(c.vars) {
			t.Errorf("read %s: the handler got %v", c.uri, got.HandlerVars)
		}
	}
	// A URI no template matches, though go-sdk's looser matching lets it
	// through to the host: not found.
	for _, uri := range []string{"note://a/b", "https://example.com/x?other=1", "other://1"} {
		if _, err := s.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}); err == nil || rpcCode(t, err) != mcp.CodeResourceNotFound {
			t.Errorf("read %s: %v, want resource not found", uri, err)
		}
	}
}

// Issue 15, item 6: what is not an RFC 6570 template, or has no scheme, is
// refused at load, with an error naming the plugin, the template and the
// problem; the plugin's good template is served.
func TestMalformedTemplatesAreRefusedAtLoad(t *testing.T) {
	p := testutil.WATPlugin{Tools: oneTool, Fields: listExport("list_resource_templates", `{"resourceTemplates":[`+
		`{"uriTemplate":"note://{id}","name":"good"},`+
		`{"uriTemplate":"note://{id","name":"unclosed"},`+
		`{"uriTemplate":"{}","name":"empty"},`+
		`{"uriTemplate":"{scheme}://x/{id}","name":"noscheme"},`+
		`{"uriTemplate":"x://{=a}","name":"operator"},`+
		`{"uriTemplate":"x://{a:0}","name":"prefix"}]}`)}
	s := start(t, hostileConfig(t, p, ""))
	_, _, _, templates := hostileNames(t, s.session)
	if !reflect.DeepEqual(templates, []string{"note://{id}"}) {
		t.Errorf("templates listed = %v, want only note://{id}", templates)
	}
	wants := []string{
		`template \"note://{id\": not an RFC 6570 URI template: '{' at byte 7 is not closed`,
		`template \"{}\": not an RFC 6570 URI template: expression \"{}\" at byte 0: is empty`,
		`template \"{scheme}://x/{id}\": has no scheme`,
		`template \"x://{=a}\": not an RFC 6570 URI template: expression \"{=a}\" at byte 4: operator '=' is reserved`,
		`template \"x://{a:0}\": not an RFC 6570 URI template: expression \"{a:0}\" at byte 4: prefix \"0\" of \"a\" is not a length from 1 to 9999`,
	}
	wantLogged(t, s, wants...)
	for _, line := range strings.Split(s.log.String(), "\n") {
		if strings.Contains(line, "list_resource_templates: template") && !strings.Contains(line, "plugin=hostile") {
			t.Errorf("the refusal does not name the plugin: %s", line)
		}
	}
	afterFault(t, s)
}
