package host

// Multi-round trips (SEP-2322) for clients before 2026-07-28.
//
// A plugin asks the client for input by returning inputRequests (and an
// opaque requestState) from call_tool, get_prompt or read_resource; it is
// called again with the answers. A 2026-07-28 client makes that retry
// itself. For an older client (a session initialized with 2025-11-25 or
// before, over stdio or stateful HTTP) the server must ask: go-sdk's
// server middleware does, but only once — it asks the first round's
// requests, calls the handler again, and hands whatever comes back to the
// client, so a plugin's second round reached the client as an empty
// success carrying inputRequests and requestState, fields its revision
// does not have. The handlers below ask every round themselves, until the
// plugin completes or maxInputRounds calls, so go-sdk's middleware never
// sees inputRequests from an older session.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host/internal/telemetry"
)

// maxInputRounds is how many times one request of a client before
// 2026-07-28 may call its plugin, each call but the last asking the client
// for input: go-sdk's client allows a 2026-07-28 server as many
// (maxMultiRoundTripRetries). A plugin still asking after that fails the
// request, instead of keeping a user answering forever.
const maxInputRounds = 10

// revisionMultiRoundTrip is the protocol revision whose clients retry a
// multi-round-trip request themselves (SEP-2322).
const revisionMultiRoundTrip = "2026-07-28"

// hostAsks reports whether the host asks the client for a plugin's
// inputRequests itself: the session was initialized with a revision before
// 2026-07-28. This is go-sdk's own test (clientSupportsMultiRoundTrip): a
// session without initialize parameters (stateless) is 2026-07-28.
func hostAsks(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion < revisionMultiRoundTrip
}

// inputError is the host's failure to complete a plugin's multi-round
// trip with a client before 2026-07-28: the client refused or failed to
// answer, or the plugin kept asking.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// rpcError is e as the JSON-RPC error of a prompt or resource request: the
// client's own error code when it answered one, else an internal error.
func (e *inputError) rpcError() *jsonrpc.Error {
	code := int64(jsonrpc.CodeInternalError)
	var client *jsonrpc.Error
	if errors.As(e.err, &client) {
		code = client.Code
	}
	return &jsonrpc.Error{Code: code, Message: e.Error()}
}

// inputRounds serves req, from a session hostAsks for, round after round:
// it calls round (one call of the plugin); while the result holds
// inputRequests (read by input, with its requestState), it asks the client
// for them all and calls round again with the answers and that state
// (retry makes the params of the next round). It returns the first
// complete result or error of round, or an *inputError naming what, the
// round and the cause when the client's input could not be had or
// maxInputRounds calls did not complete. Each round routes, calls and
// releases the plugin on its own, so no instance or generation is held
// while a user answers.
func inputRounds[P mcp.Params, R any](ctx context.Context, what string, req *mcp.ServerRequest[P],
	round func(context.Context, *mcp.ServerRequest[P]) (R, error),
	input func(R) (mcp.InputRequestMap, string),
	retry func(P, mcp.InputResponseMap, string) P,
) (R, error) {
	for n := 1; ; n++ {
		res, err := callRound(ctx, n, req, round)
		if err != nil {
			return res, err
		}
		requests, state := input(res)
		if requests == nil {
			return res, nil
		}
		var zero R
		if len(requests) == 0 {
			// SEP-2322's load shedding: "retry later", which only a
			// 2026-07-28 client knows how to do.
			return zero, &inputError{fmt.Errorf("%s is busy (its plugin asked for no input, which means: try again later)", what)}
		}
		if n == maxInputRounds {
			return zero, &inputError{fmt.Errorf("%s still asked the client for input after %d rounds (at most %d calls of its plugin for one request)", what, n-1, maxInputRounds)}
		}
		answers, err := askClient(ctx, req.Session, requests)
		if err != nil {
			if ctx.Err() != nil {
				return zero, ctx.Err()
			}
			return zero, &inputError{fmt.Errorf("%s: could not get the client's input (round %d): %w", what, n, err)}
		}
		req = &mcp.ServerRequest[P]{Session: req.Session, Params: retry(req.Params, answers, state), Extra: req.Extra}
	}
}

// callRound calls round; from the second round on, in a span of its own
// ("round N", mcphost.round), so that a trace shows which call of the
// plugin came after which answers. The first round, which every request
// has, gets none.
func callRound[P mcp.Params, R any](ctx context.Context, n int, req *mcp.ServerRequest[P],
	round func(context.Context, *mcp.ServerRequest[P]) (R, error)) (R, error) {
	if n == 1 {
		return round(ctx, req)
	}
	ctx, span := telemetry.Start(ctx, "round "+strconv.Itoa(n), trace.WithAttributes(telemetry.Round.Int(n)))
	defer span.End()
	res, err := round(ctx, req)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return res, err
}

// askClient sends each of a round's input requests to the client, all at
// once as go-sdk's own middleware does, and returns the answers by key.
// The first failure (by key) is the error; it cancels the other requests.
func askClient(ctx context.Context, ss *mcp.ServerSession, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers = make(mcp.InputResponseMap, len(requests))
		errs    = map[string]error{}
	)
	for key, ir := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answer, err := askOne(ctx, ss, ir)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[key] = err
				cancel()
				return
			}
			answers[key] = answer
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		keys := make([]string, 0, len(errs))
		for k := range errs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		// The first cause, not a request another's failure cancelled.
		for _, k := range keys {
			if !errors.Is(errs[k], context.Canceled) {
				return nil, fmt.Errorf("input request %q: %w", k, errs[k])
			}
		}
		return nil, fmt.Errorf("input request %q: %w", keys[0], errs[keys[0]])
	}
	return answers, nil
}

