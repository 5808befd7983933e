package host_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// The Tasks extension (host/tasks.go) as a 2026-07-28 client speaks it over
// stateless HTTP: the conformance suite's tasks-* scenarios check the wire
// (make conformance); these check what they do not: deadlines, reloads,
// shutdown, limits, TTLs, and what a plugin that lies gets.

// tasksConfig is a stateless host serving plugins/everything, with extra
// lines for [server.tasks] and for the plugin.
func tasksConfig(t *testing.T, serverTasks, pluginExtra string) string {
	return `
[server]
watch = false
stateless = true
[server.metrics]
enabled = true
[server.tasks]
` + serverTasks + `
[[plugin]]
name = "everything"
path = "` + testutil.GoPlugin(t, "plugins/everything") + `"
` + pluginExtra + "\n"
}

// taskClient speaks to a stateless endpoint, declaring the extension or not.
type taskClient struct {
	t        *testing.T
	endpoint string
	tasks    bool   // declare the extension
	token    string // bearer token, if any
	id       atomic.Int64
}

// rpcAnswer is one JSON-RPC answer.
type rpcAnswer struct {
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// call sends method with params (the _meta a 2026-07-28 client sends is
// added) and returns the HTTP status and the answer; name is Mcp-Name.
func (c *taskClient) call(method, name string, params map[string]any) (int, rpcAnswer) {
	c.t.Helper()
	caps := map[string]any{}
	if c.tasks {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
		caps["elicitation"] = map[string]any{}
	}
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id.Add(1), "method": method, "params": params})
	req, err := http.NewRequestWithContext(c.t.Context(), "POST", c.endpoint, strings.NewReader(string(body)))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := fmt.Fprint(&b, readAll(c.t, resp)); err != nil {
		c.t.Fatal(err)
	}
	text := b.String()
	if i := strings.Index(text, "data: "); i >= 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		text = strings.TrimSpace(strings.SplitN(text[i+len("data: "):], "\n", 2)[0])
	}
	var a rpcAnswer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		c.t.Fatalf("%s: answer %q is not JSON-RPC: %v", method, text, err)
	}
	return resp.StatusCode, a
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	var sb strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return sb.String()
		}
	}
}

// callTool calls a tool and returns its answer's result, failing on an
// error.
func (c *taskClient) callTool(name string, args map[string]any) map[string]any {
	c.t.Helper()
	_, a := c.call("tools/call", name, map[string]any{"name": name, "arguments": args})
	if a.Error != nil {
		c.t.Fatalf("tools/call %s: error %d %s", name, a.Error.Code, a.Error.Message)
	}
	return a.Result
}

// startTask calls a tool that must create a task and returns its id.
func (c *taskClient) startTask(name string, args map[string]any) string {
	c.t.Helper()
	res := c.callTool(name, args)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		c.t.Fatalf("tools/call %s = %v, want a CreateTaskResult", name, res)
	}
	return id
}

// get returns tasks/get's answer for id.
func (c *taskClient) get(id string) rpcAnswer {
	c.t.Helper()
	_, a := c.call("tasks/get", id, map[string]any{"taskId": id})
	return a
}

