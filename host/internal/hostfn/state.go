package hostfn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/internal/clip"
	"github.com/mcphost/mcphost/host/internal/pluginstate"
)

// State that outlives an instance (abi/ABI.md §7): state_get and
// state_set reach the scope of the plugin and the current request's
// session (Request.StateSession) in the host's store (package
// pluginstate), never another plugin's or another session's.

// stateValue is state_get's answer when the key holds a value.
type stateValue struct {
	Value json.RawMessage `json:"value"`
}

// emptyAnswer is an answer without fields: state_get of an unset key,
// state_set that succeeded.
type emptyAnswer struct{}

// stateGet: {"key": "k"} -> {"value": <JSON>}, {} when the key holds
// nothing, or {"error": "why"}.
func (f *functions) stateGet(ctx context.Context, payload []byte) any {
	fields, err := stateFields(payload, "key")
	if err != nil {
		return f.stateRefused("state_get", err)
	}
	key, err := stateKey(fields)
	if err != nil {
		return f.stateRefused("state_get", err)
	}
	if f.state == nil || f.state.Store == nil {
		return emptyAnswer{}
	}
	v, ok, err := f.state.Store.Get(f.stateScope(ctx), key)
	if err != nil {
		return f.stateRefused("state_get", err)
	}
	if !ok || f.state.KB <= 0 {
		return emptyAnswer{}
	}
	return stateValue{Value: v}
}

// stateSet: {"key": "k", "value": <JSON>} -> {} or {"error": "why"}; a
// value of null, or none, deletes the key. With "expect" (JSON; null: the
// key holds nothing), the set is done only if the key holds that value
// now, else nothing changes and the answer is {"changed": true}: a
// compare-and-set, so that two calls of one session can update a value
// without losing an update.
func (f *functions) stateSet(ctx context.Context, payload []byte) any {
	fields, err := stateFields(payload, "key", "value", "expect")
	if err != nil {
		return f.stateRefused("state_set", err)
	}
	key, err := stateKey(fields)
	if err != nil {
		return f.stateRefused("state_set", err)
	}
	value, err := compactValue(fields, "value")
	if err != nil {
		return f.stateRefused("state_set", err)
	}
	if f.state == nil || f.state.Store == nil {
		return f.stateRefused("state_set", fmt.Errorf("plugin %q has no state store in this host", f.plugin))
	}
	if _, conditional := fields["expect"]; !conditional {
		err = f.state.Store.Set(f.stateScope(ctx), key, value, f.state.KB)
	} else {
		var expect []byte
		if expect, err = compactValue(fields, "expect"); err != nil {
			return f.stateRefused("state_set", err)
		}
		err = f.state.Store.SetIf(f.stateScope(ctx), key, expect, value, f.state.KB)
	}
	if errors.Is(err, pluginstate.ErrChanged) {
		return stateChanged{Changed: true}
	}
	if err != nil {
		return f.stateRefused("state_set", err)
	}
	return emptyAnswer{}
}

// stateChanged is state_set's answer when its "expect" did not hold.
type stateChanged struct {
	Changed bool `json:"changed"`
}

// compactValue is the payload's field name as compact JSON, or nil when
// it is absent or null.
func compactValue(fields map[string]json.RawMessage, name string) ([]byte, error) {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// stateScope is the scope the current call reaches.
func (f *functions) stateScope(ctx context.Context) pluginstate.Scope {
	return pluginstate.Scope{Plugin: f.plugin, Session: requestFrom(ctx).StateSession}
}

// stateRefused logs (at debug: the plugin hears of it in the answer) and
// answers err.
func (f *functions) stateRefused(fn string, err error) any {
	f.log(hclog.Debug, "host function refused", "function", fn, "error", err)
	return errorAnswer{fmt.Sprintf("%s: %v", fn, err)}
}

// stateFields decodes a state payload: a JSON object in UTF-8 whose keys
// are among allowed, spelled exactly (encoding/json would match "KEY" to
// a field "key").
func stateFields(payload []byte, allowed ...string) (map[string]json.RawMessage, error) {
	if !utf8.Valid(payload) {
		return nil, errors.New("payload is not UTF-8")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(payload, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("payload is not a JSON object like {%q: \"…\"}", "key")
	}
	for name := range fields {
		if !slices.Contains(allowed, name) {
			return nil, fmt.Errorf("unknown field %q in the payload (expected %s)", clip.Text(name, 64), strings.Join(allowed, ", "))
		}
	}
	return fields, nil
}

// stateKey returns the payload's key, checked.
func stateKey(fields map[string]json.RawMessage) (string, error) {
	raw, ok := fields["key"]
	if !ok {
		return "", errors.New("key is missing")
	}
	var key string
	if err := json.Unmarshal(raw, &key); err != nil {
		return "", errors.New("key is not a string")
	}
	return key, pluginstate.CheckKey(key)
}
