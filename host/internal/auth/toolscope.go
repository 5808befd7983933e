package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ToolCalls returns the tool names of the tools/call requests in a
// JSON-RPC body (one message or a batch), decoded as go-sdk decodes it. A
// body it cannot decode, or a tools/call whose params hold "name" twice, is
// an error: what a scope check cannot read it must not let through. The
// host's HTTP tool-scope check (checkToolScopes, in package host) decodes
// with it; there is no other.
func ToolCalls(body []byte) ([]string, error) {
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
		name, err := paramName(req.Params)
		if err != nil {
			return nil, fmt.Errorf("tools/call params: %w", err)
		}
		names = append(names, name)
	}
	return names, nil
}

// paramName returns params.name, matching the key exactly (go-sdk decodes
// case-sensitively; encoding/json into a struct would not) and refusing a
// duplicate key, whose meaning decoders disagree on.
func paramName(params json.RawMessage) (string, error) {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", errors.New("not an object")
	}
	var name string
	seen := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("read key: %w", err)
		}
		key, _ := tok.(string)
		if key != "name" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", fmt.Errorf("read %q: %w", key, err)
			}
			continue
		}
		if seen {
			return "", errors.New(`"name" given twice`)
		}
		seen = true
		if err := dec.Decode(&name); err != nil {
			return "", fmt.Errorf("name: %w", err)
		}
	}
	return name, nil
}
