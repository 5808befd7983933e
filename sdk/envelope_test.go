package sdk

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// envelopeSeeds are envelopes, well-formed and not, on which the SDK's
// one-pass decoding must agree with encoding/json's.
var envelopeSeeds = []string{
	`{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{}}`,
	`{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{"id":7821721795495376,"_meta":{},"clientCapabilities":{"roots":{"listChanged":true}}}}`,
	` { "request" : { "name" : "e\"c\\ho\u00e9" , "arguments" : [1, {"a":"}"}, "]"] , "requestState":"s\n" } , "context" : null } `,
	`{"Request":{"NAME":"echo"},"CONTEXT":{"ID":"x","_Meta":{"progressToken":1},"uriTemplate":"a{b}","uriVariables":{"b":"c"}}}`,
	`{"request":{"name":"a","name":"b","_meta":{"k":[true,false,null]},"inputResponses":{"q":{"action":"accept"}}},"context":{"_meta":null}}`,
	`{"request":{"na\u006de":"esc-key","arguments":null,"extra":{"deep":[[[{}]]]}}}`,
	`{"request":null}`,
	`{}`,
	`null`,
	`{"request":{"name":5}}`,
	`{"request":{"requestState":{}}}`,
	`{"request":{"inputResponses":[1]}}`,
	`{"request":"call"}`,
	`{"request":[]}`,
	`{"context":"x"}`,
	`{"context":{"uriTemplate":1}}`,
	`{"context":{"uriVariables":"x"}}`,
	`[]`,
	`"x"`,
	`{"request":{"name":"echo"}`,
	`{"request":{"name":"echo"}},`,
	`{"request":{"name":"echo",}}`,
	`{"request":{"name":"\x"}}`,
	`{"request":{"name":"echo","arguments":{"text":-1.5e+3}}}`,
	"{\"request\":{\"name\":\"\xff\"}}",
	``,
}

// oldDecode is how the SDK decoded a call_tool envelope before: one
// json.Unmarshal for the envelope, another for the request.
func oldDecode(input []byte) (envelope, toolCallParams, bool, bool) {
	var in envelope
	if err := json.Unmarshal(input, &in); err != nil {
		return in, toolCallParams{}, false, false
	}
	var p struct {
		abi.CallToolParams
		Meta json.RawMessage `json:"_meta,omitempty"`
	}
	if len(in.Request) == 0 || string(in.Request) == "null" {
		return in, toolCallParams{}, true, true
	}
	if err := json.Unmarshal(in.Request, &p); err != nil {
		return in, toolCallParams{}, true, false
	}
	return in, toolCallParams{Name: p.Name, Arguments: p.Arguments, Meta: p.Meta,
		InputResponses: p.InputResponses, RequestState: p.RequestState}, true, true
}

func newDecode(input []byte) (envelope, toolCallParams, bool, bool) {
	var in envelope
	if err := decodeEnvelope(input, &in); err != nil {
		return in, toolCallParams{}, false, false
	}
	var p toolCallParams
	if len(in.Request) == 0 || string(in.Request) == "null" {
		return in, p, true, true
	}
	if err := decodeToolCall(in.Request, &p); err != nil {
		return in, toolCallParams{}, true, false
	}
	return in, p, true, true
}

// FuzzEnvelope checks that the SDK's one-pass decoding of an envelope
// accepts and rejects what encoding/json does and finds the same values.
//
//	go test -run '^$' -fuzz FuzzEnvelope ./sdk/
func FuzzEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		if len(input) == 0 { // the SDK does not decode an empty input
			return
		}
		oin, op, oenv, oreq := oldDecode(input)
		nin, np, nenv, nreq := newDecode(input)
		if oenv != nenv || oreq != nreq {
			t.Fatalf("%q: encoding/json accepts envelope %v, request %v; the SDK %v, %v", input, oenv, oreq, nenv, nreq)
		}
		if !oenv {
			return
		}
		if !reflect.DeepEqual(oin, nin) {
			t.Errorf("%q: envelope\n got  %+v\n want %+v", input, nin, oin)
		}
		if oreq && !reflect.DeepEqual(op, np) {
			t.Errorf("%q: request\n got  %+v\n want %+v", input, np, op)
		}
	})
}

// TestEncodeTextResult checks that the SDK's encoding of a text-only tool
// result is byte for byte encoding/json's, and that other results are left
// to encoding/json.
func TestEncodeTextResult(t *testing.T) {
	for _, res := range []*abi.CallToolResult{
		{},
		TextResult("hello"),
		TextResult(""),
		TextResult("<a href=\"x\">&amp;</a>\n\té\u2028\xff"),
		ToolError("failed: %s", "why"),
		{Content: []abi.Content{Text("a"), Text("b"), Text("")}},
	} {
		content := res.Content
		if content == nil {
			content = []abi.Content{}
		}
		in := callToolJSON{CallToolResult: res, Content: content}
		want, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := encodeTextResult(in)
		if !ok || string(got) != string(want) {
			t.Errorf("%+v: got %s (%v), want %s", res, got, ok, want)
		}
	}
	for _, res := range []*abi.CallToolResult{
		{Content: []abi.Content{Text("a"), Image([]byte{1}, "image/png")}},
		{Content: []abi.Content{{Type: "text", Text: "a", Annotations: &abi.Annotations{}}}},
		{Content: []abi.Content{Text("a")}, StructuredContent: map[string]any{}},
		{Content: []abi.Content{Text("a")}, Meta: map[string]any{}},
		{RequestState: "s"},
	} {
		if got, ok := encodeTextResult(callToolJSON{CallToolResult: res, Content: res.Content}); ok {
			t.Errorf("%+v: encoded as %s, want it left to encoding/json", res, got)
		}
	}
}
