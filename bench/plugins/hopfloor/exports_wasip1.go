package main

import (
	"encoding/json"
	"runtime"

	"github.com/extism/go-pdk"

	"github.com/mcphost/mcphost/abi"
)

//go:wasmexport list_tools
func listTools() int32 { pdk.Output([]byte(`{"tools":[]}`)); return 0 }

// collect collects garbage every 1,000 calls. Without it these exports,
// called on their own, grew the guest's heap to the 128 MiB cap after a
// few tens of thousands of calls (under every kind of interrupt check),
// while the SDK's exports did not (400,000 echo calls on one instance).
// Why the Go runtime does not collect here is not understood (compare
// golang/go#69584); a collection of this small heap costs ~0.1% of the
// calls it covers.
func collect() int32 {
	if calls++; calls%1000 == 0 {
		runtime.GC()
	}
	return 0
}

var calls int

//go:wasmexport nothing
func nothing() int32 { return 0 }

//go:wasmexport input_only
func inputOnly() int32 { _ = pdk.Input(); return collect() }

//go:wasmexport raw
func raw() int32 { pdk.Output(pdk.Input()); return collect() }

type args struct {
	Text string `json:"text"`
}

func decodeInput() string {
	var in abi.Input
	_ = json.Unmarshal(pdk.Input(), &in)
	var p abi.CallToolParams
	_ = json.Unmarshal(in.Request, &p)
	var a args
	_ = json.Unmarshal(p.Arguments, &a)
	return a.Text
}

//go:wasmexport decode
func decode() int32 { _ = decodeInput(); return collect() }

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

//go:wasmexport decode_encode
func decodeEncode() int32 {
	text := decodeInput()
	b, _ := json.Marshal(struct {
		Content []content `json:"content"`
	}{[]content{{"text", text}}})
	pdk.Output(b)
	return collect()
}
