package host

// Traces and OpenTelemetry metrics of MCP requests (docs/config.md,
// "Traces"): one SERVER span per request, named and attributed by the
// OpenTelemetry semantic conventions for MCP, whose parent is the trace
// context the client sent in params._meta (SEP-414) or, over HTTP, in its
// traceparent header; and mcp.server.operation.duration and
// mcp.server.session.duration. The spans inside the host (activation, the
// Wasm call, host functions) are children of it (host/internal/plugin,
// hostfn).

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host/internal/telemetry"
)

// requestIDHeader carries a request's JSON-RPC id from the HTTP layer,
// which reads the body, to the span (go-sdk does not hand the id to
// middleware). A client's own value is removed first.
const requestIDHeader = "Mcphost-Jsonrpc-Id"

// stdioHeader marks the RequestExtra that tracedStdio gives a request read
// from stdio, which has no HTTP header of its own: its transport is
// "pipe". H3 removes a client's own value over HTTP.
const stdioHeader = "Mcphost-Stdio"

// tracedStdio wraps the stdio transport while tracing, so that a request
// read from stdio carries its JSON-RPC id to its span as one over HTTP
// does (go-sdk hands middleware the request's Extra, never its id).
type tracedStdio struct{ mcp.Transport }

// Connect implements mcp.Transport.
func (t tracedStdio) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return requestIDConnection{c}, nil
}

// requestIDConnection puts each call's JSON-RPC id into its Extra.
type requestIDConnection struct{ mcp.Connection }

// Read implements mcp.Connection.
func (c requestIDConnection) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Extra == nil {
		header := http.Header{stdioHeader: {"1"}}
		if id := requestIDString(req.ID); id != "" {
			header.Set(requestIDHeader, id)
		}
		req.Extra = &mcp.RequestExtra{Header: header}
	}
	return msg, err
}

// requestIDString is a JSON-RPC id as a span attribute: the string, or
// the number in decimal; "" for an id over maxRequestIDLength.
func requestIDString(id jsonrpc.ID) string {
	var s string
	switch v := id.Raw().(type) {
	case string:
		s = v
	case int64:
		s = strconv.FormatInt(v, 10)
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return ""
	}
	if len(s) > maxRequestIDLength {
		return ""
	}
	return s
}

// networkTransport is a request's network.transport: "pipe" for stdio,
// "tcp" for HTTP.
func networkTransport(extra *mcp.RequestExtra) string {
	if extra == nil || extra.Header == nil || extra.Header.Get(stdioHeader) != "" {
		return "pipe"
	}
	return "tcp"
}

// traceRequests is the first of the host's middleware (M0): the span and
// the duration of every request.
func (h *Host) traceRequests(next mcp.MethodHandler) mcp.MethodHandler {
	tel := h.telemetry
	if !tel.Active() {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/initialized" {
			h.timeSession(req)
		}
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		began := time.Now()
		attrs := requestAttributes(method, req)
		name := method
		if target := requestTarget(req); target != "" && method != "completion/complete" {
			name += " " + target
		}
		ctx = tel.Propagator.Extract(ctx, traceCarrier(req))
		ctx, span := tel.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		res, err := next(ctx, method, req)
		if errType := errorType(res, err); errType != "" {
			attrs = append(attrs, telemetry.ErrorType.String(errType))
			span.SetAttributes(telemetry.ErrorType.String(errType))
			msg := errType
			if err != nil {
				msg = err.Error()
			}
			span.SetStatus(codes.Error, msg)
		}
		if created, ok := res.(*taskResult); ok {
			span.SetAttributes(telemetry.TaskID.String(created.TaskID))
		}
		span.End()
		if tel.Metrics() {
			tel.OperationDuration.Record(ctx, time.Since(began).Seconds(), metric.WithAttributes(attrs...))
		}
		return res, err
	}
}

// requestAttributes are the attributes of a request's span and duration.
func requestAttributes(method string, req mcp.Request) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, telemetry.MethodName.String(method))
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		attrs = append(attrs, telemetry.ToolName.String(r.Params.Name), telemetry.OperationName.String("execute_tool"))
	case *mcp.GetPromptRequest:
		attrs = append(attrs, telemetry.PromptName.String(r.Params.Name))
	case *mcp.ReadResourceRequest:
		attrs = append(attrs, telemetry.ResourceURI.String(r.Params.URI))
	case *mcp.SubscribeRequest:
		attrs = append(attrs, telemetry.ResourceURI.String(r.Params.URI))
	case *mcp.ServerRequest[*taskParams]:
		if r.Params != nil {
			attrs = append(attrs, telemetry.TaskID.String(r.Params.TaskID))
		}
	}
	if v, ok := req.(interface{ ProtocolVersion() string }); ok {
		if pv := v.ProtocolVersion(); pv != "" {
			attrs = append(attrs, telemetry.ProtocolVersion.String(pv))
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
		attrs = append(attrs, telemetry.SessionID.String(ss.ID()))
	}
	extra := req.GetExtra()
	if extra != nil && extra.Header != nil {
		if id := extra.Header.Get(requestIDHeader); id != "" {
			attrs = append(attrs, telemetry.RequestID.String(id))
		}
	}
	return append(attrs, telemetry.Transport.String(networkTransport(extra)))
}

