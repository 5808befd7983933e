package host_test

// Tests of the example plugins written in Rust (plugins/rust) and
// AssemblyScript (plugins/assemblyscript). They load the committed .wasm
// files, which each plugin's build.sh rebuilds reproducibly (build.sh --check
// verifies that they match their sources), so these tests need neither
// toolchain.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/plugin"
)

// rustASHost starts a host serving only the example plugin name, and
// connects a go-sdk client to it in memory.
func rustASHost(t *testing.T, name string) *mcp.ClientSession {
	t.Helper()
	// A generous deadline: these tests check what the plugins answer, and
	// a 64 KiB prompt under -race on a loaded machine has taken over 10 s.
	h, _ := newHost(t, `
[server]
watch = false
[[plugin]]
name = "`+name+`"
path = "`+committedWasm(t, name)+`"
timeout = "120s"
memory_mb = 32
`)
	return connect(t, h, nil, "")
}

// rustASPlugin loads the example plugin name on its own, to call its exports
// with inputs a host would never send.
func rustASPlugin(t *testing.T, name string) *plugin.Plugin {
	t.Helper()
	wasm, err := os.ReadFile(committedWasm(t, name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plugin.Load(t.Context(), plugin.Options{Name: name, Wasm: wasm, Timeout: 10 * time.Second, MemoryMB: 32, MaxInstances: 1, MaxOutputBytes: 1 << 20})
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	if v := p.ABIVersion(); v != 1 {
		t.Errorf("%s declares ABI version %d, want 1", name, v)
	}
	return p
}

// rustASMalformed are envelopes a plugin must refuse with -32602, not trap on.
var rustASMalformed = map[string]string{
	"empty":             ``,
	"not JSON":          `hello`,
	"not an object":     `[1,2,3]`,
	"truncated":         `{"request":{"name":"x","arguments":{"text":"abc`,
	"trailing data":     `{"request":{}} {}`,
	"bad escape":        `{"request":{"name":"\q"}}`,
	"control character": "{\"request\":{\"name\":\"a\x01b\"}}",
	"invalid UTF-8":     "{\"request\":{\"name\":\"\xff\xfe\"}}",
	"deep nesting":      strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
	"deep object":       strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000),
	"huge number":       `{"request":{"name":1e999}}`,
	"no request":        `{"context":{}}`,
	"request not obj":   `{"request":"call"}`,
	"no name":           `{"request":{"arguments":{}}}`,
}

// rustASRefused calls export with input and wants the ABI's -32602 error.
func rustASRefused(t *testing.T, p *plugin.Plugin, export, input, wantInMessage string) {
	t.Helper()
	out, err := p.Call(t.Context(), export, []byte(input))
	var rpcErr *abi.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != int(jsonrpc.CodeInvalidParams) {
		t.Errorf("%s(%.60q) = %s, %v; want a -32602 error", export, input, out, err)
		return
	}
	if !strings.Contains(rpcErr.Message, wantInMessage) {
		t.Errorf("%s(%.60q): message %q does not contain %q", export, input, rpcErr.Message, wantInMessage)
	}
}

func TestRustPluginListsTools(t *testing.T) {
	cs := rustASHost(t, "rust")
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	if len(got) != 2 || got["word_stats"] == nil || got["sha256"] == nil {
		t.Fatalf("tools/list = %v, want word_stats and sha256", reflect.ValueOf(got).MapKeys())
	}
	for name, tool := range got {
		if tool.OutputSchema == nil || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || tool.Title == "" {
			t.Errorf("tool %s: outputSchema %v, annotations %+v, title %q", name, tool.OutputSchema, tool.Annotations, tool.Title)
		}
	}
}

// rustStructured calls a tool that must succeed and returns its structured
// content, checking that the text content carries the same JSON.
func rustStructured(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, into any) {
	t.Helper()
	res, text := callText(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, text)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: structuredContent %s: %v", name, b, err)
	}
	var fromText any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil || !reflect.DeepEqual(fromText, res.StructuredContent) {
		t.Errorf("%s: text content %q is not the structured content %s", name, text, b)
	}
}

