package bridge

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// textResults are call_tool outputs decodeTextResult must decode itself:
// what the Go SDK writes, and the same shape as other encoders write it.
var textResults = []string{
	`{"content":[{"type":"text","text":"hello"}]}`,
	`{"isError":true,"content":[{"type":"text","text":"tool \"x\" failed:\n\tbad input \u003cb\u003e \u0026 \/"}]}`,
	`{"content":[{"type":"text"}],"isError":false}`,
	` { "content" : [ { "text" : "caf\u00e9 ☕ \ud83d\ude00 é" , "type" : "text" } , {"type":"text","text":""} ] } `,
	`{"content":[{"type":"text","text":"\u0000\b\f\r\\"}]}`,
}

// notTextResults are outputs it must leave to the full decoder (and the
// reason).
var notTextResults = []string{
	`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`, // another content type
	`{"content":[]}`,   // no content
	`{"isError":true}`, // no content
	`{"content":[{"type":"text","text":"a"}],"structuredContent":{"a":1}}`,            // another member
	`{"content":[{"type":"text","text":"a","_meta":{"k":1}}]}`,                        // another member
	`{"Content":[{"type":"text","text":"a"}]}`,                                        // not the key
	`{"\u0063ontent":[{"type":"text","text":"a"}]}`,                                   // an escaped key
	`{"content":[{"type":"text","text":"a"}],"content":[{"type":"text","text":"b"}]}`, // twice
	`{"content":[{"type":"text","text":"a","text":"b"}]}`,                             // twice
	`{"content":[{"type":"text","text":null}]}`,                                       // null
	`{"content":[{"type":"text","text":"\ud800"}]}`,                                   // a lone surrogate
	"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}",                           // invalid UTF-8
	`{"content":[{"type":"text","text":"a"}]} {}`,                                     // trailing data
	`{"content":[{"type":"text","text":"a"}],}`,                                       // not JSON
	`{"content":[{"type":"text","text":"\x"}]}`,                                       // not JSON
}

// generalResult decodes out as decodeResult does without decodeTextResult.
func generalResult(out []byte) (mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	err := decodeJSON("call_tool", bytes.TrimSpace(out), &res)
	return res, err
}

func TestDecodeTextResultAgreesWithGoSDK(t *testing.T) {
	for _, out := range textResults {
		got, ok := decodeTextResult(bytes.TrimSpace([]byte(out)))
		if !ok {
			t.Errorf("%s: not decoded by hand", out)
			continue
		}
		want, err := generalResult([]byte(out))
		if err != nil {
			t.Errorf("%s: go-sdk refuses it: %v", out, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nby hand %#v\ngo-sdk  %#v", out, got, want)
		}
	}
	for _, out := range notTextResults {
		if got, ok := decodeTextResult(bytes.TrimSpace([]byte(out))); ok {
			t.Errorf("%s: decoded by hand as %#v, should be left to go-sdk", out, got)
		}
	}
}

// FuzzDecodeTextResult checks that whatever decodeTextResult decodes,
// go-sdk's decoder decodes to the same result.
func FuzzDecodeTextResult(f *testing.F) {
	for _, out := range append(textResults, notTextResults...) {
		f.Add([]byte(out))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		trimmed := bytes.TrimSpace(out)
		got, ok := decodeTextResult(trimmed)
		if !ok {
			return
		}
		want, err := generalResult(out)
		if err != nil {
			t.Fatalf("%q: decoded by hand as %#v, refused by go-sdk: %v", out, got, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nby hand %#v\ngo-sdk  %#v", out, got, want)
		}
	})
}