// askOne sends one input request to the client with the request of its
// older revision (elicitation/create, sampling/createMessage, roots/list).
// Each is a CLIENT span named by the method (the server is the client of
// this request).
func askOne(ctx context.Context, ss *mcp.ServerSession, ir mcp.InputRequest) (res mcp.InputResponse, err error) {
	method := inputMethod(ir)
	if method == "" {
		return nil, fmt.Errorf("unknown input request type %T", ir)
	}
	ctx, span := telemetry.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(telemetry.MethodName.String(method)))
	defer func() {
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		return ss.Elicit(ctx, p)
	case *mcp.CreateMessageWithToolsParams:
		return ss.CreateMessageWithTools(ctx, p)
	case *mcp.CreateMessageParams:
		return ss.CreateMessageWithTools(ctx, samplingWithTools(p))
	default: // *mcp.ListRootsParams
		return ss.ListRoots(ctx, ir.(*mcp.ListRootsParams))
	}
}

// inputMethod is the method of the older revision that asks ir, "" for a
// request the host does not know.
func inputMethod(ir mcp.InputRequest) string {
	switch ir.(type) {
	case *mcp.ElicitParams:
		return "elicitation/create"
	case *mcp.CreateMessageWithToolsParams, *mcp.CreateMessageParams:
		return "sampling/createMessage"
	case *mcp.ListRootsParams:
		return "roots/list"
	}
	return ""
}

// samplingWithTools is a sampling request in the shape go-sdk sends and
// decodes answers for (an answer's content may be a list).
func samplingWithTools(p *mcp.CreateMessageParams) *mcp.CreateMessageWithToolsParams {
	msgs := make([]*mcp.SamplingMessageV2, 0, len(p.Messages))
	for _, m := range p.Messages {
		msgs = append(msgs, &mcp.SamplingMessageV2{Content: []mcp.Content{m.Content}, Role: m.Role})
	}
	return &mcp.CreateMessageWithToolsParams{
		Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Messages: msgs,
		Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences,
		SystemPrompt: p.SystemPrompt, Temperature: p.Temperature,
	}
}

// callTool serves tools/call for every tool: one call of the plugin
// (callToolRound), or for a client before 2026-07-28 as many as the
// plugin's input rounds need (inputRounds). Not getting the client's input
// is a tool failure the model sees (isError), as a blocking go-sdk tool's
// would be; a client's error answer (say, its user declined) is in the
// text.
func (h *Host) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if !hostAsks(req.Session) {
		return h.callToolRound(ctx, req)
	}
	res, err := inputRounds(ctx, fmt.Sprintf("tool %q", req.Params.Name), req, h.callToolRound,
		func(r *mcp.CallToolResult) (mcp.InputRequestMap, string) {
			if r == nil {
				return nil, ""
			}
			return r.InputRequests, r.RequestState
		},
		func(p *mcp.CallToolParamsRaw, answers mcp.InputResponseMap, state string) *mcp.CallToolParamsRaw {
			next := *p
			next.InputResponses, next.RequestState = answers, state
			return &next
		})
	if ie := (*inputError)(nil); errors.As(err, &ie) {
		failed := &mcp.CallToolResult{}
		failed.SetError(ie)
		return failed, nil
	}
	if res != nil {
		res.RequestState = "" // complete: nothing of 2026-07-28 for this client
	}
	return res, err
}

// readResource serves resources/read for every resource and template:
// one call of the plugin (readResourceRound), or as many as its input
// rounds need for a client before 2026-07-28.
func (h *Host) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if !hostAsks(req.Session) {
		return h.readResourceRound(ctx, req)
	}
	res, err := inputRounds(ctx, fmt.Sprintf("resource %q", req.Params.URI), req, h.readResourceRound,
		func(r *mcp.ReadResourceResult) (mcp.InputRequestMap, string) {
			if r == nil {
				return nil, ""
			}
			return r.InputRequests, r.RequestState
		},
		func(p *mcp.ReadResourceParams, answers mcp.InputResponseMap, state string) *mcp.ReadResourceParams {
			next := *p
			next.InputResponses, next.RequestState = answers, state
			return &next
		})
	if ie := (*inputError)(nil); errors.As(err, &ie) {
		return nil, ie.rpcError()
	}
	if res != nil {
		res.RequestState = ""
	}
	return res, err
}

// getPrompt serves prompts/get for every prompt: one call of the plugin
// (getPromptRound), or as many as its input rounds need for a client
// before 2026-07-28.
func (h *Host) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	if !hostAsks(req.Session) {
		return h.getPromptRound(ctx, req)
	}
	res, err := inputRounds(ctx, fmt.Sprintf("prompt %q", req.Params.Name), req, h.getPromptRound,
		func(r *mcp.GetPromptResult) (mcp.InputRequestMap, string) {
			if r == nil {
				return nil, ""
			}
			return r.InputRequests, r.RequestState
		},
		func(p *mcp.GetPromptParams, answers mcp.InputResponseMap, state string) *mcp.GetPromptParams {
			next := *p
			next.InputResponses, next.RequestState = answers, state
			return &next
		})
	if ie := (*inputError)(nil); errors.As(err, &ie) {
		return nil, ie.rpcError()
	}
	if res != nil {
		res.RequestState = ""
	}
	return res, err
}