type rustWordStats struct {
	Lines       int `json:"lines"`
	Words       int `json:"words"`
	Characters  int `json:"characters"`
	Bytes       int `json:"bytes"`
	UniqueWords int `json:"unique_words"`
	TopWords    []struct {
		Word  string `json:"word"`
		Count int    `json:"count"`
	} `json:"top_words"`
}

func TestRustPluginWordStats(t *testing.T) {
	cs := rustASHost(t, "rust")
	text := "The cat saw the dog.\r\nThe dog ran! Café, café…\n"
	var got rustWordStats
	rustStructured(t, cs, "word_stats", map[string]any{"text": text, "top": 2}, &got)
	want := rustWordStats{Lines: 2, Words: 10, Characters: utf8.RuneCountInString(text), Bytes: len(text), UniqueWords: 6}
	if got.Lines != want.Lines || got.Words != want.Words || got.Characters != want.Characters || got.Bytes != want.Bytes || got.UniqueWords != want.UniqueWords {
		t.Errorf("word_stats = %+v, want %+v", got, want)
	}
	// Ties are in alphabetical order: "café" before "dog".
	if len(got.TopWords) != 2 || got.TopWords[0].Word != "the" || got.TopWords[0].Count != 3 ||
		got.TopWords[1].Word != "café" || got.TopWords[1].Count != 2 {
		t.Errorf("top_words = %+v, want the×3, café×2", got.TopWords)
	}

	// top defaults to 5; 0 lists none; the empty text has nothing.
	rustStructured(t, cs, "word_stats", map[string]any{"text": text}, &got)
	if len(got.TopWords) != 5 {
		t.Errorf("default top: %d words, want 5", len(got.TopWords))
	}
	rustStructured(t, cs, "word_stats", map[string]any{"text": text, "top": 0}, &got)
	if len(got.TopWords) != 0 {
		t.Errorf("top 0: %+v", got.TopWords)
	}
	got = rustWordStats{}
	rustStructured(t, cs, "word_stats", map[string]any{"text": ""}, &got)
	if got.Lines != 0 || got.Words != 0 || got.Bytes != 0 || got.TopWords == nil || len(got.TopWords) != 0 {
		t.Errorf("empty text: %+v", got)
	}

	// The host validates arguments against the input schema.
	res, msg := callText(t, cs, "word_stats", map[string]any{"text": "x", "top": 500})
	if !res.IsError {
		t.Errorf("top 500 accepted: %s", msg)
	}
}

func TestRustPluginSHA256(t *testing.T) {
	cs := rustASHost(t, "rust")
	type digest struct {
		SHA256 string `json:"sha256"`
		Bytes  int    `json:"bytes"`
	}
	// Lengths around the padding boundaries (55, 56, 63, 64 bytes…), and UTF-8.
	texts := []string{"hello", strings.Repeat("aé€😀", 100)}
	for _, n := range []int{0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128} {
		texts = append(texts, strings.Repeat("x", n))
	}
	// 64 KiB and a few bytes more, which reach the plugin in one input_read:
	// a byte lost or moved changes the digest.
	var big strings.Builder
	for i := 0; big.Len() < 64<<10+5; i++ {
		big.WriteString([]string{"a", "é", "€", "😀", " ", "\"", "\n", "z"}[(5*i+i/7)%8])
	}
	texts = append(texts, big.String())
	for _, text := range texts {
		sum := sha256.Sum256([]byte(text))
		var got digest
		rustStructured(t, cs, "sha256", map[string]any{"text": text}, &got)
		if got.SHA256 != hex.EncodeToString(sum[:]) || got.Bytes != len(text) {
			t.Errorf("sha256 of %d bytes = %+v, want %x", len(text), got, sum)
		}
	}
	var got digest
	rustStructured(t, cs, "sha256", map[string]any{"text": "68 65 6C 6c 6f", "encoding": "hex"}, &got)
	if sum := sha256.Sum256([]byte("hello")); got.SHA256 != hex.EncodeToString(sum[:]) || got.Bytes != 5 {
		t.Errorf("sha256 of hex 68656c6c6f = %+v", got)
	}

	// Data the schema cannot check: a tool error the model can correct.
	for _, bad := range []string{"abc", "zz", "ü0"} {
		res, text := callText(t, cs, "sha256", map[string]any{"text": bad, "encoding": "hex"})
		if !res.IsError || !strings.Contains(text, "not hexadecimal") {
			t.Errorf("sha256 of bad hex %q = %v, %q; want an isError result", bad, res.IsError, text)
		}
	}
	// An encoding outside the schema's enum: refused by the host.
	if res, text := callText(t, cs, "sha256", map[string]any{"text": "x", "encoding": "base64"}); !res.IsError {
		t.Errorf("encoding base64 accepted: %s", text)
	}
	// An unknown tool.
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "md5", Arguments: map[string]any{}})
	if err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: %v, want -32602", err)
	}
}

