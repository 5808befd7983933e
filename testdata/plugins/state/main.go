// Command state is a test plugin, written with the Go SDK, that keeps
// values in the host's per-session plugin state (state_get, state_set):
// the host's tests of that state use it.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o testdata/plugins/state/state.wasm ./testdata/plugins/state
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"unsafe"

	"github.com/extism/go-pdk"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

//go:wasmimport extism:host/user state_get
func hostStateGet(offset uint64) uint64

//go:wasmimport extism:host/user state_set
func hostStateSet(offset uint64) uint64

// instance names this instance: a new instance has a new one.
var instance = newInstanceID()

func newInstanceID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func init() {
	keySchema := `"key":{"type":"string"}`
	sdk.AddTool(abi.Tool{Name: "put", Description: "Stores `value` (any JSON) under `key` for this session; answers ok or the host's error.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` + keySchema + `,"value":{}},"required":["key"]}`)}, put)
	sdk.AddTool(abi.Tool{Name: "get", Description: "Answers the JSON stored under `key` for this session, or `unset`.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` + keySchema + `},"required":["key"]}`)}, get)
	sdk.AddTool(abi.Tool{Name: "del", Description: "Deletes `key` for this session.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` + keySchema + `},"required":["key"]}`)}, del)
	sdk.AddTool(abi.Tool{Name: "incr", Description: "Adds one to the number under `key` for this session (sdk.UpdateState) and answers it.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` + keySchema + `},"required":["key"]}`)}, incr)
	sdk.AddTool(abi.Tool{Name: "raw", Description: "Calls the host function `fn` (state_get or state_set) with `payload` as it is, and answers the host's answer.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"fn":{"type":"string","enum":["state_get","state_set"]},"payload":{"type":"string"}},"required":["fn","payload"]}`)}, raw)
	sdk.AddTool(abi.Tool{Name: "instance", Description: "Answers this instance's random name.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
		return sdk.TextResult(instance), nil
	})
	sdk.AddTool(abi.Tool{Name: "trap", Description: "Traps (an out of bounds store): the host discards this instance.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
		trap()
		return sdk.TextResult("not reached"), nil
	})
}

type keyValue struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

func put(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in keyValue
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("put: %v", err)
	}
	var v any = in.Value
	if in.Value == nil {
		v = nil
	}
	if err := ctx.SetState(in.Key, v); err != nil {
		return nil, err
	}
	return sdk.TextResult("ok"), nil
}

func get(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in keyValue
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("get: %v", err)
	}
	var v json.RawMessage
	ok, err := ctx.State(in.Key, &v)
	if err != nil {
		return nil, err
	}
	if !ok {
		return sdk.TextResult("unset"), nil
	}
	return sdk.TextResult(string(v)), nil
}

func del(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in keyValue
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("del: %v", err)
	}
	if err := ctx.DeleteState(in.Key); err != nil {
		return nil, err
	}
	return sdk.TextResult("ok"), nil
}

func incr(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in keyValue
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("incr: %v", err)
	}
	var now int
	err := sdk.UpdateState(ctx, in.Key, func(n *int, _ bool) error {
		*n++
		now = *n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sdk.TextResult(strconv.Itoa(now)), nil
}

func raw(_ *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Fn      string `json:"fn"`
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("raw: %v", err)
	}
	fn := hostStateGet
	if in.Fn == "state_set" {
		fn = hostStateSet
	}
	mem := pdk.AllocateBytes([]byte(in.Payload))
	defer mem.Free()
	offset := fn(mem.Offset())
	if offset == 0 {
		return nil, errors.New("no answer from the host")
	}
	answer := pdk.FindMemory(offset)
	defer answer.Free()
	return sdk.TextResult(string(answer.ReadBytes())), nil
}

// trap stores past the end of the 32-bit address space: a real Wasm trap,
// which no Go code (defer, recover) sees.
func trap() {
	var x byte
	p := unsafe.Pointer(&x)
	far := unsafe.Add(p, int(0xFFFFFFF0-uintptr(p)))
	*(*byte)(far) = 1
	instance += string(rune(x))
}
