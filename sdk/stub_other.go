//go:build !wasip1

package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

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

// stubState is the state outside WASI: one scope, as the host keeps for
// one session, with the host's key rule.
var stubState = map[string]json.RawMessage{}

func stateGet(payload []byte) []byte {
	stubCalls = append(stubCalls, stubCall{"state_get", string(payload)})
	var req stateRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		return stubError("state_get", err)
	}
	if err := stubKey(req.Key); err != nil {
		return stubError("state_get", err)
	}
	v, ok := stubState[req.Key]
	if !ok {
		return []byte(`{}`)
	}
	b, _ := json.Marshal(stateAnswer{Value: v})
	return b
}

func stateSet(payload []byte) []byte {
	stubCalls = append(stubCalls, stubCall{"state_set", string(payload)})
	var req stateRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		return stubError("state_set", err)
	}
	if err := stubKey(req.Key); err != nil {
		return stubError("state_set", err)
	}
	if req.Expect != nil {
		cur, ok := stubState[req.Key]
		if string(req.Expect) == "null" && ok || string(req.Expect) != "null" && (!ok || compactJSON(cur) != compactJSON(req.Expect)) {
			return []byte(`{"changed":true}`)
		}
	}
	if req.Value == nil || string(req.Value) == "null" {
		delete(stubState, req.Key)
	} else {
		stubState[req.Key] = req.Value
	}
	return []byte(`{}`)
}

// stubKey is the host's rule for a key.
func stubKey(key string) error {
	if key == "" || len(key) > 256 || !utf8.ValidString(key) {
		return fmt.Errorf("key must be 1 to 256 bytes of UTF-8 (got %d bytes)", len(key))
	}
	return nil
}

func stubError(fn string, err error) []byte {
	b, _ := json.Marshal(map[string]string{"error": fn + ": " + err.Error()})
	return b
}

// compactJSON is b without insignificant space, as the host compares
// values (b as it is when it is not JSON).
func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}