// TestRustPluginRefusesMalformedInput calls the plugin directly with
// envelopes the host never sends: each gets -32602, none traps, and the
// same instance answers a good call afterwards.
func TestRustPluginRefusesMalformedInput(t *testing.T) {
	p := rustASPlugin(t, "rust")
	for name, input := range rustASMalformed {
		t.Run(name, func(t *testing.T) { rustASRefused(t, p, abi.ExportCallTool, input, "call_tool") })
	}
	for input, want := range map[string]string{
		`{"request":{"name":"nope"}}`:                                               `unknown tool "nope"`,
		`{"request":{"name":"word_stats","arguments":[]}}`:                          "not an object",
		`{"request":{"name":"word_stats","arguments":{}}}`:                          `"text" is missing`,
		`{"request":{"name":"word_stats","arguments":{"text":5}}}`:                  "not a string",
		`{"request":{"name":"word_stats","arguments":{"text":"a","top":1.5}}}`:      "integer from 0 to 50",
		`{"request":{"name":"word_stats","arguments":{"text":"a","top":-1}}}`:       "integer from 0 to 50",
		`{"request":{"name":"sha256","arguments":{"text":"a","encoding":"rot13"}}}`: "unknown encoding",
	} {
		rustASRefused(t, p, abi.ExportCallTool, input, want)
	}
	// Escapes, including a surrogate pair and a lone surrogate (read as U+FFFD, as Go does).
	out, err := p.Call(t.Context(), abi.ExportCallTool, []byte(`{"request":{"name":"sha256","arguments":{"text":"\u00e9\ud83d\ude00\ud800\n\"\/"}},"context":{"_meta":{"progressToken":-1.5e3}}}`))
	sum := sha256.Sum256([]byte("é😀\uFFFD\n\"/"))
	if err != nil || !strings.Contains(string(out), hex.EncodeToString(sum[:])) {
		t.Errorf("call with escapes = %s, %v; want digest %x", out, err, sum)
	}
	if out, err := p.Call(t.Context(), abi.ExportListTools, []byte(`{}`)); err != nil || !json.Valid(out) {
		t.Errorf("list_tools after the refusals = %.80s, %v", out, err)
	}
}

func TestAssemblyScriptPluginListsPrompts(t *testing.T) {
	cs := rustASHost(t, "assemblyscript")
	res, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range res.Prompts {
		var args []string
		for _, a := range p.Arguments {
			s := a.Name
			if a.Required {
				s += "*"
			}
			if a.Description == "" {
				t.Errorf("prompt %s: argument %s has no description", p.Name, a.Name)
			}
			args = append(args, s)
		}
		got[p.Name] = strings.Join(args, " ")
		if p.Title == "" || p.Description == "" {
			t.Errorf("prompt %s: title %q, description %q", p.Name, p.Title, p.Description)
		}
	}
	want := map[string]string{"translate": "text* language register", "explain_code": "code* language level"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prompts/list = %v, want %v", got, want)
	}
	if tools, err := cs.ListTools(t.Context(), nil); err != nil || len(tools.Tools) != 0 {
		t.Errorf("tools/list = %v, %v; want no tools", tools, err)
	}
}

