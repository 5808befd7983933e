//go:build !wasip1

package sdk

// Outside WASI (the SDK's own tests) there is no Extism host: config comes
// from stubConfig, log messages go to stubLog and what would be passed to a
// host function is recorded in stubCalls.

var (
	stubConfig map[string]string
	stubLog    []string
	stubCalls  []stubCall
)

// stubCall is one call of a host function: its name and JSON payload ("" for
// a function without one).
type stubCall struct {
	fn      string
	payload string
}

func getConfig(key string) (string, bool) {
	v := stubConfig[key]
	return v, v != ""
}

func logMessage(_ LogLevel, msg string) { stubLog = append(stubLog, msg) }

func notifyLoggingMessage(payload []byte) {
	stubCalls = append(stubCalls, stubCall{"notify_logging_message", string(payload)})
}

func notifyProgress(payload []byte) {
	stubCalls = append(stubCalls, stubCall{"notify_progress", string(payload)})
}

func notifyResourceUpdated(payload []byte) {
	stubCalls = append(stubCalls, stubCall{"notify_resource_updated", string(payload)})
}

func notifyListChanged(kind listKind) {
	stubCalls = append(stubCalls, stubCall{"notify_" + string(kind) + "_list_changed", ""})
}

func closeSSEStream(payload []byte) {
	stubCalls = append(stubCalls, stubCall{"close_sse_stream", string(payload)})
}

func httpRequest(payload []byte) []byte {
	stubCalls = append(stubCalls, stubCall{"http_request", string(payload)})
	return []byte(`{"error":"no host outside Wasm"}`)
}
