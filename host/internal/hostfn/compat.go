package hostfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The host functions below exist so that plugins written for hyper-mcp
// load and run unchanged: a Wasm import the host lacks would fail
// instantiation. mcphost's own plugins ask the client the multi-round-trip
// way (ABI.md §8) and never block inside a call; these block, bounded by
// the plugin's call deadline.

// asking defines a host function (i64 offset of a JSON block) -> i64
// offset of the JSON answer, or 0 when there is none (the plugin's PDK then
// fails to decode it and reports an error).
func (f *functions) asking(name string, handle func(ctx context.Context, payload []byte) (any, error)) extism.HostFunction {
	return extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		payload, err := f.readPayload(p, stack[0])
		if err == nil {
			var answer any
			if answer, err = handle(ctx, payload); err == nil {
				stack[0] = f.writeAnswer(p, name, answer)
				return
			}
		}
		f.log(hclog.Warn, "host function refused", "function", name, "error", err)
		stack[0] = 0
	}, []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
}

// answering defines a host function (i64 JSON) -> i64 JSON that always
// answers, errors included.
func (f *functions) answering(name string, handle func(ctx context.Context, payload []byte) any) extism.HostFunction {
	return extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		payload, err := f.readPayload(p, stack[0])
		if err != nil {
			stack[0] = f.writeAnswer(p, name, errorAnswer{err.Error()})
			return
		}
		stack[0] = f.writeAnswer(p, name, handle(ctx, payload))
	}, []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
}

// askingNoPayload defines a host function () -> i64 offset of the answer.
func (f *functions) askingNoPayload(name string, handle func(ctx context.Context) (any, error)) extism.HostFunction {
	return extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		answer, err := handle(ctx)
		if err != nil {
			f.log(hclog.Warn, "host function refused", "function", name, "error", err)
			stack[0] = 0
			return
		}
		stack[0] = f.writeAnswer(p, name, answer)
	}, nil, []extism.ValueType{extism.ValueTypeI64})
}

func (f *functions) readPayload(p *extism.CurrentPlugin, offset uint64) ([]byte, error) {
	n, err := p.Length(offset)
	if err != nil {
		return nil, err
	}
	if n > maxPayloadBytes {
		return nil, fmt.Errorf("payload of %d bytes exceeds %d", n, maxPayloadBytes)
	}
	return p.ReadBytes(offset)
}

func (f *functions) writeAnswer(p *extism.CurrentPlugin, name string, answer any) uint64 {
	b, err := json.Marshal(answer)
	if err == nil {
		var offset uint64
		if offset, err = p.WriteBytes(b); err == nil {
			return offset
		}
	}
	f.log(hclog.Warn, "host function could not answer", "function", name, "error", err)
	return 0
}

// session returns the client session of the current request, or an error
// saying why there is none.
func (f *functions) session(ctx context.Context, what string) (*mcp.ServerSession, error) {
	if err := f.mayReachClient(what); err != nil {
		return nil, err
	}
	if s := requestFrom(ctx).Session; s != nil {
		return s, nil
	}
	return nil, errors.New("not serving a client request (called at load time?)")
}

// createMessage: hyper-mcp's blocking sampling request (MCP
// CreateMessageRequest params) -> CreateMessageResult.
func (f *functions) createMessage(ctx context.Context, payload []byte) (any, error) {
	ss, err := f.session(ctx, "create_message")
	if err != nil {
		return nil, err
	}
	var params mcp.CreateMessageParams
	if err := decodePayload(payload, &params); err != nil {
		return nil, err
	}
	if err := mayAsk(ctx, &params); err != nil {
		return nil, err
	}
	return ss.CreateMessage(ctx, &params)
}

// createElicitation: hyper-mcp's blocking elicitation (MCP ElicitRequest
// params, plus an optional timeout that the call's deadline supersedes) ->
// ElicitResult.
func (f *functions) createElicitation(ctx context.Context, payload []byte) (any, error) {
	ss, err := f.session(ctx, "create_elicitation")
	if err != nil {
		return nil, err
	}
	var params mcp.ElicitParams
	if err := decodePayload(payload, &params); err != nil {
		return nil, err
	}
	if err := mayAsk(ctx, &params); err != nil {
		return nil, err
	}
	return ss.Elicit(ctx, &params)
}

// listRoots: hyper-mcp's blocking roots/list -> ListRootsResult.
func (f *functions) listRoots(ctx context.Context) (any, error) {
	ss, err := f.session(ctx, "list_roots")
	if err != nil {
		return nil, err
	}
	if err := mayAsk(ctx, &mcp.ListRootsParams{}); err != nil {
		return nil, err
	}
	return ss.ListRoots(ctx, &mcp.ListRootsParams{})
}

// refuseSecret answers hyper-mcp's secret lookups: mcphost grants a plugin
// no token or keyring secret; values a plugin needs come from its config.
func (f *functions) refuseSecret(name string) func(context.Context, []byte) (any, error) {
	return func(context.Context, []byte) (any, error) {
		return nil, fmt.Errorf("%s is not granted to plugin %q: pass values through its config in mcphost.toml", name, f.plugin)
	}
}

// urlElicitationCompleted: {"elicitationId": "…"} tells the client that an
// out-of-band (URL mode) elicitation finished.
func (f *functions) urlElicitationCompleted(ctx context.Context, payload []byte) error {
	ss, err := f.session(ctx, "notify_url_elicitation_completed")
	if err != nil {
		return err
	}
	var params mcp.ElicitationCompleteParams
	if err := decodePayload(payload, &params); err != nil {
		return err
	}
	return ss.NotifyElicitationComplete(ctx, &params)
}

// Capabilities a client declares that the host's requests to it need.
const (
	CapSampling      = "sampling"
	CapSamplingTools = "sampling.tools"
	CapElicitation   = "elicitation"
	CapElicitURL     = "elicitation.url"
	CapElicitForm    = "elicitation.form"
	CapRoots         = "roots"
)

// MissingCapability returns the client capability that asking the client
// for ir needs and caps (what the client declared) lacks, or "" when the
// client may be asked. The specification forbids a server to send a
// client a request of a capability it did not declare.
func MissingCapability(caps *mcp.ClientCapabilities, ir mcp.InputRequest) string {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	switch p := ir.(type) {
	case *mcp.CreateMessageParams:
		if caps.Sampling == nil {
			return CapSampling
		}
	case *mcp.CreateMessageWithToolsParams:
		if caps.Sampling == nil {
			return CapSampling
		}
		if len(p.Tools) > 0 && caps.Sampling.Tools == nil {
			return CapSamplingTools
		}
	case *mcp.ElicitParams:
		e := caps.Elicitation
		switch {
		case e == nil:
			return CapElicitation
		case p.Mode == "url" && e.URL == nil:
			return CapElicitURL
		// A client declaring neither mode supports forms (2025-06-18).
		case p.Mode != "url" && e.Form == nil && e.URL != nil:
			return CapElicitForm
		}
	case *mcp.ListRootsParams:
		if caps.RootsV2 == nil {
			return CapRoots
		}
	}
	return ""
}

// mayAsk returns an error when the client of the current request did not
// declare the capability asking it for ir needs.
func mayAsk(ctx context.Context, ir mcp.InputRequest) error {
	if missing := MissingCapability(requestFrom(ctx).Capabilities, ir); missing != "" {
		return fmt.Errorf("the client did not declare the %q capability: it may not be asked", missing)
	}
	return nil
}