// asPromptText gets a prompt that must have one user text message.
func asPromptText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) (description, text string) {
	t.Helper()
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("get %s %v: %v", name, args, err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("get %s: messages %+v", name, res.Messages)
	}
	tc, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		t.Fatalf("get %s: content %T", name, res.Messages[0].Content)
	}
	return res.Description, tc.Text
}

func TestAssemblyScriptPluginGetsPrompts(t *testing.T) {
	cs := rustASHost(t, "assemblyscript")

	// Non-ASCII round trip (the PDK's outputString would cut it short).
	desc, text := asPromptText(t, cs, "translate", map[string]string{"text": "Grüß Gott 😀\n  “line two”", "language": "Japanese", "register": "FORMAL"})
	if desc != "Translate into Japanese (formal)" ||
		!strings.HasPrefix(text, "Translate the following text into Japanese, in a formal register.") ||
		!strings.HasSuffix(text, "\n\nGrüß Gott 😀\n  “line two”") {
		t.Errorf("translate = %q, %q", desc, text)
	}
	desc, text = asPromptText(t, cs, "translate", map[string]string{"text": "hola"})
	if desc != "Translate into English (neutral)" || !strings.Contains(text, "into English, in a neutral register") {
		t.Errorf("translate with defaults = %q, %q", desc, text)
	}
	// 64 KiB of text with escapes, in through input_read and out through
	// output_write, byte for byte.
	var big strings.Builder
	for i := 0; big.Len() < 64<<10; i++ {
		big.WriteString([]string{"a", "é", "😀", "\"", "\\", "\n", "\t", "z "}[(5*i+i/7)%8])
	}
	if _, text = asPromptText(t, cs, "translate", map[string]string{"text": "x" + big.String() + "x"}); !strings.HasSuffix(text, "\n\nx"+big.String()+"x") {
		t.Errorf("translate of %d bytes: the text does not come back (%d bytes, ends %q)", big.Len()+2, len(text), text[max(0, len(text)-40):])
	}

	code := "fmt.Println(\"```\")\n\tx := `a\\b`"
	desc, text = asPromptText(t, cs, "explain_code", map[string]string{"code": code, "language": "Go", "level": "beginner"})
	if desc != "Explain Go code to a reader of beginner level" ||
		!strings.Contains(text, "The reader is a beginner") ||
		!strings.HasSuffix(text, "\n\n````go\n"+code+"\n````") {
		t.Errorf("explain_code = %q, %q", desc, text)
	}
	_, text = asPromptText(t, cs, "explain_code", map[string]string{"code": "SELECT 1", "language": "Weird `lang`\nx"})
	if !strings.Contains(text, "The reader programs") || !strings.HasSuffix(text, "\n\n```weirdlangx\nSELECT 1\n```") {
		t.Errorf("explain_code with defaults = %q", text)
	}

	// Refusals, each a -32602 naming the problem: by the host (unknown
	// prompt, missing required argument) or by the plugin (the rest).
	for _, tc := range []struct {
		name string
		args map[string]string
		want string
	}{
		{"nope", nil, `unknown prompt "nope"`},
		{"translate", map[string]string{"language": "French"}, `missing required argument "text"`},
		{"translate", map[string]string{"text": "  \n "}, `argument "text" is empty`},
		{"translate", map[string]string{"text": "x", "register": "sarcastic"}, `"sarcastic", not one of formal, informal, neutral`},
		{"translate", map[string]string{"text": "x", "tone": "warm"}, `has no argument "tone"`},
		{"explain_code", map[string]string{"code": "x", "level": "guru"}, `not one of beginner, intermediate, expert`},
	} {
		_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: tc.name, Arguments: tc.args})
		if err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("get %s %v: %v; want -32602 containing %q", tc.name, tc.args, err, tc.want)
		}
	}
}

