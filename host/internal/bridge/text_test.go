package bridge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestVisibleText(t *testing.T) {
	for _, s := range []string{
		"plain", "tabs\tnew\nlines\r\n", "Grüße, 日本語, עברית", "emoji 😀", "heart ❤️ and ♠︎ (one variation selector after a character)", "",
	} {
		if err := visibleText(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, tc := range []struct{ s, want string }{
		{"right-to-left \u202eoverride", "U+202E"},
		{"zero\u200bwidth", "U+200B"},
		{"joiner\u200d", "U+200D"},
		{"isolate \u2066x\u2069", "U+2066"},
		{"bom \ufeff", "U+FEFF"},
		{"tag \U000E0041\U000E0042", "U+E0041"},
		{"bell\x07", "U+0007"},
		{"c1 \u0085", "U+0085"},
		{"hangul filler \u3164", "U+3164"},
		{"two selectors a\ufe0f\ufe0f", "U+FE0F"},
		{"a selector first \ufe0f", "U+FE0F"},
		{"other selector a\ufe01", "U+FE01"},
		{"supplementary selector a\U000E0100", "U+E0100"},
		{strings.Repeat("a", maxTextBytes+1), "at most"},
		{"bad \xff utf-8", "UTF-8"},
	} {
		if err := visibleText(tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: %v, want an error mentioning %s", tc.s, err, tc.want)
		}
	}
}

func TestCheckTextNamesThePath(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"name":"x","inputSchema":{"properties":{"a/b~c":{"enum":["ok","bad\u200b"]}}}}`), &doc); err != nil {
		t.Fatal(err)
	}
	err := checkText(doc)
	if err == nil || err.Error() != `string at "/inputSchema/properties/a~1b~0c/enum/1" has an invisible or control character U+200B at byte 3` {
		t.Errorf("%v", err)
	}
	if err := json.Unmarshal([]byte(`{"annotations":{"x\u202e":1}}`), &doc); err != nil {
		t.Fatal(err)
	}
	if err := checkText(doc); err == nil || err.Error() != `key "x\u202e" at "/annotations" has an invisible or control character U+202E at byte 1` {
		t.Errorf("%v", err)
	}
}

// Every kind of item is checked whole, and refused alone.
func TestHiddenTextIsRefusedInEveryKindOfItem(t *testing.T) {
	ctx := context.Background()
	_, refused, err := ListTools(ctx, fakeCaller{`{"tools":[{"name":"ok","inputSchema":{"type":"object"}},` +
		`{"name":"a","inputSchema":{"type":"object"},"annotations":{"title":"\u202e"}}]}`}, Limits{})
	if err != nil || len(refused) != 1 || !strings.Contains(refused[0].Error(), `tool "a": string at "/annotations/title"`) {
		t.Errorf("tools: %v %v", refused, err)
	}
	prompts, refused, err := ListPrompts(ctx, fakeCaller{`{"prompts":[{"name":"ok"},{"name":"p","arguments":[{"name":"a","description":"\u200b"}]}]}`}, Limits{})
	if err != nil || len(prompts) != 1 || len(refused) != 1 || !strings.Contains(refused[0].Error(), `prompt "p": string at "/arguments/0/description"`) {
		t.Errorf("prompts: %v %v", refused, err)
	}
	resources, refused, err := ListResources(ctx, fakeCaller{`{"resources":[{"uri":"test://ok","name":"ok"},{"uri":"test://r","name":"r","title":"\u202e"}]}`}, Limits{})
	if err != nil || len(resources) != 1 || len(refused) != 1 || !strings.Contains(refused[0].Error(), `resource "test://r": string at "/title"`) {
		t.Errorf("resources: %v %v", refused, err)
	}
	templates, refused, err := ListResourceTemplates(ctx, fakeCaller{`{"resourceTemplates":[{"uriTemplate":"test://h/{x}","name":"ok"},{"uriTemplate":"test://t/{x}","name":"t\u200b"}]}`}, Limits{})
	if err != nil || len(templates) != 1 || len(refused) != 1 || !strings.Contains(refused[0].Error(), `template "test://t/{x}": string at "/name"`) {
		t.Errorf("templates: %v %v", refused, err)
	}
}
