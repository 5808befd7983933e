package host

// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663): a tool
// call that a plugin asks to run as a task is answered at once with the
// task (CreateTaskResult), runs on under its plugin's task_timeout, and is
// read, answered (input_required) and cancelled with tasks/get,
// tasks/update and tasks/cancel, from this replica or any other sharing the
// task store ([server.tasks] store).
//
// Who decides: a tool declares that it may run as a task
// (execution.taskSupport in its listing, ABI.md §15); when the client
// declared the extension, the plugin's synchronous call says whether this
// call becomes a task (resultType "task"), after any multi-round trip it
// needs first. The host then creates the task, answers the client, and
// calls the plugin again inside the task. Each later round of a task
// (after tasks/update answered what it asked) is a new call, run by the
// replica that received the last answer.
//
// A task's run belongs to the replica that runs it (Task.Owner), which
// renews a lease on it while it runs: a working task whose lease lapsed
// lost its replica, and whoever reads it next marks it failed. A task
// ends failed, never stuck, when its run fails, its plugin is reloaded
// or removed, the host shuts down, or its replica dies.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/audit"
	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/plugin"
	"github.com/mcphost/mcphost/host/internal/tasks"
	"github.com/mcphost/mcphost/host/internal/telemetry"
)

// tasksExtension is the extension's identifier in capabilities.
const tasksExtension = "io.modelcontextprotocol/tasks"

// The methods of the extension.
const (
	methodTasksGet    = "tasks/get"
	methodTasksUpdate = "tasks/update"
	methodTasksCancel = "tasks/cancel"
)

// codeMissingClientCapability is SEP-2575's MissingRequiredClientCapability.
const codeMissingClientCapability = -32021

// taskLease is how long a replica's claim on a running task lasts unless
// renewed; it renews every taskLease/3. A replica that dies leaves its
// tasks working for at most this long before a reader fails them.
const taskLease = 3 * time.Second

// Errors that end a task's run, as its failure says.
var (
	errTaskCancelled  = errors.New("cancelled by the client")
	errTaskShutdown   = errors.New("the host shut down while the task ran")
	errPluginReloaded = errors.New("the plugin was reloaded or removed while the task ran; call the tool again")
	errTaskExpired    = errors.New("the task's time to live ran out while it ran")
	errTaskNotRunning = errors.New("the task is not this replica's to settle")
)

// taskRunner runs the tasks of one host and serves the extension's methods.
type taskRunner struct {
	h       *Host
	store   tasks.Store
	replica string // this replica's name in Task.Owner
	ttl     time.Duration
	poll    time.Duration
	max     int
	logger  hclog.Logger

	ctx  context.Context // ends when the host closes
	stop context.CancelFunc
	wg   sync.WaitGroup // the runs and the loops

	mu     sync.Mutex
	runs   map[string]*taskRun // the tasks this replica runs now
	closed bool                // close began: no run starts any more
}

// taskRun is a task's round running here.
type taskRun struct {
	cancel context.CancelCauseFunc
	plugin *loadedPlugin // the generation it runs on (nil while it looks it up)
}

