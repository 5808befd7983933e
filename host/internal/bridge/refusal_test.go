package bridge

import (
	"context"
	"strings"
	"testing"
)

// Issue 25 item 6: every refused item is named by position and name, with
// the JSON Pointer of the part at fault, and a fault that only a hostile
// plugin commits (hidden text, a look-alike name) is told from a mere bug.
func TestRefusalsNameThePlaceAndTellHostileFromBuggy(t *testing.T) {
	obj := `{"type":"object"}`
	def := func(name, rest string) string {
		return `{"name":` + name + `,"inputSchema":` + obj + rest + `}`
	}
	cases := []struct {
		tool    string
		name    string // the Name the refusal carries
		pointer string
		hostile bool
		reason  string
	}{
		{def(`"`+strings.Repeat("n", 10_000)+`"`, ``), strings.Repeat("n", 10_000), "/name", false, "is invalid"},
		{def(`"read file"`, ``), "read file", "/name", false, "is invalid"},
		{def(`"../etc"`, ``), "../etc", "/name", false, "is invalid"},
		{def(`""`, ``), "", "/name", false, "is invalid"},
		{def(`"天気"`, ``), "天気", "/name", false, "is invalid"},
		{def(`"r\u0435ad_file"`, ``), "r\u0435ad_file", "/name", true, "mixes Latin and Cyrillic letters (U+0435 at byte 1)"},
		{def(`"\u0441\u043e\u0440"`, ``), "\u0441\u043e\u0440", "/name", true, `passes for "cop"`},
		{def(`"\uff52ead"`, ``), "\uff52ead", "/name", true, `compatibility form of "r"`},
		{def(`"rlo"`, `,"description":"safe\u202eetirw"`), "rlo", "/description", true, "U+202E"},
		{def(`"zwsp"`, `,"title":"x\u200b"`), "zwsp", "/title", true, "U+200B"},
		{def(`"tag"`, `,"description":"x\udb40\udc41"`), "tag", "/description", true, "U+E0041"},
		{def(`"longdesc"`, `,"description":"`+strings.Repeat("d", 65_537)+`"`), "longdesc", "/description", false, "is 65537 bytes (at most 65536)"},
		{`{"name":"lookahead","inputSchema":{"type":"object","properties":{"x":{"type":"string","pattern":"^(?=a)"}}}}`, "lookahead", "/inputSchema/properties/x/pattern", false, "is not a regular expression"},
		{`{"name":"notobject","inputSchema":{"type":"string"}}`, "notobject", "/inputSchema/type", false, `"type": "object"`},
		{`{"name":"nullschema","inputSchema":null}`, "nullschema", "/inputSchema", false, "missing"},
		{`{"name":"arrayschema","inputSchema":[]}`, "arrayschema", "/inputSchema", false, `"type": "object"`},
		{`{"name":"typo","inputSchema":{"type":"object","properties":{"x":{"type":"numbr"}}}}`, "typo", "/inputSchema/properties/x/type", false, "not a JSON Schema type"},
		{`{"name":"deep","inputSchema":{"type":"object","properties":{"x":` + deepSchema(200) + `}}}`, "deep", "/inputSchema" + strings.Repeat("/properties/x", 32), false, "nests more than"},
		{`{"name":"badtype","inputSchema":{"type":"object"},"title":5}`, "badtype", "/title", false, "invalid"},
		{`{"name":"keyzw","inputSchema":{"type":"object","properties":{"a\u200bb":{}}}}`, "keyzw", "/inputSchema/properties/a\u200bb", true, "U+200B"},
		{`null`, "", "", false, "is null"},
	}
	var defs []string
	for _, c := range cases {
		defs = append(defs, c.tool)
	}
	tools, refused, err := ListTools(context.Background(), fakeCaller{`{"tools":[` + strings.Join(defs, ",") + `,{"name":"fine","inputSchema":{"type":"object"}}]}`}, Limits{})
	if err != nil || len(tools) != 1 || tools[0].MCP.Name != "fine" {
		t.Fatalf("ListTools kept %d tools, %v", len(tools), err)
	}
	if len(refused) != len(cases) {
		t.Fatalf("%d refusals for %d bad tools: %v", len(refused), len(cases), refused)
	}
	for i, c := range cases {
		r := refused[i]
		if r.Index != i+1 || r.Kind != "tool" || r.Export != "list_tools" || r.Name != c.name || r.Pointer != c.pointer ||
			r.Hostile != c.hostile || !strings.Contains(r.Err.Error(), c.reason) {
			t.Errorf("tool #%d: refusal {index %d, name %s, pointer %q, hostile %v, %v}; want pointer %q, hostile %v, reason %q",
				i+1, r.Index, ShowName(r.Name), r.Pointer, r.Hostile, r.Err, c.pointer, c.hostile, c.reason)
		}
		if len(r.Error()) > 2000 {
			t.Errorf("tool #%d: the log line is %d bytes", i+1, len(r.Error()))
		}
	}
}

// Look-alike names are caught in prompts (and their arguments), resources
// and templates too; a name in one script other than Latin is not.
func TestLookAlikeNamesInEveryKindOfItem(t *testing.T) {
	ctx := context.Background()
	_, refused, _ := ListPrompts(ctx, fakeCaller{`{"prompts":[{"name":"\u0440lan"},{"name":"ok","arguments":[{"name":"\u0441ity"}]},{"name":"plain","title":"Отчёт"}]}`}, Limits{})
	if len(refused) != 2 || !refused[0].Hostile || refused[0].Pointer != "/name" || !refused[1].Hostile || refused[1].Pointer != "/arguments/0/name" {
		t.Errorf("prompts: %v", refused)
	}
	_, refused, _ = ListResources(ctx, fakeCaller{`{"resources":[{"uri":"test://a","name":"p\u0430ypal"},{"uri":"test://b","name":"Отчёт"}]}`}, Limits{})
	if len(refused) != 1 || !refused[0].Hostile || refused[0].Pointer != "/name" || refused[0].Name != "test://a" {
		t.Errorf("resources: %v", refused)
	}
	_, refused, _ = ListResourceTemplates(ctx, fakeCaller{`{"resourceTemplates":[{"uriTemplate":"test://a/{x}","name":"\uff41"},{"uriTemplate":"nope","name":"n"}]}`}, Limits{})
	if len(refused) != 2 || !refused[0].Hostile || refused[1].Hostile || refused[1].Pointer != "/uriTemplate" {
		t.Errorf("templates: %v", refused)
	}
}

func TestLookAlike(t *testing.T) {
	for name, want := range map[string]bool{
		"read_file": false, "Café": false, "天気": false, "Отчёт": false, "Στατιστικά": false, "": false, "a-1.b": false,
		"r\u0435ad": true, "\u0435r": true, "\u0441\u043e\u0440": true, "\uff52ead": true, "\U0001d42bead": true,
		"\ufb01le": true, "\u212aelvin": true, "\u0391\u0392": true,
	} {
		if got := lookAlike(name) != nil; got != want {
			t.Errorf("lookAlike(%q) = %v, want refused %v", name, lookAlike(name), want)
		} else if got && !IsHostile(lookAlike(name)) {
			t.Errorf("lookAlike(%q) is not hostile", name)
		}
	}
}
