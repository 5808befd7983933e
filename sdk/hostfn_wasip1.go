package sdk

import "github.com/extism/go-pdk"

// mcphost's host functions (module "extism:host/user"). The host provides
// all of them to every plugin, so importing them cannot make a plugin fail
// to load. Each payload is a JSON block in Extism's kernel memory, passed by
// its offset; the host reads it during the call, so the block is freed as
// soon as the call returns.

//go:wasmimport extism:host/user notify_logging_message
func hostNotifyLoggingMessage(offset uint64)

//go:wasmimport extism:host/user notify_progress
func hostNotifyProgress(offset uint64)

//go:wasmimport extism:host/user notify_resource_updated
func hostNotifyResourceUpdated(offset uint64)

//go:wasmimport extism:host/user notify_tool_list_changed
func hostNotifyToolListChanged()

//go:wasmimport extism:host/user notify_resource_list_changed
func hostNotifyResourceListChanged()

//go:wasmimport extism:host/user notify_prompt_list_changed
func hostNotifyPromptListChanged()

//go:wasmimport extism:host/user close_sse_stream
func hostCloseSSEStream(offset uint64)

// withPayload copies payload into kernel memory and calls f with its offset.
func withPayload(f func(offset uint64), payload []byte) {
	mem := pdk.AllocateBytes(payload)
	defer mem.Free()
	f(mem.Offset())
}

func notifyLoggingMessage(payload []byte) { withPayload(hostNotifyLoggingMessage, payload) }

func notifyProgress(payload []byte) { withPayload(hostNotifyProgress, payload) }

func notifyResourceUpdated(payload []byte) { withPayload(hostNotifyResourceUpdated, payload) }

func notifyListChanged(kind listKind) {
	switch kind {
	case toolList:
		hostNotifyToolListChanged()
	case resourceList:
		hostNotifyResourceListChanged()
	case promptList:
		hostNotifyPromptListChanged()
	}
}

func closeSSEStream(payload []byte) { withPayload(hostCloseSSEStream, payload) }

//go:wasmimport extism:host/user http_request
func hostHTTPRequest(offset uint64) uint64

func httpRequest(payload []byte) []byte { return answering(hostHTTPRequest, payload) }

//go:wasmimport extism:host/user state_get
func hostStateGet(offset uint64) uint64

//go:wasmimport extism:host/user state_set
func hostStateSet(offset uint64) uint64

func stateGet(payload []byte) []byte { return answering(hostStateGet, payload) }

func stateSet(payload []byte) []byte { return answering(hostStateSet, payload) }

// answering copies payload into kernel memory, calls the answering host
// function f with its offset and returns the answer (nil for none).
func answering(f func(offset uint64) uint64, payload []byte) []byte {
	mem := pdk.AllocateBytes(payload)
	defer mem.Free()
	offset := f(mem.Offset())
	if offset == 0 {
		return nil
	}
	answer := pdk.FindMemory(offset)
	defer answer.Free()
	return answer.ReadBytes()
}