// taskCall is what a task's next round needs (Task.Call).
type taskCall struct {
	// Tool is the tool as clients know it, through Profile (the profile
	// the task was created through; "" for /mcp): its later rounds look
	// the tool up in that profile's view, where it may have another name.
	Tool      string          `json:"tool"`
	Profile   string          `json:"profile,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Meta is the creating request's _meta; Capabilities the client's.
	Meta         map[string]any          `json:"meta,omitempty"`
	Capabilities *mcp.ClientCapabilities `json:"capabilities,omitempty"`
	// Round counts the rounds that asked the client for input; it makes
	// the keys of each round's input requests new (Task.InputRequests).
	Round int `json:"round"`
	// RequestState and Responses go to the next round: the plugin's state
	// and the client's answers by the plugin's keys.
	RequestState string                     `json:"requestState,omitempty"`
	Responses    map[string]json.RawMessage `json:"responses,omitempty"`
	// Keys maps each unanswered input request's key in the task to the
	// plugin's.
	Keys map[string]string `json:"keys,omitempty"`
	// TraceParent is the trace context of the request that created the
	// task: its rounds' spans join that trace (trace.go).
	TraceParent string `json:"traceParent,omitempty"`
}

// newTaskRunner opens the task store of settings; the runner's loops run
// until close.
func newTaskRunner(ctx context.Context, h *Host, settings config.Tasks, logger hclog.Logger) (*taskRunner, error) {
	var store tasks.Store
	switch settings.Store {
	case "", "memory":
		kept := settings.MaxKept
		if kept <= 0 {
			kept = config.DefaultMaxKeptTasks
		}
		store = tasks.NewMemory(kept)
	default:
		s, err := tasks.NewRedis(ctx, settings.Store, tasks.RedisOptions{})
		if err != nil {
			return nil, fmt.Errorf("[server.tasks] store: %w", err)
		}
		store = s
	}
	r := &taskRunner{h: h, store: store, replica: newTaskID(), ttl: settings.TTL, poll: settings.PollInterval, max: settings.MaxRunning,
		logger: logger, runs: map[string]*taskRun{}}
	if r.ttl <= 0 {
		r.ttl = config.DefaultTaskTTL
	}
	if r.poll <= 0 {
		r.poll = config.DefaultTaskPollInterval
	}
	if r.max <= 0 {
		r.max = config.DefaultMaxRunningTasks
	}
	r.ctx, r.stop = context.WithCancel(context.WithoutCancel(ctx))
	events, err := store.Subscribe(r.ctx)
	if err != nil {
		r.stop()
		_ = store.Close()
		return nil, fmt.Errorf("[server.tasks] store: subscribe: %w", err)
	}
	r.wg.Go(func() { r.watch(events) })
	r.wg.Go(r.renewLeases)
	if settings.Store != "" && settings.Store != "memory" {
		// A task whose replica died names it by this id (find).
		hostname, _ := os.Hostname()
		logger.Info("task store shared with other replicas; this replica's id in it", "replica", r.replica, "hostname", hostname, "pid", os.Getpid())
	}
	return r, nil
}

// newTaskID returns 128 random bits, unguessable: a task's id is all a
// client needs to read it when there is no authorization.
func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// running returns how many task rounds run here now.
func (r *taskRunner) running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.runs)
}

// count records a task event in the metrics.
func (r *taskRunner) count(event string) {
	if r.h.metrics != nil {
		r.h.metrics.tasks.WithLabelValues(event).Inc()
	}
}

// close lets the tasks running here finish until ctx ends, then stops
// them (they fail: the host shut down), and closes the store.
func (r *taskRunner) close(ctx context.Context) error {
	for r.running() > 0 && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	r.mu.Lock()
	r.closed = true
	for _, run := range r.runs {
		run.cancel(errTaskShutdown)
	}
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
	return r.store.Close()
}

// retired stops the tasks running on a plugin generation a reload
// replaced or removed: they fail, and the generation can close.
func (r *taskRunner) retired(lp *loadedPlugin) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, run := range r.runs {
		if run.plugin == lp {
			run.cancel(errPluginReloaded)
		}
	}
}

// watch cancels the runs another replica's tasks/cancel (or an expiry)
// ended, as the store tells.
func (r *taskRunner) watch(events <-chan string) {
	for id := range events {
		r.mu.Lock()
		run := r.runs[id]
		r.mu.Unlock()
		if run == nil {
			continue
		}
		if t, err := r.store.Get(r.ctx, id); errors.Is(err, tasks.ErrNotFound) {
			run.cancel(errTaskExpired)
		} else if err == nil && (t.Status.Terminal() || t.CancelRequested) {
			run.cancel(errTaskCancelled)
		}
	}
}

// renewLeases renews this replica's claim on the tasks it runs, and stops
// a run whose task ended meanwhile (a cancellation whose event was lost).
func (r *taskRunner) renewLeases() {
	tick := time.NewTicker(taskLease / 3)
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
		r.mu.Lock()
		ids := make([]string, 0, len(r.runs))
		for id := range r.runs {
			ids = append(ids, id)
		}
		r.mu.Unlock()
		for _, id := range ids {
			_, err := r.store.Update(r.ctx, id, func(t *tasks.Task) error {
				if t.Status.Terminal() || t.CancelRequested || t.Owner != r.replica {
					return errTaskNotRunning
				}
				t.Lease = time.Now().Add(taskLease)
				return nil
			})
			if err == nil || r.ctx.Err() != nil {
				continue
			}
			r.mu.Lock()
			run := r.runs[id]
			r.mu.Unlock()
			switch {
			case run == nil:
			case errors.Is(err, errTaskNotRunning):
				run.cancel(errTaskCancelled)
			case errors.Is(err, tasks.ErrNotFound):
				run.cancel(errTaskExpired)
			default:
				r.logger.Warn("task store: renewing a task's lease failed", "task", id, "error", err)
			}
		}
	}
}

// clientHasTasks reports whether caps declare the extension.
func clientHasTasks(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[tasksExtension]
	return ok
}

// missingTasksError is the error for a client that did not declare the
// extension, what (a method, or a tool that runs only as a task) needs.
func missingTasksError(what string) error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{Code: codeMissingClientCapability,
		Message: fmt.Sprintf("%s needs the client capability %s, which this request does not declare", what, tasksExtension), Data: data}
}

// taskSlotKey keys the slot through which callTool hands the task it
// created to taskMethods.
type taskSlotKey struct{}

// taskSlot is where callTool puts the task it created, which taskMethods
// returns instead of the tool result.
type taskSlot struct{ created *taskResult }

// taskMethods is the last of the host's middleware (M7): it serves the
// extension's methods, and returns a tools/call's task instead of its
// result when the plugin asked to run it as one.
func (h *Host) taskMethods(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodTasksGet, methodTasksUpdate, methodTasksCancel:
			r, ok := req.(*mcp.ServerRequest[*taskParams])
			if !ok || r.Params == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": missing params"}
			}
			if h.tasks == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: method + ": this host runs no tasks"}
			}
			return h.tasks.serve(ctx, method, r)
		case "tools/call":
			if t := targetOf(ctx); t == nil || t.tool.tool.TaskSupport == "" || h.tasks == nil {
				// The tool never runs as a task: no slot on the hot path.
				return next(ctx, method, req)
			}
			slot := &taskSlot{}
			res, err := next(context.WithValue(ctx, taskSlotKey{}, slot), method, req)
			if err == nil && slot.created != nil {
				return slot.created, nil
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// taskResult is a task as the extension shows it: CreateTaskResult
// (resultType "task") or the DetailedTask of tasks/get.
type taskResult struct {
	mcp.ResultBase
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         tasks.Status               `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitempty"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          int64                      `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage            `json:"result,omitempty"`
	Error          json.RawMessage            `json:"error,omitempty"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitempty"`
}

