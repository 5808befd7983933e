package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RequireToolScopes returns middleware, to sit inside [ResourceServer.Middleware],
// that refuses a tools/call for a tool whose scopes the token lacks before
// the call reaches go-sdk: HTTP 403 with WWW-Authenticate: Bearer
// error="insufficient_scope", scope="<server scopes and the tool's>",
// resource_metadata="…". lookup gives the scopes a tool needs (nil or
// empty: none); it is called with the name exactly as go-sdk will see it.
//
// It reads a POST body whole, up to maxBody bytes (<= 0: go-sdk's
// mcp.DefaultMaxRequestBodyBytes; a larger body gets 413, as go-sdk would
// answer), decodes it with go-sdk's own JSON-RPC decoder, and hands next
// the same bytes. Every message of a JSON-RPC batch is checked, and one
// refused call refuses the whole batch. A body that cannot be decoded, or a
// tools/call whose params hold "name" twice, gets 400 rather than passing
// unchecked: what this check cannot read it does not let through. Other
// methods and requests pass untouched.
func (s *ResourceServer) RequireToolScopes(lookup func(toolName string) []string, maxBody int64) func(http.Handler) http.Handler {
	if maxBody <= 0 {
		maxBody = mcp.DefaultMaxRequestBodyBytes
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			r.Body.Close()
			if err != nil {
				http.Error(w, "Bad Request: read body: "+err.Error(), http.StatusBadRequest)
				return
			}
			if int64(len(body)) > maxBody {
				http.Error(w, fmt.Sprintf("Request Entity Too Large: body exceeds %d bytes", maxBody), http.StatusRequestEntityTooLarge)
				return
			}
			names, err := ToolCalls(body)
			if err != nil {
				http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
				return
			}
			if len(names) > 0 {
				info := mcpauth.TokenInfoFromContext(r.Context())
				if info == nil {
					s.Unauthorized(w)
					return
				}
				for _, name := range names {
					if required := lookup(name); !HasScopes(info, required) {
						s.logger.Debug("tools/call refused: insufficient scope", "tool", name, "subject", Subject(info), "required", required)
						s.InsufficientScope(w, required, "tool "+name+" needs more scope")
						return
					}
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			next.ServeHTTP(w, r)
		})
	}
}

// ToolCalls returns the tool names of the tools/call requests in a
// JSON-RPC body (one message or a batch), decoded as go-sdk decodes it. A
// body it cannot decode, or a tools/call whose params hold "name" twice, is
// an error: what a scope check cannot read it must not let through.
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
