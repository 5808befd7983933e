package sdk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

func TestInputRequestBuilders(t *testing.T) {
	jsonEq(t, string(ElicitRequest("Name?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))),
		`{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`)
	jsonEq(t, string(SamplingRequest(SamplingParams{Messages: []abi.PromptMessage{UserMessage(Text("Hi"))}, MaxTokens: 50})),
		`{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Hi"}}],"maxTokens":50}}`)
	jsonEq(t, string(SamplingRequest(SamplingParams{MaxTokens: 1})),
		`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`)
	// params must be present, even empty: go-sdk refuses a roots/list request without.
	jsonEq(t, string(RootsRequest()), `{"method":"roots/list","params":{}}`)
	jsonEq(t, string(InputRequest("x/y", map[string]int{"a": 1})), `{"method":"x/y","params":{"a":1}}`)
}

// TestInputRequiredResults checks that a result asking for input carries no
// content, contents or messages (go-sdk refuses one that does), and that a
// handler returning both is an internal error.
func TestInputRequiredResults(t *testing.T) {
	r := newRegistry()
	ask := map[string]json.RawMessage{"who": ElicitRequest("Name?", nil)}
	r.addTool(abi.Tool{Name: "ask"}, func(ctx *Context, _ json.RawMessage) (*abi.CallToolResult, error) {
		if e, ok := ctx.ElicitResponse("who"); ok && e.Accepted() {
			return TextResult("Hello, " + e.Content["name"].(string)), nil
		}
		return InputRequired(ask, "st"), nil
	})
	r.addTool(abi.Tool{Name: "both"}, func(*Context, json.RawMessage) (*abi.CallToolResult, error) {
		res := InputRequired(ask, "")
		res.Content = []abi.Content{Text("x")}
		return res, nil
	})
	r.addResource(abi.Resource{URI: "x://r", Name: "r"}, func(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
		if ctx.RequestState() == "bad" {
			return &abi.ReadResourceResult{InputRequests: ask, Contents: []abi.ResourceContents{{Text: "x"}}}, nil
		}
		return &abi.ReadResourceResult{InputRequests: ask}, nil
	})
	r.addPrompt(abi.Prompt{Name: "p"}, func(ctx *Context, _ map[string]string) (*abi.GetPromptResult, error) {
		if ctx.RequestState() == "bad" {
			return &abi.GetPromptResult{InputRequests: ask, Messages: []abi.PromptMessage{UserMessage(Text("x"))}}, nil
		}
		return &abi.GetPromptResult{InputRequests: ask, RequestState: "s"}, nil
	})

	wantAsk := `"inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?"}}}`
	jsonEq(t, call(t, r, abi.ExportCallTool, toolCall("ask", `{}`)), `{`+wantAsk+`,"requestState":"st"}`)
	jsonEq(t, call(t, r, abi.ExportCallTool,
		`{"request":{"name":"ask","inputResponses":{"who":{"action":"accept","content":{"name":"Ada"}}},"requestState":"st"},"context":{}}`),
		`{"content":[{"type":"text","text":"Hello, Ada"}]}`)
	// A declined answer asks again.
	jsonEq(t, call(t, r, abi.ExportCallTool, `{"request":{"name":"ask","inputResponses":{"who":{"action":"decline"}}},"context":{}}`),
		`{`+wantAsk+`,"requestState":"st"}`)
	jsonEq(t, call(t, r, abi.ExportReadResource, `{"request":{"uri":"x://r"},"context":{}}`), `{`+wantAsk+`}`)
	jsonEq(t, call(t, r, abi.ExportGetPrompt, `{"request":{"name":"p"},"context":{}}`), `{`+wantAsk+`,"requestState":"s"}`)

	for export, in := range map[string]string{
		abi.ExportCallTool:     toolCall("both", `{}`),
		abi.ExportReadResource: `{"request":{"uri":"x://r","requestState":"bad"},"context":{}}`,
		abi.ExportGetPrompt:    `{"request":{"name":"p","requestState":"bad"},"context":{}}`,
	} {
		if e := callErr(t, r, export, in); e.Code != abi.CodeInternalError || !strings.Contains(e.Message, "together with inputRequests") {
			t.Errorf("%s with both: %+v", export, e)
		}
	}
}

func TestInputResponses(t *testing.T) {
	ctx := &Context{inputResponses: map[string]json.RawMessage{
		"elicit":    json.RawMessage(`{"action":"accept","content":{"name":"Ada","age":36,"tags":["a"],"ok":true}}`),
		"declined":  json.RawMessage(`{"action":"decline"}`),
		"sample1":   json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"}`),
		"sampleN":   json.RawMessage(`{"role":"assistant","content":[{"type":"image","data":"AQI=","mimeType":"image/png"},{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`),
		"sampleImg": json.RawMessage(`{"role":"assistant","content":{"type":"image","data":"AQI=","mimeType":"image/png"},"model":"m"}`),
		"roots":     json.RawMessage(`{"roots":[{"uri":"file:///a","name":"A"},{"uri":"file:///b"}]}`),
		"noRoots":   json.RawMessage(`{"roots":[]}`),
		"nullRoots": json.RawMessage(`{"roots":null}`),
		"null":      json.RawMessage(`null`),
		"garbage":   json.RawMessage(`[1,2]`),
		"badElicit": json.RawMessage(`{"action":1}`),
		"caseFold":  json.RawMessage(`{"Action":"accept","Role":"user","Roots":[]}`),
	}}

	if raw, ok := ctx.InputResponse("declined"); !ok || string(raw) != `{"action":"decline"}` {
		t.Errorf("InputResponse(declined) = %s, %v", raw, ok)
	}
	for _, k := range []string{"missing", "null"} {
		if _, ok := ctx.InputResponse(k); ok {
			t.Errorf("InputResponse(%s) found", k)
		}
	}

	e, ok := ctx.ElicitResponse("elicit")
	if !ok || !e.Accepted() || e.Content["name"] != "Ada" || e.Content["age"] != float64(36) || e.Content["ok"] != true {
		t.Errorf("ElicitResponse(elicit) = %+v, %v", e, ok)
	}
	if e, ok := ctx.ElicitResponse("declined"); !ok || e.Accepted() || e.Action != "decline" || e.Content != nil {
		t.Errorf("ElicitResponse(declined) = %+v, %v", e, ok)
	}
	for _, k := range []string{"sample1", "roots", "null", "garbage", "missing", "badElicit", "caseFold"} {
		if e, ok := ctx.ElicitResponse(k); ok {
			t.Errorf("ElicitResponse(%s) = %+v", k, e)
		}
	}
	if (*ElicitResult)(nil).Accepted() {
		t.Error("nil accepted")
	}

	if s, ok := ctx.SamplingResponse("sample1"); !ok || s.Role != "assistant" || s.Model != "m" || s.StopReason != "endTurn" || len(s.Content) != 1 {
		t.Errorf("SamplingResponse(sample1) = %+v, %v", s, ok)
	} else if txt, ok := s.Text(); !ok || txt != "Paris" {
		t.Errorf("Text = %q, %v", txt, ok)
	}
	if s, ok := ctx.SamplingResponse("sampleN"); !ok || len(s.Content) != 3 || string(s.Content[0].Data) != "\x01\x02" {
		t.Errorf("SamplingResponse(sampleN) = %+v, %v", s, ok)
	} else if txt, ok := s.Text(); !ok || txt != "a" {
		t.Errorf("Text = %q, %v", txt, ok)
	}
	if s, ok := ctx.SamplingResponse("sampleImg"); !ok {
		t.Error("SamplingResponse(sampleImg) not found")
	} else if _, ok := s.Text(); ok {
		t.Error("image response has text")
	}
	for _, k := range []string{"elicit", "roots", "garbage", "missing", "caseFold"} {
		if s, ok := ctx.SamplingResponse(k); ok {
			t.Errorf("SamplingResponse(%s) = %+v", k, s)
		}
	}

	if roots, ok := ctx.RootsResponse("roots"); !ok || len(roots) != 2 || roots[0] != (Root{"file:///a", "A"}) || roots[1].URI != "file:///b" {
		t.Errorf("RootsResponse(roots) = %+v, %v", roots, ok)
	}
	for _, k := range []string{"noRoots", "nullRoots"} {
		if roots, ok := ctx.RootsResponse(k); !ok || roots == nil || len(roots) != 0 {
			t.Errorf("RootsResponse(%s) = %#v, %v", k, roots, ok)
		}
	}
	for _, k := range []string{"elicit", "sample1", "missing", "caseFold"} {
		if roots, ok := ctx.RootsResponse(k); ok {
			t.Errorf("RootsResponse(%s) = %+v", k, roots)
		}
	}
}

func TestSignState(t *testing.T) {
	key := []byte("k1")
	for _, state := range []string{"", "round=2;name=Ada", "a.b.c", "\x00ü"} {
		signed := SignState(key, state)
		if got, ok := VerifyState(key, signed); !ok || got != state {
			t.Errorf("VerifyState(SignState(%q)) = %q, %v", state, got, ok)
		}
		for _, bad := range []string{signed + "-TAMPERED", signed[:len(signed)-1], "x" + signed, strings.Replace(signed, ".", "", 1), ""} {
			if got, ok := VerifyState(key, bad); ok {
				t.Errorf("VerifyState(%q) accepted: %q", bad, got)
			}
		}
		if _, ok := VerifyState([]byte("k2"), signed); ok {
			t.Errorf("state %q verified with another key", state)
		}
	}
	// The signature covers the state: swapping states between signatures fails.
	a, b := SignState(key, "a"), SignState(key, "b")
	if _, ok := VerifyState(key, a[:strings.IndexByte(a, '.')]+b[strings.IndexByte(b, '.'):]); ok {
		t.Error("mixed state and signature accepted")
	}
}

func TestClientCapabilities(t *testing.T) {
	r := newRegistry()
	var got map[string]any
	r.addTool(abi.Tool{Name: "t"}, func(ctx *Context, _ json.RawMessage) (*abi.CallToolResult, error) {
		got = ctx.ClientCapabilities()
		return nil, nil
	})
	call(t, r, abi.ExportCallTool, `{"request":{"name":"t"},"context":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"roots":{"listChanged":true}}}}}`)
	if got["sampling"] == nil || got["elicitation"] != nil || got["roots"] == nil {
		t.Errorf("capabilities = %v", got)
	}
	for _, meta := range []string{`{}`, `{"io.modelcontextprotocol/clientCapabilities":"x"}`} {
		call(t, r, abi.ExportCallTool, `{"request":{"name":"t"},"context":{"_meta":`+meta+`}}`)
		if got != nil {
			t.Errorf("capabilities from %s = %v", meta, got)
		}
	}
}