// ackResult is the empty acknowledgement of tasks/update and tasks/cancel.
type ackResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

func newAck() *ackResult { return &ackResult{ResultType: "complete"} }

// registerTaskMethods makes go-sdk accept the extension's methods; the
// host's middleware serves them (taskMethods), so these handlers run only
// if it did not.
func registerTaskMethods(s *mcp.Server) error {
	for _, m := range []string{methodTasksGet, methodTasksUpdate, methodTasksCancel} {
		err := mcp.AddReceivingCustomMethod(s, m, func(context.Context, *mcp.ServerSession, *taskParams) (*ackResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: m + ": not served (the host's task middleware is missing)"}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// show returns t as the extension shows it; create: as CreateTaskResult.
func (r *taskRunner) show(t *tasks.Task, create bool) *taskResult {
	res := &taskResult{ResultType: "complete", TaskID: t.ID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.UpdatedAt.UTC().Format(time.RFC3339Nano),
		TTLMs: t.Expires.Sub(t.CreatedAt).Milliseconds(), PollIntervalMs: t.PollInterval.Milliseconds()}
	if create {
		res.ResultType = "task"
		return res
	}
	switch t.Status {
	case tasks.Completed:
		res.Result = t.Result
	case tasks.Failed:
		res.Error = t.Error
	case tasks.InputRequired:
		res.InputRequests = t.InputRequests
	}
	return res
}

// create makes the task of a tools/call whose plugin asked to run it as
// one, starts its run, and returns it as CreateTaskResult: once it
// returns, tasks/get finds the task from every replica.
func (r *taskRunner) create(ctx context.Context, req *mcp.CallToolRequest) (*taskResult, error) {
	if r.h.draining.Load() {
		// Its run would be stopped with the host: another replica takes it.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("tool %q: this replica is shutting down and starts no task; call again", req.Params.Name)}
	}
	r.mu.Lock()
	running := len(r.runs)
	r.mu.Unlock()
	if running >= r.max {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("tool %q: this host runs %d tasks already ([server.tasks] max_running); try again later", req.Params.Name, running)}
	}
	call := &taskCall{Tool: req.Params.Name, Arguments: req.Params.Arguments, Meta: taskMeta(req.Params.Meta),
		Capabilities: req.ClientCapabilities(), RequestState: req.Params.RequestState}
	call.TraceParent, _ = telemetry.TraceParent(ctx)
	if t := targetOf(ctx); t != nil {
		call.Profile = profileName(t.profile)
	}
	responses, err := rawEach(req.Params.InputResponses)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("tool %q: encode the input responses: %v", req.Params.Name, err)}
	}
	call.Responses = responses
	encoded, err := json.Marshal(call)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("tool %q: encode the task: %v", req.Params.Name, err)}
	}
	now := time.Now()
	t := &tasks.Task{ID: newTaskID(), Status: tasks.Working, CreatedAt: now, UpdatedAt: now, Expires: now.Add(r.ttl),
		PollInterval: r.poll, Principal: principalOf(req), Owner: r.replica, Lease: now.Add(taskLease), Call: encoded}
	if err := r.store.Create(ctx, t); err != nil {
		msg := fmt.Sprintf("tool %q: create the task: %v", req.Params.Name, err)
		if errors.Is(err, tasks.ErrFull) {
			msg += " ([server.tasks] max_kept; tasks are kept until their ttl); try again later"
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	}
	r.start(t.ID, t.Principal, call, t.Expires)
	r.count("created")
	r.logger.Debug("task created", "task", t.ID, "tool", call.Tool)
	return r.show(t, true), nil
}

