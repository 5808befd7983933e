// Command hypermcp-v2 is a test plugin written exactly to hyper-mcp's "v2"
// plugin ABI (hyper-mcp-rs/hyper-mcp, src/plugin.rs and its plugin
// templates), with go-pdk and no mcphost code: no mcphost_abi_version
// export, the {"request", "context": {"id", "_meta"}} envelope, complete's
// ref.type without "ref/", and hyper-mcp's host functions. mcphost must load
// and run it unmodified.
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

func main() {}

//go:wasmimport extism:host/user create_message
func hostCreateMessage(uint64) uint64

//go:wasmimport extism:host/user list_roots
func hostListRoots() uint64

//go:wasmimport extism:host/user notify_progress
func hostNotifyProgress(uint64)

//go:wasmimport extism:host/user notify_logging_message
func hostNotifyLoggingMessage(uint64)

//go:wasmimport extism:host/user get_keyring_secret
func hostGetKeyringSecret(uint64) uint64

// envelope is hyper-mcp's PluginRequestContext envelope; id and _meta are
// required there.
type envelope struct {
	Request json.RawMessage `json:"request"`
	Context *struct {
		ID   json.Number    `json:"id"`
		Meta map[string]any `json:"_meta"`
	} `json:"context"`
}

func input() (envelope, bool) {
	var in envelope
	if err := json.Unmarshal(pdk.Input(), &in); err != nil || in.Context == nil || in.Context.ID == "" || in.Context.Meta == nil {
		pdk.SetErrorString("hyper-mcp envelope without context.id/_meta: " + string(pdk.Input()))
		return in, false
	}
	return in, true
}

func output(v any) int32 {
	b, _ := json.Marshal(v)
	pdk.Output(b)
	return 0
}

func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

//go:wasmexport list_tools
func listTools() int32 {
	if _, ok := input(); !ok {
		return 1
	}
	obj := json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string"}}}`)
	return output(map[string]any{"tools": []any{
		map[string]any{"name": "ask_llm", "description": "asks the client's model (blocking create_message)", "inputSchema": obj},
		map[string]any{"name": "roots", "description": "lists the client's roots (blocking list_roots)", "inputSchema": obj},
		map[string]any{"name": "secret", "description": "asks for a keyring secret", "inputSchema": obj},
		map[string]any{"name": "progress", "description": "reports progress with notify_progress", "inputSchema": obj},
	}})
}

//go:wasmexport call_tool
func callTool() int32 {
	in, ok := input()
	if !ok {
		return 1
	}
	var req struct {
		Name      string `json:"name"`
		Arguments struct {
			Prompt string `json:"prompt"`
		} `json:"arguments"`
	}
	json.Unmarshal(in.Request, &req)
	switch req.Name {
	case "ask_llm":
		mem, _ := pdk.AllocateJSON(map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": req.Arguments.Prompt}}},
			"maxTokens": 50,
		})
		var res struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := pdk.JSONFrom(hostCreateMessage(mem.Offset()), &res); err != nil {
			return output(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "create_message failed: " + err.Error()}}})
		}
		return output(text("model said: " + res.Content.Text))
	case "roots":
		var res struct {
			Roots []struct {
				URI string `json:"uri"`
			} `json:"roots"`
		}
		if err := pdk.JSONFrom(hostListRoots(), &res); err != nil || len(res.Roots) == 0 {
			return output(text("no roots"))
		}
		return output(text("first root: " + res.Roots[0].URI))
	case "secret":
		mem, _ := pdk.AllocateJSON(map[string]string{"service": "svc", "user": "me"})
		if off := hostGetKeyringSecret(mem.Offset()); off == 0 {
			return output(text("secret refused"))
		}
		return output(text("secret granted"))
	case "progress":
		mem, _ := pdk.AllocateJSON(map[string]any{"progressToken": in.Context.Meta["progressToken"], "progress": 1, "total": 2})
		hostNotifyProgress(mem.Offset())
		log, _ := pdk.AllocateJSON(map[string]any{"level": "info", "data": "progress sent"})
		hostNotifyLoggingMessage(log.Offset())
		return output(text("progressed"))
	}
	pdk.SetErrorString(`{"code":-32602,"message":"unknown tool"}`)
	return 1
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	if _, ok := input(); !ok {
		return 1
	}
	return output(map[string]any{"prompts": []any{map[string]any{"name": "p", "arguments": []any{map[string]any{"name": "a"}}}}})
}

//go:wasmexport get_prompt
func getPrompt() int32 {
	if _, ok := input(); !ok {
		return 1
	}
	return output(map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}})
}

// complete answers with the ref.type it was given: hyper-mcp strips "ref/".
//
//go:wasmexport complete
func complete() int32 {
	in, ok := input()
	if !ok {
		return 1
	}
	var req struct {
		Ref struct {
			Type string `json:"type"`
		} `json:"ref"`
	}
	json.Unmarshal(in.Request, &req)
	return output(map[string]any{"completion": map[string]any{"values": []string{"ref.type=" + req.Ref.Type}}})
}
