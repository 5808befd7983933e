package host_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEnvelopeCarriesEachValueOnce: the envelope a plugin parses (ABI.md
// §3, draft 6) holds the request's _meta once, in context._meta, and the
// client's capabilities once, in context.clientCapabilities, on every
// revision. A 2026-07-28 request carries its protocol version, client info
// and capabilities in _meta; the host used to send that _meta twice (in
// request and in context) and the capabilities a third time. The WAT
// plugin's envelope tool returns its input as it received it.
func TestEnvelopeCarriesEachValueOnce(t *testing.T) {
	h := cwatHost(t, "wat")
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, h, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
				Sampling: &mcp.SamplingCapabilities{},
			}}, version)
			params := &mcp.CallToolParams{Name: "envelope", Arguments: map[string]any{"text": "hi"}}
			params.SetProgressToken("tok-9")
			res, err := cs.CallTool(t.Context(), params)
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("envelope = %+v, %v", res, err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			var env struct {
				Request map[string]json.RawMessage `json:"request"`
				Context struct {
					ID                 json.Number    `json:"id"`
					Meta               map[string]any `json:"_meta"`
					ClientCapabilities map[string]any `json:"clientCapabilities"`
				} `json:"context"`
			}
			if err := json.Unmarshal([]byte(text), &env); err != nil {
				t.Fatalf("envelope text is not JSON: %v\n%s", err, text)
			}
			if _, ok := env.Request["_meta"]; ok {
				t.Errorf("request carries _meta; it belongs in context._meta only:\n%s", text)
			}
			if string(env.Request["name"]) != `"envelope"` || string(env.Request["arguments"]) != `{"text":"hi"}` {
				t.Errorf("request = %s, want name and arguments", text)
			}
			if env.Context.Meta["progressToken"] != "tok-9" {
				t.Errorf("context._meta = %v, want the request's progressToken", env.Context.Meta)
			}
			if env.Context.ClientCapabilities["sampling"] == nil {
				t.Errorf("context.clientCapabilities = %v, want sampling", env.Context.ClientCapabilities)
			}
			if env.Context.ID == "" {
				t.Errorf("context.id missing (hyper-mcp's plugins require it):\n%s", text)
			}
			if n := strings.Count(text, "clientCapabilities"); n != 1 {
				t.Errorf("the client capabilities are in the envelope %d times, want once:\n%s", n, text)
			}
			if n := strings.Count(text, "progressToken"); n != 1 {
				t.Errorf("the progress token is in the envelope %d times, want once:\n%s", n, text)
			}
			if version == "2026-07-28" {
				// The rest of a stateless request's _meta stays: the plugin
				// may want to know who is calling.
				if env.Context.Meta[mcp.MetaKeyProtocolVersion] == nil {
					t.Errorf("context._meta = %v, want the request's protocol version kept", env.Context.Meta)
				}
			}
		})
	}
}