// taskMeta is the _meta a task's rounds get: the request's, without its
// progress token (a task sends no progress) and the client capabilities
// (kept apart).
func taskMeta(meta mcp.Meta) map[string]any {
	out := map[string]any{}
	for k, v := range meta {
		if k == "progressToken" || k == mcp.MetaKeyClientCapabilities {
			continue
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// principalOf names who made req: the subject of its bearer token, ""
// without authorization.
func principalOf(req mcp.Request) string {
	if info := tokenInfo(req); info != nil {
		return info.UserID
	}
	return ""
}

// start runs a round of the task id, which principal created, here.
func (r *taskRunner) start(id, principal string, call *taskCall, expires time.Time) {
	ctx, cancel := context.WithCancelCause(r.ctx)
	run := &taskRun{cancel: cancel}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		cancel(errTaskShutdown)
		r.settle(ctx, id, nil, rpcErrorJSON(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: errTaskShutdown.Error()}), call)
		return
	}
	r.runs[id] = run
	r.mu.Unlock()
	r.wg.Go(func() {
		defer func() {
			r.mu.Lock()
			delete(r.runs, id)
			r.mu.Unlock()
			cancel(nil)
		}()
		ctx, stopAtExpiry := context.WithDeadlineCause(ctx, expires, errTaskExpired)
		defer stopAtExpiry()
		r.round(ctx, id, principal, call, run)
	})
}

// round calls the plugin for one round of the task id and settles what
// it returns.
func (r *taskRunner) round(ctx context.Context, id, principal string, call *taskCall, run *taskRun) {
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: call.Tool, Arguments: call.Arguments,
		Meta: call.meta(), RequestState: call.RequestState}}
	if len(call.Responses) > 0 {
		b, err := json.Marshal(call.Responses)
		if err == nil {
			err = json.Unmarshal(b, &req.Params.InputResponses)
		}
		if err != nil {
			r.settle(ctx, id, nil, rpcErrorJSON(&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses: " + err.Error()}), call)
			return
		}
	}
	lp, tool, ok := r.h.acquireTool(call.Profile, call.Tool)
	if !ok {
		r.settle(ctx, id, nil, rpcErrorJSON(&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("tool %q is no longer served: %v", call.Tool, errPluginReloaded)}), call)
		return
	}
	r.mu.Lock()
	run.plugin = lp
	r.mu.Unlock()
	timeout := config.TaskTimeoutOf(lp.cfg)
	deadline := time.Now().Add(timeout)
	callCtx := plugin.WithCallTimeout(ctx, timeout)
	if r.h.telemetry.Tracing() {
		// A round is a span of its own in the trace of the request that
		// created the task.
		callCtx = r.h.telemetry.Propagator.Extract(callCtx, propagation.MapCarrier{"traceparent": call.TraceParent})
		var span trace.Span
		callCtx, span = r.h.telemetry.Tracer.Start(callCtx, "tools/call "+call.Tool+" (task round)", trace.WithAttributes(
			telemetry.MethodName.String("tools/call"), telemetry.ToolName.String(call.Tool), telemetry.TaskID.String(id),
			telemetry.OperationName.String("execute_tool"), telemetry.Plugin.String(lp.cfg.Name)))
		defer span.End()
	}
	callCtx = r.h.withRequest(callCtx, nil, nil, call.Capabilities, nil)
	callCtx = bridge.WithTask(callCtx, &abi.TaskContext{ID: id, Deadline: deadline.UTC().Format(time.RFC3339)})
	began := time.Now()
	res, err := bridge.CallTool(callCtx, lp.plugin, tool, req)
	lp.release()
	r.h.recordTaskRound(callCtx, began, lp.cfg.Name, principal, id, call.Profile, req, res, err)
	if cause := context.Cause(ctx); cause != nil {
		// The run was stopped: say why, unless it finished anyway.
		if errors.Is(cause, errTaskCancelled) {
			r.settleCancelled(id)
			return
		}
		r.settle(ctx, id, nil, rpcErrorJSON(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: cause.Error()}), call)
		return
	}
	switch {
	case errors.Is(err, bridge.ErrRunAsTask):
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("plugin %q asked to run tool %q as a task from inside its task", lp.cfg.Name, call.Tool)}
	case err == nil && len(res.InputRequests) > 0:
		if missing := undeclaredInput(res.InputRequests, call.Capabilities); len(missing) > 0 {
			res = &mcp.CallToolResult{}
			res.SetError(fmt.Errorf("tool %q needs to ask the client for %s, which this client did not declare it supports",
				call.Tool, strings.Join(missing, " and ")))
		} else {
			r.awaitInput(ctx, id, call, res)
			return
		}
	}
	if err != nil {
		r.settle(ctx, id, nil, rpcErrorJSON(err), call)
		return
	}
	encoded, merr := json.Marshal(res)
	if merr != nil {
		r.settle(ctx, id, nil, rpcErrorJSON(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "encode the result: " + merr.Error()}), call)
		return
	}
	r.settle(ctx, id, encoded, nil, call)
}

