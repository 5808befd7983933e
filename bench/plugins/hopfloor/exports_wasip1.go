package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"

	"github.com/mcphost/mcphost/abi"
)

//go:wasmexport list_tools
func listTools() int32 { pdk.Output([]byte(`{"tools":[]}`)); return 0 }

//go:wasmexport nothing
func nothing() int32 { return 0 }

//go:wasmexport input_only
func inputOnly() int32 { _ = pdk.Input(); return 0 }

//go:wasmexport raw
func raw() int32 { pdk.Output(pdk.Input()); return 0 }

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
func decode() int32 { _ = decodeInput(); return 0 }

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
	return 0
}
