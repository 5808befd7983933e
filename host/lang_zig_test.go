package host_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The plugin written in Zig (plugins/zig) is tested as committed, like the C
// and WAT ones (lang_c_wat_test.go, whose helpers these tests share): its
// zig.wasm is built by plugins/zig/build.sh, which CI runs with --check.

// zigSession serves the committed zig.wasm with the limits mcphost.toml
// gives it, and connects a client to it.
func zigSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "zig"
path = %s
timeout = "10s"
memory_mb = 16
`, strconv.Quote(committedWasm(t, "zig"))))
	return connect(t, h, nil, "")
}

func TestZigPluginBase64(t *testing.T) {
	cs := zigSession(t)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 1 {
		t.Fatalf("tools/list = %+v, %v", tools, err)
	}
	tool := tools.Tools[0]
	schema := fmt.Sprint(tool.InputSchema)
	if tool.Name != "base64" || tool.Title != "Base64" || !strings.Contains(schema, "required:[text mode]") || !strings.Contains(schema, "enum:[encode decode]") {
		t.Errorf("tool = %q %q, inputSchema %s", tool.Name, tool.Title, schema)
	}
	if a := tool.Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint {
		t.Errorf("annotations = %+v, want read-only and idempotent", a)
	}

	call := func(mode, text string) (*mcp.CallToolResult, string) {
		t.Helper()
		return callText(t, cs, "base64", map[string]any{"mode": mode, "text": text})
	}

	// Round trips, checked against Go's encoding/base64: ASCII, every padding
	// length, JSON escapes, control characters, multi-byte UTF-8.
	for _, text := range []string{"", "f", "fo", "foo", "foob", "hello, world", `a "quoted" \ back` + "\nslash\ttab\x01\x7f", "héllo wörld ✓ 😀", strings.Repeat("Zig 0.11 ", 1000)} {
		want := base64.StdEncoding.EncodeToString([]byte(text))
		if res, got := call("encode", text); res.IsError || got != want {
			t.Errorf("encode %.40q = %.60q (isError %v), want %.60q", text, got, res.IsError, want)
		}
		if res, got := call("decode", want); res.IsError || got != text {
			t.Errorf("decode %.60q = %.40q (isError %v), want %.40q", want, got, res.IsError, text)
		}
	}
	if res, got := call("encode", "Many hands make light work."); got != "TWFueSBoYW5kcyBtYWtlIGxpZ2h0IHdvcmsu" || res.IsError {
		t.Errorf("encode = %q", got)
	}
	// Decoding ignores whitespace and accepts missing padding.
	for _, in := range []string{"aGVsbG8=", "aGVsbG8", " aGVs\r\nbG8=\n", "aG\tVsbG8"} {
		if res, got := call("decode", in); res.IsError || got != "hello" {
			t.Errorf("decode %q = %q (isError %v), want hello", in, got, res.IsError)
		}
	}
	// A large random UTF-8 text (about 300 KB of Base64) both ways.
	r := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	for b.Len() < 200_000 {
		b.WriteRune(rune(r.IntN(0x2FFF) + 1))
	}
	big := b.String()
	_, enc := call("encode", big)
	if enc != base64.StdEncoding.EncodeToString([]byte(big)) {
		t.Errorf("encode of %d bytes: wrong (%d bytes of Base64)", len(big), len(enc))
	}
	if res, got := call("decode", enc); res.IsError || got != big {
		t.Errorf("decode of %d bytes of Base64: isError %v, %d bytes back", len(enc), res.IsError, len(got))
	}

	// The tool fails as a result the model can read: not Base64, or bytes
	// that are not text.
	for _, tc := range []struct{ in, want string }{
		{"not base64!", "the text is not Base64: a character outside the Base64 alphabet (A-Z a-z 0-9 + /)"},
		{"aGVsbG8-", "the text is not Base64: a character outside the Base64 alphabet (A-Z a-z 0-9 + /)"},
		{"aGVsbG8==", "the text is not Base64: wrong padding or length"},
		{"a", "the text is not Base64: wrong padding or length"},
		{"=aGVsbG8", "the text is not Base64: wrong padding or length"},
		{base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 0x00}), "the 3 decoded bytes are not UTF-8 text"},
		{base64.StdEncoding.EncodeToString([]byte("ok \xed\xa0\x80")), "the 6 decoded bytes are not UTF-8 text"}, // a surrogate
	} {
		if res, got := call("decode", tc.in); !res.IsError || got != tc.want {
			t.Errorf("decode %q = %q (isError %v), want isError %q", tc.in, got, res.IsError, tc.want)
		}
	}

	// Arguments the schema refuses never reach the plugin: the host answers
	// with an isError result.
	for _, args := range []map[string]any{{"text": "x", "mode": "rot13"}, {"text": "x"}, {"mode": "encode"}, {"text": 5, "mode": "encode"}, {"text": "x", "mode": "encode", "extra": true}} {
		if res, text := callText(t, cs, "base64", args); !res.IsError {
			t.Errorf("base64 %v succeeded: %q", args, text)
		}
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "base32", Arguments: map[string]any{}}); err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: %v, want -32602", err)
	}
	// ...and the host keeps serving.
	if res, got := call("encode", "still here"); res.IsError || got != "c3RpbGwgaGVyZQ==" {
		t.Errorf("encode after the errors = %q (isError %v)", got, res.IsError)
	}
}

// TestZigPluginOwnChecks hands the Zig plugin's exports inputs the host never
// sends: each must end in the ABI's JSON error or a JSON result, never a
// trap, and the instance must keep serving.
func TestZigPluginOwnChecks(t *testing.T) {
	p := cwatRaw(t, "zig")
	if out, e := cwatCall(t, p, "list_tools", nil); e != nil || !strings.Contains(fmt.Sprint(out), "name:base64") {
		t.Errorf("list_tools = %v, %+v", out, e)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"request":{"name":"nope","arguments":{}}}`, `unknown tool "nope"`},
		{`{"request":{"name":"base64"}}`, `base64: arguments text and mode are required`},
		{`{"request":{"name":"base64","arguments":{"mode":"encode"}}}`, `base64: argument "text" is required`},
		{`{"request":{"name":"base64","arguments":{"text":"x"}}}`, `base64: argument "mode" is required`},
		{`{"request":{"name":"base64","arguments":{"text":"x","mode":"rot13"}}}`, `base64: mode must be "encode" or "decode", got "rot13"`},
		{`{"context":{}}`, `call_tool: the input has no request`},
		{`{"request":{"name":"base64","arguments":{"text":5,"mode":"encode"}}}`, `call_tool: the input is not a valid envelope (UnexpectedToken)`},
	} {
		_, e := cwatCall(t, p, "call_tool", []byte(tc.in))
		if e == nil || e.Code != -32602 || e.Message != tc.want {
			t.Errorf("call_tool(%s) = %+v, want -32602 %q", tc.in, e, tc.want)
		}
	}
	// Unknown fields are ignored wherever they are; escapes are decoded.
	in := `{"context":{"_meta":{"progressToken":1},"id":3},"request":{"_meta":{"x":[1,{"name":"no"}]},"name":"b\u0061se64","arguments":{"mode":"encode","text":"\u00e9\ud83d\ude00\n","other":null}}}`
	want := base64.StdEncoding.EncodeToString([]byte("é😀\n"))
	if out, e := cwatCall(t, p, "call_tool", []byte(in)); e != nil || fmt.Sprint(out["content"]) != "[map[text:"+want+" type:text]]" || out["isError"] != false {
		t.Errorf("call_tool(%s) = %v, %+v; want text %s", in, out, e, want)
	}
	for _, in := range cwatMalformed {
		if _, e := cwatCall(t, p, "call_tool", []byte(in)); e == nil || e.Code != -32602 {
			t.Errorf("call_tool(%.60q) = %+v, want -32602", in, e)
		}
	}
	cwatFuzz(t, p, "call_tool", 300,
		`{"request":{"name":"base64","arguments":{"text":"aGVs\nbG8=","mode":"decode"}},"context":{"_meta":{}}}`,
		`{"request":{"name":"base64","arguments":{"text":"h\u00e9\"\\","mode":"encode"}}}`)
	// Any text decodes to a result or an isError result, never a trap.
	r := rand.New(rand.NewPCG(3, 5))
	for range 500 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			const alphabet = "AZaz09+/= \n-_\xc3\xa9"
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if !utf8.Valid(b) {
			continue
		}
		text, _ := json.Marshal(string(b))
		out, e := cwatCall(t, p, "call_tool", []byte(`{"request":{"name":"base64","arguments":{"mode":"decode","text":`+string(text)+`}}}`))
		if e != nil || out["content"] == nil {
			t.Errorf("decode %q = %v, %+v", b, out, e)
		}
	}
	// 64 KiB of text with escapes, in through input_read and out through
	// output_write, there (encode) and back (decode), byte for byte.
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<10; i++ {
		sb.WriteString([]string{"a", "é", "😀", "\"", "\\", "\n", "\x01", "Z9"}[(5*i+i/7)%8])
	}
	text := sb.String()
	quoted, _ := json.Marshal(text)
	out, e := cwatCall(t, p, "call_tool", []byte(`{"request":{"name":"base64","arguments":{"mode":"encode","text":`+string(quoted)+`}}}`))
	encoded := base64.StdEncoding.EncodeToString([]byte(text))
	if e != nil || fmt.Sprint(out["content"]) != "[map[text:"+encoded+" type:text]]" {
		t.Fatalf("encode of %d bytes = %.200v…, %+v", len(text), out, e)
	}
	out, e = cwatCall(t, p, "call_tool", []byte(`{"request":{"name":"base64","arguments":{"mode":"decode","text":"`+encoded+`"}}}`))
	if e != nil || fmt.Sprint(out["content"]) != "[map[text:"+text+" type:text]]" {
		t.Fatalf("decode of %d bytes of Base64 = %.200v…, %+v; want the text back", len(encoded), out, e)
	}
	// Memory does not grow with calls: what one allocates (here 1 MiB of
	// input and 1.3 MiB of Base64) is released when it returns, so ten of
	// them fit in the 4 MiB the instance has.
	big := `{"request":{"name":"base64","arguments":{"mode":"encode","text":"` + strings.Repeat("x", 1<<20) + `"}}}`
	for i := range 10 {
		if _, e := cwatCall(t, p, "call_tool", []byte(big)); e != nil {
			t.Fatalf("encode of 1 MiB, call %d: %+v", i, e)
		}
	}
	if _, e := cwatCall(t, p, "call_tool", []byte(`{"request":{"name":"base64","arguments":{"mode":"encode","text":"`+strings.Repeat("x", 5<<20)+`"}}}`)); e == nil || e.Code != -32602 {
		t.Errorf("a 5 MiB input = %+v, want -32602", e)
	}
}