// meta is the _meta of a round's request: the creating request's, with
// the client's capabilities where a 2026-07-28 request carries them.
func (c *taskCall) meta() mcp.Meta {
	m := mcp.Meta{}
	for k, v := range c.Meta {
		m[k] = v
	}
	if c.Capabilities != nil {
		m[mcp.MetaKeyClientCapabilities] = c.Capabilities
	}
	return m
}

// rawEach encodes m, a map go-sdk encodes (InputRequestMap,
// InputResponseMap), as JSON by key.
func rawEach(m any) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// rpcErrorJSON encodes err as the JSON-RPC error object a failed task
// carries.
func rpcErrorJSON(err error) json.RawMessage {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		rpc = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	b, _ := json.Marshal(rpc)
	return b
}

// settle ends the task id as completed (result) or failed (rpcError),
// unless it ended meanwhile (a cancellation) or is no longer this
// replica's.
func (r *taskRunner) settle(ctx context.Context, id string, result, rpcError json.RawMessage, call *taskCall) {
	t, err := r.store.Update(context.WithoutCancel(ctx), id, func(t *tasks.Task) error {
		if t.Status.Terminal() || t.Owner != r.replica {
			return errTaskNotRunning
		}
		if t.CancelRequested {
			t.Status, t.StatusMessage = tasks.Cancelled, errTaskCancelled.Error()
		} else if result != nil {
			t.Status, t.Result = tasks.Completed, result
		} else {
			t.Status, t.Error = tasks.Failed, rpcError
			var e jsonrpc.Error
			if json.Unmarshal(rpcError, &e) == nil {
				t.StatusMessage = e.Message
			}
		}
		t.UpdatedAt, t.Owner, t.Lease, t.InputRequests = time.Now(), "", time.Time{}, nil
		return nil
	})
	if err == nil {
		r.count(string(t.Status))
		r.logger.Debug("task ended", "task", id, "tool", call.Tool, "status", t.Status, "message", t.StatusMessage)
	}
	r.logSettled(id, call, err)
}

