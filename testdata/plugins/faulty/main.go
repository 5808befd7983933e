// Command faulty is a plugin that misbehaves on purpose, for the host's fault
// tests. It implements the mcphost ABI by hand with the Extism Go PDK rather
// than through sdk/, so that it can break the rules the SDK enforces (and so
// the host's fault tests do not depend on the SDK).
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o testdata/plugins/faulty/faulty.wasm ./testdata/plugins/faulty
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/extism/go-pdk"
	"github.com/mcphost/mcphost/abi"
)

//go:wasmimport extism:host/user notify_logging_message
func hostNotifyLoggingMessage(uint64)

//go:wasmimport extism:host/user http_request
func hostHTTPRequest(uint64) uint64

func main() {} // never called: a reactor runs only init and its exports

var anyObject = json.RawMessage(`{"type":"object"}`)

var tools = []abi.Tool{
	{Name: "spin", Description: "Loops forever; the host's deadline must interrupt it. With `text`, it first sends that text as a log message (info), so that a test knows the call is running in the plugin.", InputSchema: anyObject},
	{Name: "trap", Description: "Stores to an address outside linear memory: a real Wasm trap (out of bounds memory access), which Go's recover cannot catch.", InputSchema: anyObject},
	{Name: "exit", Description: "Calls os.Exit(3): WASI proc_exit ends the call and closes the module.", InputSchema: anyObject},
	{Name: "panic", Description: "Panics without recovering: the Go runtime prints the panic to stderr and exits with code 2.", InputSchema: anyObject},
	{Name: "garbage", Description: "Returns success with output that is not JSON.", InputSchema: anyObject},
	{Name: "stdout", Description: `Writes a line to stdout and to stderr, then returns the text "wrote".`, InputSchema: anyObject},
	{Name: "alloc", Description: "Allocates 1 MiB chunks and keeps them until memory runs out; the host's memory cap must stop it.", InputSchema: anyObject},
	{Name: "big", Description: "Returns a valid result whose text is `bytes` long (default 8 MiB), to test the host's output cap.", InputSchema: json.RawMessage(`{"type":"object","properties":{"bytes":{"type":"integer","minimum":0}}}`)},
	{Name: "read_file", Description: "Reads the file at `text` (attack test: it must get only what allowed_paths grants).", InputSchema: anyObject},
	{Name: "list_dir", Description: "Lists the directory at `text`.", InputSchema: anyObject},
	{Name: "write_file", Description: "Creates or truncates the file at `text` and writes `content` to it (attack test: only where allowed_paths grants \"rw:\").", InputSchema: anyObject},
	{Name: "symlink", Description: "Creates a symbolic link at `text` pointing to `to` (attack test: always refused).", InputSchema: anyObject},
	{Name: "rename", Description: "Renames `text` to `to` (attack test: nothing leaves a granted directory).", InputSchema: anyObject},
	{Name: "fetch", Description: "GETs the URL `text` through the host's http_request (attack test: only allowed_hosts).", InputSchema: anyObject},
	{Name: "stdout_flood", Description: "Writes 100000 lines to stdout (the host must keep its log bounded).", InputSchema: anyObject},
	{Name: "flood", Description: "Sends 5000 log messages to the client through notify_logging_message (the host must rate-limit them).", InputSchema: anyObject},
	{Name: "error_flood", Description: "Fails with an Extism error (error_set) `bytes` long (default 16 MiB): plain text, or the ABI's JSON error when `json` is true (the host must cap it).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"bytes":{"type":"integer","minimum":0},"json":{"type":"boolean"}}}`)},
	{Name: "log_flood", Description: "Calls Extism's log_info once with a 1 MiB message that tries to forge a line of the host's log, then 100000 times (the host must keep its log bounded).", InputSchema: anyObject},
	{Name: "getenv", Description: "Returns the environment variable named `text` (attack test: only what env grants).", InputSchema: anyObject},
	{Name: "as_task", Description: "Asks the host to run the call as a task (resultType \"task\") though the tool declares no task support.", InputSchema: anyObject},
	{Name: "task_liar", Description: "Declares task support and asks to run as a task every time, from inside its task too.", InputSchema: anyObject,
		Execution: &abi.ToolExecution{TaskSupport: abi.TaskOptional}},
	{Name: "odd_result_type", Description: "Returns a result whose resultType is one no plugin may set.", InputSchema: anyObject},
	{Name: "task_sometimes", Description: "Declares an execution.taskSupport that does not exist: the host leaves it out.", InputSchema: anyObject,
		Execution: &abi.ToolExecution{TaskSupport: "sometimes"}},
	{Name: "echo", Description: "Returns the text it is given, to show the plugin still works after a fault.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
}

//go:wasmexport mcphost_abi_version
func abiVersion() int32 { return abi.Version }

//go:wasmexport list_tools
func listTools() int32 {
	return output(abi.ListToolsResult{Tools: tools})
}

//go:wasmexport call_tool
func callTool() int32 {
	var in abi.Input
	var p abi.CallToolParams
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		return fail(abi.CodeInvalidParams, "malformed input: "+err.Error())
	}
	if err := json.Unmarshal(in.Request, &p); err != nil {
		return fail(abi.CodeInvalidParams, "malformed request: "+err.Error())
	}
	var args struct {
		Text    string `json:"text"`
		Bytes   *int   `json:"bytes"`
		Content string `json:"content"`
		To      string `json:"to"`
		JSON    bool   `json:"json"`
	}
	if len(p.Arguments) > 0 {
		if err := json.Unmarshal(p.Arguments, &args); err != nil {
			return fail(abi.CodeInvalidParams, "malformed arguments: "+err.Error())
		}
	}
	switch p.Name {
	case "spin":
		if args.Text != "" {
			msg, _ := pdk.AllocateJSON(map[string]any{"level": "info", "data": args.Text})
			hostNotifyLoggingMessage(msg.Offset())
			msg.Free()
		}
		spin()
	case "trap":
		trap()
	case "exit":
		os.Exit(3)
	case "panic":
		panic("faulty: deliberate panic")
	case "garbage":
		pdk.Output([]byte("\x00\xffthis is { not JSON"))
		return 0
	case "as_task", "task_liar":
		return output(abi.CallToolResult{ResultType: abi.ResultTypeTask})
	case "odd_result_type":
		pdk.Output([]byte(`{"content":[{"type":"text","text":"odd"}],"resultType":"banana"}`))
		return 0
	case "stdout":
		os.Stdout.WriteString("faulty: a line on stdout\n")
		os.Stderr.WriteString("faulty: a line on stderr\n")
		return text("wrote")
	case "alloc":
		alloc()
	case "big":
		n := 8 << 20
		if args.Bytes != nil {
			n = *args.Bytes
		}
		return text(strings.Repeat("x", n))
	case "read_file":
		b, err := os.ReadFile(args.Text)
		if err != nil {
			return output(abi.CallToolResult{IsError: true, Content: []abi.Content{{Type: "text", Text: "read_file: " + err.Error()}}})
		}
		return text(string(b))
	case "list_dir":
		entries, err := os.ReadDir(args.Text)
		if err != nil {
			return output(abi.CallToolResult{IsError: true, Content: []abi.Content{{Type: "text", Text: "list_dir: " + err.Error()}}})
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return text(strings.Join(names, ","))
	case "write_file":
		if err := os.WriteFile(args.Text, []byte(args.Content), 0o644); err != nil {
			return output(abi.CallToolResult{IsError: true, Content: []abi.Content{{Type: "text", Text: "write_file: " + err.Error()}}})
		}
		return text(fmt.Sprintf("wrote %d bytes", len(args.Content)))
	case "symlink":
		if err := os.Symlink(args.To, args.Text); err != nil {
			return output(abi.CallToolResult{IsError: true, Content: []abi.Content{{Type: "text", Text: "symlink: " + err.Error()}}})
		}
		return text("linked")
	case "rename":
		if err := os.Rename(args.Text, args.To); err != nil {
			return output(abi.CallToolResult{IsError: true, Content: []abi.Content{{Type: "text", Text: "rename: " + err.Error()}}})
		}
		return text("renamed")
	case "fetch":
		req, _ := pdk.AllocateJSON(map[string]string{"method": "GET", "url": args.Text})
		var resp struct {
			Status int    `json:"status"`
			Body   []byte `json:"body"`
			Error  string `json:"error"`
		}
		if err := pdk.JSONFrom(hostHTTPRequest(req.Offset()), &resp); err != nil || resp.Error != "" {
			return output(abi.CallToolResult{IsError: true, Content: []abi.Content{{Type: "text", Text: "fetch: " + resp.Error}}})
		}
		return text(string(resp.Body))
	case "stdout_flood":
		for i := range 100000 {
			fmt.Println("stdout flood line", i)
		}
		return text("flooded stdout")
	case "flood":
		for i := range 5000 {
			msg, _ := pdk.AllocateJSON(map[string]any{"level": "error", "data": fmt.Sprint("flood ", i)})
			hostNotifyLoggingMessage(msg.Offset())
			msg.Free()
		}
		return text("flooded")
	case "error_flood":
		n := 16 << 20
		if args.Bytes != nil {
			n = *args.Bytes
		}
		if args.JSON {
			return fail(abi.CodeInvalidParams, strings.Repeat("e", n))
		}
		pdk.SetErrorString(strings.Repeat("e", n))
		return 1
	case "log_flood":
		pdk.Log(pdk.LogInfo, "long line\n[ERROR] host: forged by the plugin\n"+strings.Repeat("l", 1<<20))
		for i := range 100000 {
			pdk.Log(pdk.LogInfo, fmt.Sprint("log flood line ", i))
		}
		return text("flooded log")
	case "getenv":
		return text(os.Getenv(args.Text) + "|" + strings.Join(os.Environ(), ","))
	case "echo":
		return text(args.Text)
	}
	return fail(abi.CodeInvalidParams, "unknown tool: "+p.Name)
}

// counter is global so that the loop in spin has an effect the compiler
// must keep.
var counter uint64

func spin() {
	for {
		counter++
	}
}

// trap stores to the last bytes of the 32-bit address space. Go's Wasm
// port uses a 32-bit linear memory that is never that large, so the store
// is an out of bounds memory access: the Wasm engine traps and the call ends
// with an error, without any Go code (defer, recover) running.
func trap() {
	var x byte
	p := unsafe.Pointer(&x)
	far := unsafe.Add(p, int(0xFFFFFFF0-uintptr(p)))
	*(*byte)(far) = 1
	counter += uint64(x)
}

// hoard keeps every chunk alive.
var hoard [][]byte

func alloc() {
	for {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hoard = append(hoard, b)
	}
}

func text(s string) int32 {
	return output(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: s}}})
}

func output(v any) int32 {
	b, err := json.Marshal(v)
	if err != nil {
		return fail(abi.CodeInternalError, err.Error())
	}
	pdk.Output(b)
	return 0
}

func fail(code int, msg string) int32 {
	b, _ := json.Marshal(abi.Error{Code: code, Message: msg})
	pdk.SetErrorString(string(b))
	return 1
}
