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
// UpdateState does such a read-modify-write without losing any.

// stateRequest is the payload of state_get and state_set.
type stateRequest struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
	// Expect, when set, makes state_set conditional: done only if the
	// key holds this value ("null": nothing).
	Expect json.RawMessage `json:"expect,omitempty"`
}

// stateAnswer is the host's answer to state_get and state_set.
type stateAnswer struct {
	Value   json.RawMessage `json:"value"`
	Error   string          `json:"error"`
	Changed bool            `json:"changed"` // a conditional state_set found another value
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

// maxUpdateTries bounds how many times UpdateState starts again because
// another call changed the value in between.
const maxUpdateTries = 64

// UpdateState changes the value stored under key for the client session
// this call serves, without losing a concurrent call's change: it reads
// the value into a new T (ok reports whether the key held one), calls
// update, and stores what update left in v if the key still holds what
// was read; if another call changed it meanwhile, it starts again with
// the new value (update must not have other effects). An error from
// update is returned and nothing is stored. A T that marshals to null
// deletes the key.
func UpdateState[T any](c *Context, key string, update func(v *T, ok bool) error) error {
	for range maxUpdateTries {
		answer, err := askState("state_get", stateGet, stateRequest{Key: key})
		if err != nil {
			return err
		}
		v := new(T)
		ok := answer.Value != nil
		expect := json.RawMessage("null")
		if ok {
			if err := json.Unmarshal(answer.Value, v); err != nil {
				return fmt.Errorf("state_get %q: %w", key, err)
			}
			expect = answer.Value
		}
		if err := update(v, ok); err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("state_set %q: %w", key, err)
		}
		answer, err = askState("state_set", stateSet, stateRequest{Key: key, Value: b, Expect: expect})
		if err != nil {
			return err
		}
		if !answer.Changed {
			return nil
		}
	}
	return fmt.Errorf("state_set %q: the value kept changing under %d tries", key, maxUpdateTries)
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