// settleCancelled ends the task id as cancelled, unless it ended already.
func (r *taskRunner) settleCancelled(id string) {
	_, err := r.store.Update(r.ctx, id, func(t *tasks.Task) error {
		if t.Status.Terminal() {
			return errTaskNotRunning
		}
		t.Status, t.StatusMessage = tasks.Cancelled, errTaskCancelled.Error()
		t.UpdatedAt, t.Owner, t.Lease, t.InputRequests = time.Now(), "", time.Time{}, nil
		return nil
	})
	if err == nil {
		r.count(string(tasks.Cancelled))
	}
	r.logSettled(id, nil, err)
}

func (r *taskRunner) logSettled(id string, call *taskCall, err error) {
	switch {
	case err == nil, errors.Is(err, errTaskNotRunning):
	case errors.Is(err, tasks.ErrNotFound):
		r.logger.Debug("task ended after its time to live", "task", id)
	default:
		tool := ""
		if call != nil {
			tool = call.Tool
		}
		r.logger.Error("task store: recording the end of a task failed", "task", id, "tool", tool, "error", err)
	}
}

// awaitInput parks the task id until the client answers the input
// requests of res (tasks/update): each gets a key new in the task.
func (r *taskRunner) awaitInput(ctx context.Context, id string, call *taskCall, res *mcp.CallToolResult) {
	next := *call
	next.Round++
	next.RequestState = res.RequestState
	next.Responses = map[string]json.RawMessage{}
	next.Keys = map[string]string{}
	raws, err := rawEach(res.InputRequests)
	if err != nil {
		r.settle(ctx, id, nil, rpcErrorJSON(fmt.Errorf("encode the input requests: %w", err)), call)
		return
	}
	requests := map[string]json.RawMessage{}
	for k, raw := range raws {
		key := "r" + strconv.Itoa(next.Round) + "." + k
		requests[key] = raw
		next.Keys[key] = k
	}
	encoded, err := json.Marshal(&next)
	if err != nil {
		r.settle(ctx, id, nil, rpcErrorJSON(err), call)
		return
	}
	_, err = r.store.Update(context.WithoutCancel(ctx), id, func(t *tasks.Task) error {
		if t.Status.Terminal() || t.Owner != r.replica {
			return errTaskNotRunning
		}
		if t.CancelRequested {
			t.Status, t.StatusMessage = tasks.Cancelled, errTaskCancelled.Error()
			t.UpdatedAt, t.Owner, t.Lease = time.Now(), "", time.Time{}
			return nil
		}
		t.Status, t.StatusMessage, t.InputRequests, t.Call = tasks.InputRequired, "waiting for the client's input", requests, encoded
		t.UpdatedAt, t.Owner, t.Lease = time.Now(), "", time.Time{}
		return nil
	})
	if err == nil {
		r.count(string(tasks.InputRequired))
	}
	r.logSettled(id, call, err)
}

// serve answers tasks/get, tasks/update and tasks/cancel.
func (r *taskRunner) serve(ctx context.Context, method string, req *mcp.ServerRequest[*taskParams]) (mcp.Result, error) {
	if !clientHasTasks(req.ClientCapabilities()) {
		return nil, missingTasksError(method)
	}
	id := req.Params.TaskID
	if id == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": taskId is missing"}
	}
	t, err := r.find(ctx, id, principalOf(req))
	if err != nil {
		return nil, err
	}
	switch method {
	case methodTasksGet:
		return r.show(t, false), nil
	case methodTasksCancel:
		return r.cancel(ctx, t)
	default:
		return r.update(ctx, t, req.Params.InputResponses)
	}
}

