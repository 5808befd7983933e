package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ToolCalls returns the tool names of the tools/call requests in a
// JSON-RPC body (one message or a batch), decoded as go-sdk decodes it. A
// body it cannot decode, or a tools/call whose params hold "name" twice, is
// an error: what a scope check cannot read it must not let through. The
// host's HTTP tool-scope check (checkToolScopes, in package host) decodes
// with it; there is no other.
func ToolCalls(body []byte) ([]string, error) { return ToolCallsThrough(body, "") }

// ToolCallsThrough is ToolCalls for an endpoint where a call of the tool
// named through (a search profile's call_tool; "" for none) calls another
// tool: for such a call the name returned is the one in its arguments, as
// CallThrough reads them, or through itself when CallThrough cannot read
// them (the call then fails, calling nothing). params.arguments given
// twice is an error, as "name" is.
func ToolCallsThrough(body []byte, through string) ([]string, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	var raws []json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, fmt.Errorf("malformed JSON-RPC batch: %w", err)
		}
	} else {
		raws = []json.RawMessage{body}
	}
	var names []string
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("malformed JSON-RPC message: %w", err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.Method != "tools/call" {
			continue
		}
		fields, err := exactFields(req.Params, "name", "arguments")
		if err != nil {
			return nil, fmt.Errorf("tools/call params: %w", err)
		}
		var name string
		if raw, ok := fields["name"]; ok {
			if err := json.Unmarshal(raw, &name); err != nil {
				return nil, fmt.Errorf("tools/call params: name: %w", err)
			}
		}
		if through != "" && name == through {
			if inner, _, err := CallThrough(fields["arguments"]); err == nil {
				name = inner
			}
		}
		names = append(names, name)
	}
	return names, nil
}

// CallThrough reads the arguments of a search profile's call_tool:
// {"name": the tool to call, "arguments": its arguments (optional)}. Keys
// match exactly, each at most once, and no other key is allowed: the
// host's HTTP scope check and its request path both read the tool's name
// with this one function from the same bytes, so they cannot disagree on
// which tool is called.
func CallThrough(arguments json.RawMessage) (name string, args json.RawMessage, err error) {
	a := bytes.TrimSpace(arguments)
	if len(a) == 0 || bytes.Equal(a, []byte("null")) {
		return "", nil, errors.New(`missing required arguments: ["name"]`)
	}
	fields, err := exactFields(a, "name", "arguments")
	if err != nil {
		return "", nil, err
	}
	for key := range fields {
		if key != "name" && key != "arguments" {
			return "", nil, fmt.Errorf("unexpected argument %q (call_tool takes name and arguments)", key)
		}
	}
	raw, ok := fields["name"]
	if !ok {
		return "", nil, errors.New(`missing required arguments: ["name"]`)
	}
	if err := json.Unmarshal(raw, &name); err != nil || name == "" {
		return "", nil, fmt.Errorf("argument \"name\" must be a tool's name (a non-empty string), not %s", clipJSON(raw))
	}
	return name, fields["arguments"], nil
}

// clipJSON shows at most 64 bytes of a JSON value in an error.
func clipJSON(raw json.RawMessage) string {
	if len(raw) > 64 {
		return string(raw[:64]) + "…"
	}
	return string(raw)
}

// exactFields reads a JSON object's members (an absent or null object has
// none), matching keys exactly (go-sdk decodes case-sensitively;
// encoding/json into a struct would not) and refusing a duplicate of any
// key in unique, whose meaning decoders disagree on.
func exactFields(obj json.RawMessage, unique ...string) (map[string]json.RawMessage, error) {
	p := bytes.TrimSpace(obj)
	fields := map[string]json.RawMessage{}
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return fields, nil
	}
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("read key: %w", err)
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("read %q: %w", key, err)
		}
		if _, seen := fields[key]; seen && slices.Contains(unique, key) {
			return nil, fmt.Errorf("%q given twice", key)
		}
		fields[key] = value
	}
	return fields, nil
}