// await polls task id until it reaches a terminal status (or want, if
// not ""), and returns it.
func (c *taskClient) await(id, want string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := c.get(id)
		if a.Error != nil {
			c.t.Fatalf("tasks/get %s: error %d %s", id, a.Error.Code, a.Error.Message)
		}
		switch s := a.Result["status"]; {
		case s == want, s == "completed", s == "failed", s == "cancelled":
			return a.Result
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s still %v after 30s", id, a.Result["status"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// errorMessage returns the message of a failed task's error.
func errorMessage(task map[string]any) string {
	e, _ := task["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func serveTasks(t *testing.T, cfg string) (*host.Host, *taskClient, *syncBuffer) {
	t.Helper()
	h, logs := newHost(t, cfg)
	endpoint, _ := serveHTTPFor(t, h, 2*time.Second)
	return h, &taskClient{t: t, endpoint: endpoint, tasks: true}, logs
}

// TestTaskRunsPastTheCallTimeoutUntilItsTaskTimeout: a task's run has the
// plugin's task_timeout, not its timeout; past task_timeout it fails,
// naming the deadline, and the Wasm call is stopped.
func TestTaskRunsPastTheCallTimeoutUntilItsTaskTimeout(t *testing.T) {
	_, c, _ := serveTasks(t, tasksConfig(t, "", `timeout = "300ms"
task_timeout = "2s"`))
	done := c.await(c.startTask("slow_compute", map[string]any{"seconds": 1, "label": "long"}), "")
	if done["status"] != "completed" {
		t.Fatalf("a 1s task under a 300ms timeout and a 2s task_timeout = %v, want completed", done)
	}
	began := time.Now()
	failed := c.await(c.startTask("slow_compute", map[string]any{"seconds": 60}), "")
	if failed["status"] != "failed" || !strings.Contains(errorMessage(failed), "2s timeout") {
		t.Fatalf("a 60s task under a 2s task_timeout = %v, want failed after the 2s timeout", failed)
	}
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("the task failed after %s, its task_timeout is 2s", took)
	}
}

// TestTaskCancelStopsTheWasmCall: tasks/cancel settles the task at once,
// and its plugin call (sleeping in the guest) ends soon, freeing the
// instance: with max_instances = 1 the next call gets it.
func TestTaskCancelStopsTheWasmCall(t *testing.T) {
	h, c, _ := serveTasks(t, tasksConfig(t, "", `max_instances = 1`))
	id := c.startTask("slow_compute", map[string]any{"seconds": 600})
	if n := metric(t, h, "mcphost_tasks_running"); n != 1 {
		t.Errorf("mcphost_tasks_running = %v with one task working, want 1", n)
	}
	if s := c.get(id).Result["status"]; s != "working" {
		t.Fatalf("status = %v, want working", s)
	}
	_, ack := c.call("tasks/cancel", id, map[string]any{"taskId": id})
	if ack.Error != nil || ack.Result["resultType"] != "complete" || ack.Result["taskId"] != nil || ack.Result["status"] != nil {
		t.Fatalf("tasks/cancel = %+v, want the empty ack", ack)
	}
	if s := c.get(id).Result["status"]; s != "cancelled" {
		t.Fatalf("status after cancel = %v, want cancelled", s)
	}
	// The only instance is free again once the run ended.
	res := c.callTool("greet", map[string]any{"name": "next"})
	if content, _ := res["content"].([]any); len(content) != 1 {
		t.Fatalf("greet after the cancel = %v", res)
	}
	for deadline := time.Now().Add(10 * time.Second); metric(t, h, "mcphost_tasks_running") != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("mcphost_tasks_running still %v 10s after the cancel, want 0", metric(t, h, "mcphost_tasks_running"))
		}
	}
	if n := metric(t, h, `mcphost_tasks_total{event="cancelled"}`); n != 1 {
		t.Errorf(`mcphost_tasks_total{event="cancelled"} = %v, want 1`, n)
	}
	// Cancelling again changes nothing.
	if _, again := c.call("tasks/cancel", id, map[string]any{"taskId": id}); again.Error != nil || c.get(id).Result["status"] != "cancelled" {
		t.Fatalf("second cancel: %+v", again)
	}
}

