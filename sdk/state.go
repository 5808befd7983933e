package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
)

// State that outlives an instance. The host runs a plugin's calls on
// pooled instances that it discards at will (a trap, an idle release, a
// reload), and the calls of one client session land on any of them: a
// global variable is not where per-client state can live. The host keeps
// it instead (ABI.md §7, "State that outlives an instance"): JSON values
// under string keys, in one scope per plugin and client session — a stdio
// connection, or a stateful HTTP session; stateless (2026-07-28) requests
// share one scope. It lives in the host's memory, is dropped when the
// session ends, and is bounded by the plugin's state_kb (keys and values,
// default 256 KiB) and the host's max_state_mb.
//
// Each State, SetState and DeleteState is atomic, but two calls of one
// session may run at once: a read followed by a write (a counter, a list
// appended to) can interleave with another call's and lose its update.

// stateRequest is the payload of state_get and state_set.
type stateRequest struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
}

// stateAnswer is the host's answer to state_get and state_set.
type stateAnswer struct {
	Value json.RawMessage `json:"value"`
	Error string          `json:"error"`
}

// State reads the value stored under key for the client session this call
// serves into v (as json.Unmarshal does). It returns false, and leaves v
// alone, when the key holds nothing.
func (c *Context) State(key string, v any) (bool, error) {
	answer, err := askState("state_get", stateGet, stateRequest{Key: key})
	if err != nil || answer.Value == nil {
		return false, err
	}
	if err := json.Unmarshal(answer.Value, v); err != nil {
		return false, fmt.Errorf("state_get %q: %w", key, err)
	}
	return true, nil
}

// SetState stores v, marshalled to JSON, under key for the client session
// this call serves. It fails with the host's reason when the key is not 1
// to 256 bytes of UTF-8, or the value would take the session's state past
// the plugin's state_kb or the host's past max_state_mb, or the plugin's
// state is off (state_kb = 0). A v that marshals to null deletes the key.
func (c *Context) SetState(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state_set %q: %w", key, err)
	}
	_, err = askState("state_set", stateSet, stateRequest{Key: key, Value: b})
	return err
}

// DeleteState deletes the value under key for the client session this call
// serves (nothing happens when there is none).
func (c *Context) DeleteState(key string) error {
	_, err := askState("state_set", stateSet, stateRequest{Key: key})
	return err
}

// askState sends req to the host function fn (named name) and decodes its
// answer.
func askState(name string, fn func([]byte) []byte, req stateRequest) (*stateAnswer, error) {
	payload, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b := fn(payload)
	if len(b) == 0 {
		return nil, errors.New(name + ": no answer from the host")
	}
	var answer stateAnswer
	if err := json.Unmarshal(b, &answer); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if answer.Error != "" {
		return nil, errors.New(answer.Error) // the host's error names the function
	}
	return &answer, nil
}