// find returns the task id for principal, failing a working task whose
// replica is gone; an unknown task, and another principal's, is -32602.
func (r *taskRunner) find(ctx context.Context, id, principal string) (*tasks.Task, error) {
	t, err := r.store.Get(ctx, id)
	if errors.Is(err, tasks.ErrNotFound) || (err == nil && t.Principal != principal) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown task %q (it never existed, or its time to live ran out)", clipID(id))}
	}
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q: %v", clipID(id), err)}
	}
	if t.Status == tasks.Working && !t.Lease.IsZero() && time.Now().After(t.Lease) {
		owner := t.Owner
		// The replica is named by its id in the store, which it logged
		// when it started (newTaskRunner): an operator finds which
		// process died, and a client learns no host name.
		why := fmt.Sprintf("the replica running this task (%s) stopped before it ended", owner)
		lost := rpcErrorJSON(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: why})
		nt, err := r.store.Update(ctx, id, func(t *tasks.Task) error {
			if t.Status != tasks.Working || t.Owner != owner || !time.Now().After(t.Lease) {
				return errTaskNotRunning
			}
			t.Status, t.Error, t.StatusMessage = tasks.Failed, lost, why
			t.UpdatedAt, t.Owner, t.Lease = time.Now(), "", time.Time{}
			return nil
		})
		if err == nil {
			r.logger.Warn("task failed: the replica running it stopped", "task", id, "replica", owner)
			return nt, nil
		}
		if t2, err := r.store.Get(ctx, id); err == nil {
			return t2, nil
		}
	}
	return t, nil
}

// clipID bounds a client's task id in messages.
func clipID(id string) string {
	if len(id) > 64 {
		return id[:64] + "…"
	}
	return id
}

// cancel ends task t as cancelled at once, and stops its run wherever it
// runs. Cancelling an ended task changes nothing.
func (r *taskRunner) cancel(ctx context.Context, t *tasks.Task) (mcp.Result, error) {
	if t.Status.Terminal() {
		return newAck(), nil
	}
	_, err := r.store.Update(ctx, t.ID, func(t *tasks.Task) error {
		if t.Status.Terminal() {
			return errTaskNotRunning
		}
		t.Status, t.StatusMessage, t.CancelRequested = tasks.Cancelled, errTaskCancelled.Error(), true
		t.UpdatedAt, t.InputRequests = time.Now(), nil
		return nil
	})
	switch {
	case err == nil:
		r.count(string(tasks.Cancelled))
	case errors.Is(err, errTaskNotRunning), errors.Is(err, tasks.ErrNotFound):
		return newAck(), nil
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("cancel task %q: %v", t.ID, err)}
	}
	r.mu.Lock()
	run := r.runs[t.ID]
	r.mu.Unlock()
	if run != nil {
		run.cancel(errTaskCancelled)
	} else if err := r.store.Publish(ctx, t.ID); err != nil {
		r.logger.Warn("task store: telling the replicas of a cancellation failed", "task", t.ID, "error", err)
	}
	return newAck(), nil
}

// update records the client's answers to task t's input requests; the
// answer to the last one starts the task's next round here. Answers to
// keys that are not outstanding are ignored, as the extension asks.
func (r *taskRunner) update(ctx context.Context, t *tasks.Task, responses map[string]json.RawMessage) (mcp.Result, error) {
	if t.Status != tasks.InputRequired {
		return newAck(), nil
	}
	if r.h.draining.Load() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("update task %q: this replica is shutting down and starts no task round; send the update again", t.ID)}
	}
	if running := r.running(); running >= r.max {
		// The last answer starts the next round here: refuse before
		// recording anything, so that the client's retry can.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("update task %q: this host runs %d tasks already ([server.tasks] max_running); try again later", t.ID, running)}
	}
	var next *taskCall
	nt, err := r.store.Update(ctx, t.ID, func(t *tasks.Task) error {
		next = nil
		if t.Status != tasks.InputRequired {
			return errTaskNotRunning
		}
		var call taskCall
		if err := json.Unmarshal(t.Call, &call); err != nil {
			return fmt.Errorf("decode the task's call: %w", err)
		}
		if call.Responses == nil {
			call.Responses = map[string]json.RawMessage{}
		}
		answered := false
		for key, answer := range responses {
			pluginKey, ok := call.Keys[key]
			if !ok {
				continue
			}
			call.Responses[pluginKey] = answer
			delete(call.Keys, key)
			delete(t.InputRequests, key)
			answered = true
		}
		if !answered {
			return errTaskNotRunning
		}
		if len(call.Keys) == 0 {
			t.Status, t.StatusMessage, t.InputRequests = tasks.Working, "", nil
			t.Owner, t.Lease = r.replica, time.Now().Add(taskLease)
			next = &call
		}
		encoded, err := json.Marshal(&call)
		if err != nil {
			return err
		}
		t.Call, t.UpdatedAt = encoded, time.Now()
		return nil
	})
	switch {
	case err == nil:
	case errors.Is(err, errTaskNotRunning), errors.Is(err, tasks.ErrNotFound):
		return newAck(), nil
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("update task %q: %v", t.ID, err)}
	}
	if next != nil {
		r.start(nt.ID, nt.Principal, next, nt.Expires)
	}
	return newAck(), nil
}