// TestTaskFailsWhenItsPluginIsReloaded: a reload that replaces the plugin
// fails its running task with a clear message instead of keeping the old
// generation alive, or leaving the task working.
func TestTaskFailsWhenItsPluginIsReloaded(t *testing.T) {
	path := testutil.WriteConfig(t, tasksConfig(t, "", ""))
	h, logs := newHostFromFile(t, path)
	endpoint, _ := serveHTTPFor(t, h, time.Second)
	c := &taskClient{t: t, endpoint: endpoint, tasks: true}
	id := c.startTask("slow_compute", map[string]any{"seconds": 600})
	cfg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(string(cfg)+`timeout = "11s"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(t.Context()); err != nil {
		t.Fatalf("Reload: %v\n%s", err, logs)
	}
	failed := c.await(id, "")
	if failed["status"] != "failed" || !strings.Contains(errorMessage(failed), "reloaded") {
		t.Fatalf("task after its plugin's reload = %v, want failed, naming the reload", failed)
	}
	// The new generation runs new tasks.
	if done := c.await(c.startTask("slow_compute", map[string]any{"seconds": 0.1}), ""); done["status"] != "completed" {
		t.Fatalf("a task after the reload = %v", done)
	}
}

// TestTaskInputRequiredAcrossRounds: a task that asks for input parks in
// input_required with keys of its own; an answer to an unknown key is
// ignored, the right one resumes it, and its result reflects the answer.
func TestTaskInputRequiredAcrossRounds(t *testing.T) {
	_, c, _ := serveTasks(t, tasksConfig(t, "", ""))
	id := c.startTask("confirm_delete", map[string]any{"filename": "notes.txt"})
	parked := c.await(id, "input_required")
	requests, _ := parked["inputRequests"].(map[string]any)
	if parked["status"] != "input_required" || len(requests) != 1 {
		t.Fatalf("task = %v, want input_required with one request", parked)
	}
	var key string
	for k := range requests {
		key = k
	}
	if key == "confirm" {
		t.Errorf("the task shows the plugin's own key %q; a task's keys are new for each round", key)
	}
	_, ack := c.call("tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{"nope": map[string]any{"action": "accept"}}})
	if ack.Error != nil || c.get(id).Result["status"] != "input_required" {
		t.Fatalf("an answer to an unknown key: %+v, status %v; want it ignored", ack, c.get(id).Result["status"])
	}
	c.call("tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
	done := c.await(id, "")
	res, _ := done["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if done["status"] != "completed" || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), "Deleted notes.txt") {
		t.Fatalf("task after the answer = %v, want completed with the deletion", done)
	}
}

// TestTaskRefusals: what a client without the extension, or with a wrong
// task id or header, gets.
func TestTaskRefusals(t *testing.T) {
	_, c, _ := serveTasks(t, tasksConfig(t, "", ""))
	plain := &taskClient{t: t, endpoint: c.endpoint}
	if _, a := plain.call("tools/call", "failing_job", map[string]any{"name": "failing_job", "arguments": map[string]any{}}); a.Error == nil || a.Error.Code != -32021 ||
		!strings.Contains(string(a.Error.Data), `"io.modelcontextprotocol/tasks"`) {
		t.Errorf("a task-only tool from a client without the extension = %+v, want -32021 naming it", a)
	}
	if _, a := plain.call("tasks/get", "x", map[string]any{"taskId": "x"}); a.Error == nil || a.Error.Code != -32021 {
		t.Errorf("tasks/get without the extension = %+v, want -32021", a)
	}
	if a := c.get("no-such-task"); a.Error == nil || a.Error.Code != -32602 || !strings.Contains(a.Error.Message, "no-such-task") {
		t.Errorf("tasks/get of an unknown task = %+v, want -32602 naming it", a)
	}
	id := c.startTask("slow_compute", map[string]any{"seconds": 600})
	status, a := c.call("tasks/get", "another-task", map[string]any{"taskId": id})
	if status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32020 {
		t.Errorf("tasks/get whose Mcp-Name is another task's = %d %+v, want 400 -32020", status, a)
	}
	status, a = c.call("tasks/cancel", "", map[string]any{"taskId": id})
	if status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32020 {
		t.Errorf("tasks/cancel without Mcp-Name = %d %+v, want 400 -32020", status, a)
	}
	c.call("tasks/cancel", id, map[string]any{"taskId": id})
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if _, a := c.call(m, "", map[string]any{"taskId": id}); a.Error == nil || a.Error.Code != -32601 {
			t.Errorf("%s (removed from the extension) = %+v, want -32601", m, a)
		}
	}
}

// TestTaskLimitsAndTTL: [server.tasks] max_running refuses a task past
// the limit with a clear error, and a task is gone after its ttl.
func TestTaskLimitsAndTTL(t *testing.T) {
	_, c, _ := serveTasks(t, tasksConfig(t, `max_running = 1
ttl = "1500ms"`, ""))
	id := c.startTask("slow_compute", map[string]any{"seconds": 600})
	if ttl := c.get(id).Result["ttlMs"]; ttl != float64(1500) {
		t.Errorf("ttlMs = %v, want 1500", ttl)
	}
	_, a := c.call("tools/call", "slow_compute", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 600}})
	if a.Error == nil || !strings.Contains(a.Error.Message, "max_running") {
		t.Errorf("a second task past max_running = 1: %+v, want an error naming max_running", a)
	}
	time.Sleep(2 * time.Second)
	if a := c.get(id); a.Error == nil || a.Error.Code != -32602 {
		t.Errorf("tasks/get after the ttl = %+v, want -32602 (gone)", a)
	}
	// The run stopped with it: a task fits again.
	c.startTask("slow_compute", map[string]any{"seconds": 0.1})
}

// TestTaskAskedByAPluginThatMayNot: a plugin that asks to run a call as
// a task when it may not (its tool declares no task support, or it asks
// again from inside the task), or sets a resultType no plugin may, fails
// the call or the task with a message naming it; a tool declaring a task
// support that does not exist is left out. A client without the extension
// gets a synchronous result from a task-supporting tool.
func TestTaskAskedByAPluginThatMayNot(t *testing.T) {
	_, c, _ := serveTasks(t, tasksConfig(t, "", `[[plugin]]
name = "faulty"
path = "`+testutil.GoPlugin(t, "testdata/plugins/faulty")+`"
timeout = "10s"`))
	plain := &taskClient{t: t, endpoint: c.endpoint}
	res := plain.callTool("slow_compute", map[string]any{"seconds": 0.05})
	if res["resultType"] == "task" || res["taskId"] != nil {
		t.Fatalf("slow_compute from a client without the extension = %v, want a plain result", res)
	}
	if _, a := c.call("tools/call", "as_task", map[string]any{"name": "as_task", "arguments": map[string]any{}}); a.Error == nil ||
		!strings.Contains(a.Error.Message, `asked to run tool "as_task" as a task`) {
		t.Errorf("as_task = %+v, want an error naming the plugin's request", a)
	}
	failed := c.await(c.startTask("task_liar", map[string]any{}), "")
	if failed["status"] != "failed" || !strings.Contains(errorMessage(failed), "from inside its task") {
		t.Errorf("task_liar's task = %v, want failed, naming the second request", failed)
	}
	if _, a := c.call("tools/call", "odd_result_type", map[string]any{"name": "odd_result_type", "arguments": map[string]any{}}); a.Error == nil ||
		!strings.Contains(a.Error.Message, `resultType "banana"`) {
		t.Errorf("odd_result_type = %+v, want an error naming the resultType", a)
	}
	if _, a := c.call("tools/call", "task_sometimes", map[string]any{"name": "task_sometimes", "arguments": map[string]any{}}); a.Error == nil || !strings.Contains(a.Error.Message, "unknown tool") {
		t.Errorf("task_sometimes, which declares a task support that does not exist, was served: %+v", a)
	}
}

// TestTaskBelongsToItsCreator: with authorization, a task is the token
// subject's who created it: another subject gets -32602 for it, as for an
// unknown task, and cannot cancel or answer it.
func TestTaskBelongsToItsCreator(t *testing.T) {
	f := newAuthFixture(t, "stateless = true")
	alice := &taskClient{t: t, endpoint: f.endpoint, tasks: true, token: f.tokenFor(t, "alice", f.endpoint, "mcp admin", time.Hour)}
	bob := &taskClient{t: t, endpoint: f.endpoint, tasks: true, token: f.tokenFor(t, "bob", f.endpoint, "mcp admin", time.Hour)}
	id := alice.startTask("ev_slow_compute", map[string]any{"seconds": 600})
	if a := bob.get(id); a.Error == nil || a.Error.Code != -32602 {
		t.Errorf("bob's tasks/get of alice's task = %+v, want -32602", a)
	}
	bob.call("tasks/cancel", id, map[string]any{"taskId": id})
	if s := alice.get(id).Result["status"]; s != "working" {
		t.Errorf("alice's task after bob's cancel: %v, want still working", s)
	}
	alice.call("tasks/cancel", id, map[string]any{"taskId": id})
	if s := alice.get(id).Result["status"]; s != "cancelled" {
		t.Errorf("alice's task after her cancel: %v, want cancelled", s)
	}
}

// TestTaskRoundsAreAudited: the tools/call that created a task and each
// round of it are in the audit log under the task's id, with the round's
// outcome.
func TestTaskRoundsAreAudited(t *testing.T) {
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := strings.Replace(tasksConfig(t, "", ""), "[server.tasks]", "[server.audit]\nfile = "+strconv.Quote(auditFile)+"\n[server.tasks]", 1)
	_, c, _ := serveTasks(t, cfg)
	id := c.startTask("failing_job", map[string]any{})
	if done := c.await(id, ""); done["status"] != "completed" {
		t.Fatalf("failing_job's task = %v", done)
	}
	var entries []map[string]any
	for deadline := time.Now().Add(10 * time.Second); len(entries) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(auditFile)
		if err != nil {
			t.Fatal(err)
		}
		entries = nil
		for line := range strings.Lines(string(b)) {
			var e map[string]any
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("audit line %q: %v", line, err)
			}
			if e["task"] == id {
				entries = append(entries, e)
			}
		}
	}
	if len(entries) != 2 || entries[0]["outcome"] != "ok" || entries[1]["outcome"] != "tool_error" || entries[1]["name"] != "failing_job" {
		t.Fatalf("audit entries of task %s = %v, want its creation (ok) and its round (tool_error)", id, entries)
	}
}

// TestTaskNotStartedWhileDraining: during drain_delay (a load balancer is
// taking the replica out) a call that would become a task is refused, so
// that the client's retry lands on a replica that will still run it.
func TestTaskNotStartedWhileDraining(t *testing.T) {
	h, _ := newHost(t, strings.Replace(tasksConfig(t, "", ""), "stateless = true", "stateless = true\ndrain_delay = \"3s\"", 1))
	endpoint, stop := serveHTTPFor(t, h, time.Second)
	c := &taskClient{t: t, endpoint: endpoint, tasks: true}
	c.startTask("slow_compute", map[string]any{"seconds": 0.05})
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, a := c.call("tools/call", "slow_compute", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 60}})
		if a.Error != nil && strings.Contains(a.Error.Message, "shutting down") {
			break
		}
		if a.Error == nil {
			id, _ := a.Result["taskId"].(string)
			c.call("tasks/cancel", id, map[string]any{"taskId": id})
		}
		if time.Now().After(deadline) {
			t.Fatalf("a task call during the drain = %+v, want it refused as shutting down", a)
		}
		time.Sleep(20 * time.Millisecond)
	}
	<-stopped
}