// traceCarrier is where a request's trace context is: its params._meta
// when that holds a traceparent (SEP-414), else its HTTP headers.
func traceCarrier(req mcp.Request) propagation.TextMapCarrier {
	if p := req.GetParams(); p != nil {
		if meta := p.GetMeta(); meta != nil {
			if tp, ok := meta["traceparent"].(string); ok && tp != "" {
				c := propagation.MapCarrier{"traceparent": tp}
				for _, k := range []string{"tracestate", "baggage"} {
					if v, ok := meta[k].(string); ok {
						c[k] = v
					}
				}
				return c
			}
		}
	}
	if extra := req.GetExtra(); networkTransport(extra) == "tcp" {
		return propagation.HeaderCarrier(extra.Header)
	}
	return propagation.MapCarrier{}
}

// errorType is the error.type of a request's outcome: the JSON-RPC error
// code, "tool_error" for a tool result with isError, "" for success.
func errorType(res mcp.Result, err error) string {
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			return strconv.FormatInt(rpc.Code, 10)
		}
		if errors.Is(err, context.Canceled) {
			return "cancelled"
		}
		return "_OTHER"
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
		return "tool_error"
	}
	return ""
}

// timeSession records mcp.server.session.duration when the session
// initialized by req ends; the goroutine ends with the session.
func (h *Host) timeSession(req mcp.Request) {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok {
		return
	}
	began := time.Now()
	transport := networkTransport(req.GetExtra())
	go func() {
		_ = ss.Wait()
		h.telemetry.SessionDuration.Record(context.Background(), time.Since(began).Seconds(),
			metric.WithAttributes(telemetry.Transport.String(transport)))
	}()
}

// markRequestID puts the JSON-RPC id of a single request's body into
// requestIDHeader, for its span; only when tracing, since it decodes the
// body once more.
func (h *Host) markRequestID(r *http.Request, body []byte) {
	if !h.telemetry.Tracing() {
		return
	}
	if id := topLevelID(body); id != "" {
		r.Header.Set(requestIDHeader, id)
	}
}

// maxRequestIDLength bounds the jsonrpc.request.id a span carries: a
// longer id (a client may send a megabyte of string) is left out.
const maxRequestIDLength = 256

// topLevelID returns the "id" member of a JSON-RPC message, "" when it has
// none, when it is null or longer than maxRequestIDLength, or when the
// message is not well-formed up to it. It scans without decoding and stops
// at the id, so the params that follow it (clients put the id first) are
// only skipped when they come before it; go-sdk decodes and checks the
// whole message afterwards.
func topLevelID(body []byte) string {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return ""
	}
	i++
	for {
		i = skipSpace(body, i)
		if i >= len(body) || body[i] != '"' {
			return ""
		}
		keyEnd := skipString(body, i)
		if keyEnd < 0 {
			return ""
		}
		key := body[i+1 : keyEnd-1]
		i = skipSpace(body, keyEnd)
		if i >= len(body) || body[i] != ':' {
			return ""
		}
		i = skipSpace(body, i+1)
		valueEnd := skipValue(body, i)
		if valueEnd < 0 {
			return ""
		}
		if string(key) == "id" {
			v := body[i:valueEnd]
			switch {
			case len(v) > maxRequestIDLength || string(v) == "null":
				return ""
			case v[0] == '"':
				if s, err := strconv.Unquote(string(v)); err == nil {
					return s
				}
				return ""
			}
			return string(v)
		}
		i = skipSpace(body, valueEnd)
		if i >= len(body) || body[i] != ',' {
			return ""
		}
		i++
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the JSON string that starts at
// b[i] (a '"'), or -1 when it does not end.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index just past the JSON value that starts at
// b[i], or -1 when it does not end. Objects and arrays are skipped by
// counting brackets outside strings (at most 1,000 deep); scalars end at
// the next delimiter.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				if depth++; depth > 1000 {
					return -1
				}
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	if i == start {
		return -1
	}
	return i
}