func TestAssemblyScriptPluginCompletes(t *testing.T) {
	cs := rustASHost(t, "assemblyscript")
	complete := func(prompt, arg, value string) ([]string, error) {
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: prompt},
			Argument: mcp.CompleteParamsArgument{Name: arg, Value: value},
		})
		if err != nil {
			return nil, err
		}
		if res.Completion.Total != len(res.Completion.Values) || res.Completion.HasMore {
			t.Errorf("complete %s.%s %q: total %d, hasMore %v for %d values", prompt, arg, value, res.Completion.Total, res.Completion.HasMore, len(res.Completion.Values))
		}
		return res.Completion.Values, nil
	}
	for _, tc := range []struct {
		prompt, arg, value string
		want               []string
	}{
		// Prefix matches first (case-insensitive), then matches inside.
		{"translate", "language", "sw", []string{"Swahili", "Swedish"}},
		{"translate", "language", "CHI", []string{"Chinese (Simplified)", "Chinese (Traditional)"}},
		{"translate", "language", "ian", []string{"Hungarian", "Indonesian", "Italian", "Norwegian", "Persian", "Romanian", "Russian", "Ukrainian"}},
		{"translate", "register", "", []string{"formal", "informal", "neutral"}},
		{"translate", "register", "f", []string{"formal", "informal"}},
		// The same argument name completes differently per prompt.
		{"explain_code", "language", "ja", []string{"Java", "JavaScript"}},
		{"explain_code", "language", "script", []string{"AssemblyScript", "JavaScript", "TypeScript"}},
		{"explain_code", "level", "e", []string{"expert", "beginner", "intermediate"}},
		// Free text: nothing to offer.
		{"translate", "text", "he", []string{}},
		{"translate", "language", "klingon", []string{}},
	} {
		got, err := complete(tc.prompt, tc.arg, tc.value)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("complete %s.%s %q = %q, %v; want %q", tc.prompt, tc.arg, tc.value, got, err, tc.want)
		}
	}
	if _, err := complete("translate", "tone", "w"); err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), `no argument "tone"`) {
		t.Errorf("completing an unknown argument: %v, want -32602", err)
	}
	if _, err := complete("nope", "x", ""); err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams {
		t.Errorf("completing an unknown prompt: %v, want -32602", err)
	}
}

// TestAssemblyScriptPluginRefusesMalformedInput calls the plugin directly
// with envelopes the host never sends: each gets -32602, none aborts.
func TestAssemblyScriptPluginRefusesMalformedInput(t *testing.T) {
	p := rustASPlugin(t, "assemblyscript")
	for name, input := range rustASMalformed {
		t.Run(name, func(t *testing.T) {
			rustASRefused(t, p, abi.ExportGetPrompt, input, "get_prompt")
			rustASRefused(t, p, abi.ExportComplete, input, "complete")
		})
	}
	for input, want := range map[string]string{
		`{"request":{"name":"translate","arguments":{"text":5}}}`:                         "not a string",
		`{"request":{"name":"translate","arguments":"text"}}`:                             "not an object",
		`{"request":{"name":"translate"}}`:                                                `"text" is missing`,
		`{"request":{"name":"translate","arguments":{"text":"a","register":null}},"x":1}`: "", // valid: null is absent
	} {
		if want == "" {
			if out, err := p.Call(t.Context(), abi.ExportGetPrompt, []byte(input)); err != nil || !json.Valid(out) {
				t.Errorf("get_prompt(%s) = %s, %v", input, out, err)
			}
			continue
		}
		rustASRefused(t, p, abi.ExportGetPrompt, input, want)
	}
	for input, want := range map[string]string{
		`{"request":{"ref":{"type":"ref/resource","uri":"x"},"argument":{"name":"a","value":""}}}`: "prompt arguments only",
		`{"request":{"ref":{"type":"ref/prompt","name":"translate"}}}`:                             "argument is missing",
		`{"request":{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"value":"x"}}}`:    "argument.name is missing",
	} {
		rustASRefused(t, p, abi.ExportComplete, input, want)
	}
	// A lone surrogate in the input is written back as U+FFFD (valid UTF-8).
	out, err := p.Call(t.Context(), abi.ExportGetPrompt, []byte(`{"request":{"name":"translate","arguments":{"text":"a\ud800b\ud83d\ude00"}}}`))
	if err != nil || !utf8.Valid(out) || !strings.Contains(string(out), "a\uFFFDb😀") {
		t.Errorf("lone surrogate: %s, %v", out, err)
	}
}