// acquireTool looks the tool clients of profile via ("" for /mcp) know as
// name up in the current catalog (the profile's view) and takes a
// reference on its plugin generation (the caller releases it). A profile
// no longer served serves no tool.
func (h *Host) acquireTool(via, name string) (*loadedPlugin, bridge.Tool, bool) {
	var p *profile
	if via != "" {
		if p = h.profileNamed(via); p == nil {
			return nil, bridge.Tool{}, false
		}
	}
	for {
		e, ok := h.currentCatalog(p).tools[name]
		if !ok || e.plugin == nil {
			return nil, bridge.Tool{}, false
		}
		if e.plugin.acquire() {
			return e.plugin, e.tool, true
		}
	}
}

// codeHeaderMismatch is SEP-2243's HeaderMismatch.
const codeHeaderMismatch = -32020

// taskHeaderMismatch checks the Mcp-Name header of an HTTP request for
// tasks/get, tasks/update or tasks/cancel from a 2026-07-28 client: the
// extension makes it the task's id, so that a load balancer can route by
// it, and a header that disagrees with the body would route the request to
// one replica and act on another task (SEP-2243 rejects it). It returns
// the request's id and why it is refused, or "" to go on (go-sdk checks
// Mcp-Method, and the Mcp-Name of its own methods).
func taskHeaderMismatch(r *http.Request, body []byte) (json.RawMessage, string) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v == "" || v < "2026-07-28" {
		return nil, ""
	}
	if !bytes.Contains(body, []byte(`"tasks/`)) {
		return nil, ""
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			TaskID any `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return nil, "" // go-sdk answers what is not JSON-RPC
	}
	switch msg.Method {
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
	default:
		return nil, ""
	}
	id, _ := msg.Params.TaskID.(string)
	values := r.Header.Values("Mcp-Name")
	switch {
	case len(values) == 0:
		return msg.ID, fmt.Sprintf("missing required Mcp-Name header for method %q (the task's id)", msg.Method)
	case len(values) > 1:
		return msg.ID, fmt.Sprintf("Mcp-Name header given %d times for method %q", len(values), msg.Method)
	case strings.TrimSpace(values[0]) != id:
		return msg.ID, fmt.Sprintf("header mismatch: Mcp-Name header value %q does not match params.taskId %q", clipID(values[0]), clipID(id))
	}
	return nil, ""
}

// rpcErrorBodyFor is a JSON-RPC error response to the request id.
func rpcErrorBodyFor(id json.RawMessage, code int64, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: code, Message: message}})
	return b
}

// recordTaskRound counts a task round in the metrics and the audit log,
// as observe does a request's call: method tools/call, the task's id.
func (h *Host) recordTaskRound(ctx context.Context, began time.Time, pluginName, principal, id, profile string, req *mcp.CallToolRequest, res *mcp.CallToolResult, err error) {
	took := time.Since(began)
	var result mcp.Result
	if res != nil {
		result = res
	}
	outcome, message := outcomeOf(ctx, result, err)
	name := req.Params.Name
	h.metrics.calls.WithLabelValues("tools/call", pluginName, metricName("tools/call", name), outcome, profile).Inc()
	h.metrics.duration.WithLabelValues("tools/call", pluginName, metricName("tools/call", name), profile).Observe(took.Seconds())
	if h.audit == nil {
		return
	}
	e := audit.Entry{Time: began.UTC(), Subject: principal, Method: "tools/call", Plugin: pluginName, Name: name, Task: id, Profile: profile,
		Outcome: outcome, DurationMS: float64(took.Microseconds()) / 1000, Error: message}
	if h.auditArguments {
		e.Arguments = req.Params.Arguments
	}
	if err := h.audit.Write(e); err != nil {
		h.logger.Error("audit log", "error", err)
	}
}

// taskTools lists, sorted, those of tools (names clients know) that may run
// as tasks, each with its task support: "crawl (optional)".
func (c *catalog) taskTools(tools []string) []string {
	var out []string
	for _, name := range tools {
		if support := c.tools[name].tool.TaskSupport; support != "" {
			out = append(out, name+" ("+support+")")
		}
	}
	sort.Strings(out)
	return out
}
