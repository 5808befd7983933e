package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

// TestTasksAcrossReplicas runs the Tasks extension (io.modelcontextprotocol/
// tasks, host/tasks.go) on two `mcphost serve` replicas (the real binary,
// stateless, on loopback) that share one real redis-server as their task
// store, with HAProxy in front balancing round-robin without stickiness.
// A client talks to HAProxy and to each replica directly:
//
//   - a task created on a, read through b, and cancelled through b stops
//     a's Wasm call (a's everything instances in use go back to 0) and
//     reads cancelled everywhere; tasks created through HAProxy land on
//     both replicas and are cancelled through HAProxy likewise;
//   - a task waiting for input (input_required) on a is answered through
//     b while a is frozen (SIGSTOP): b runs the next round, and it
//     completes;
//   - a replica killed (SIGKILL) while it runs a task: the task reads
//     failed through the survivor, naming the lost replica, within a few
//     lease periods, and was never seen in another state meanwhile;
//   - a replica stopped with SIGTERM while it runs a task: the task runs
//     on through the drain and the grace period, then ends failed ("the
//     host shut down…"), and the replica exits 0.
//
// Every wait is a generous eventually; the times are logged, not checked.
func TestTasksAcrossReplicas(t *testing.T) {
	haproxy := requireHAProxy(t)
	if testing.Short() {
		t.Skip("starts redis-server, HAProxy and two mcphost processes; skipped in -short mode")
	}
	redis := testutil.StartRedis(t)
	began := time.Now()
	bin := buildMCPHost(t)
	everything := testutil.GoPlugin(t, "plugins/everything")

	front, stats := listenLoopback(t), listenLoopback(t)
	frontAddr, statsAddr := front.Addr().String(), stats.Addr().String()
	// Each replica's MCP and ops addresses are fixed up front, so that a
	// replica started again takes its predecessor's place behind HAProxy.
	type place struct{ config, listen string }
	places := map[string]place{}
	for _, name := range []string{"a", "b"} {
		ops := freeAddr(t)
		places[name] = place{listen: freeAddr(t),
			config: fmt.Sprintf(taskReplicaConfig, name, drainDelay, frontAddr, ops, redis.URL(), everything)}
	}
	start := func(name string) *process {
		t.Helper()
		return startReplicaAt(t, bin, name, places[name].config, places[name].listen)
	}
	a, b := start("a"), start("b")
	startHAProxy(t, haproxy, fmt.Sprintf(haproxyConfig, a.mcpAddr, a.opsPort(), b.mcpAddr, b.opsPort()), front, stats)
	hs := &haproxyStats{url: "http://" + statsAddr + "/stats;csv"}
	bothUp := func() {
		t.Helper()
		eventually(t, "HAProxy sees both replicas UP", func() (bool, string) {
			sa, sb := hs.status(t, "a"), hs.status(t, "b")
			return sa == "UP" && sb == "UP", fmt.Sprintf("a %s, b %s", sa, sb)
		})
	}
	bothUp()
	t.Logf("setup (redis-server, build, plugin, two replicas, HAProxy): %v", time.Since(began).Round(time.Millisecond))

	viaA, viaB := newTasksClient("a", a.mcpAddr), newTasksClient("b", b.mcpAddr)
	viaLB := newTasksClient("HAProxy", frontAddr)

	t.Run("CancelThroughTheOtherReplica", func(t *testing.T) {
		id := viaA.startTask(t, "slow_compute", map[string]any{"seconds": 600, "label": "cancel-through-b"})
		eventually(t, "a runs the task", func() (bool, string) {
			n := a.instancesInUse(t, "everything")
			return n == 1, fmt.Sprintf("a's everything instances in use: %v", n)
		})
		for _, c := range []*tasksClient{viaB, viaLB, viaLB, viaLB, viaLB} {
			c.wantStatus(t, id, "working")
		}
		cancelled := time.Now()
		viaB.cancel(t, id)
		for _, c := range []*tasksClient{viaB, viaA, viaLB, viaLB} {
			c.wantStatus(t, id, "cancelled")
		}
		eventually(t, "a's Wasm call stops after the cancel through b", func() (bool, string) {
			n := a.instancesInUse(t, "everything")
			return n == 0, fmt.Sprintf("a's everything instances in use: %v", n)
		})
		t.Logf("cancel through b: a's instance free after %v", time.Since(cancelled).Round(time.Millisecond))
		viaA.wantStatus(t, id, "cancelled")

		// Tasks created through HAProxy, round-robin, land on both
		// replicas; each is read through both, and cancelled through
		// HAProxy, whichever replica that reaches.
		var ids []string
		for i := range 4 {
			ids = append(ids, viaLB.startTask(t, "slow_compute", map[string]any{"seconds": 600, "label": fmt.Sprint("through-haproxy-", i)}))
		}
		eventually(t, "the four tasks run, on both replicas", func() (bool, string) {
			na, nb := a.instancesInUse(t, "everything"), b.instancesInUse(t, "everything")
			return na+nb == 4 && na >= 1 && nb >= 1, fmt.Sprintf("everything instances in use: a %v, b %v", na, nb)
		})
		for _, id := range ids {
			viaA.wantStatus(t, id, "working")
			viaB.wantStatus(t, id, "working")
			viaLB.cancel(t, id)
		}
		eventually(t, "every run stops after the cancels through HAProxy", func() (bool, string) {
			na, nb := a.instancesInUse(t, "everything"), b.instancesInUse(t, "everything")
			return na == 0 && nb == 0, fmt.Sprintf("everything instances in use: a %v, b %v", na, nb)
		})
		for _, id := range ids {
			viaA.wantStatus(t, id, "cancelled")
			viaB.wantStatus(t, id, "cancelled")
		}
	})

	t.Run("InputAnsweredThroughTheOtherReplica", func(t *testing.T) {
		id := viaA.startTask(t, "confirm_delete", map[string]any{"filename": "notes.txt"})
		var key string
		eventually(t, "the task asks for input, read through b", func() (bool, string) {
			task, err := viaB.get(id)
			if err != nil {
				return false, err.Error()
			}
			requests, _ := task["inputRequests"].(map[string]any)
			for k := range requests {
				key = k
			}
			if s := task["status"]; s != "working" && s != "input_required" {
				t.Fatalf("task %s through b: %v, want working until input_required", id, task)
			}
			return task["status"] == "input_required" && len(requests) == 1, fmt.Sprintf("status %v, %d input requests", task["status"], len(requests))
		})
		// a is frozen while b gets the answer: only b can run the round
		// that completes the task.
		if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP to a: %v", err)
		}
		resumeA := func() { _ = a.cmd.Process.Signal(syscall.SIGCONT) }
		defer resumeA()
		viaB.update(t, id, map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}})
		var done map[string]any
		eventually(t, "the task completes through b while a is frozen", func() (bool, string) {
			task, err := viaB.get(id)
			if err != nil {
				return false, err.Error()
			}
			done = task
			if s := task["status"]; s != "working" && s != "completed" {
				t.Fatalf("task %s through b after the answer: %v, want working until completed", id, task)
			}
			return task["status"] == "completed", fmt.Sprintf("status %v", task["status"])
		})
		if text := fmt.Sprint(done["result"]); !strings.Contains(text, "Deleted notes.txt") {
			t.Fatalf("the completed task's result = %s, want the answer's effect (Deleted notes.txt)", text)
		}
		resumeA()
		viaA.wantStatus(t, id, "completed")
		bothUp() // a's health checks may have failed while it was frozen
	})

	t.Run("KilledReplicaFailsItsTask", func(t *testing.T) {
		lost := a.log.find(replicaIDLine)
		if lost == "" {
			t.Fatalf("replica a did not log its id in the task store:\n%s", a.log.tail(40))
		}
		id := viaA.startTask(t, "slow_compute", map[string]any{"seconds": 600, "label": "killed"})
		viaB.wantStatus(t, id, "working")
		if err := a.cmd.Process.Kill(); err != nil {
			t.Fatalf("SIGKILL to a: %v", err)
		}
		<-a.exited
		killed := time.Now()
		failed := viaB.awaitEnd(t, id, "failed", "working")
		t.Logf("killed a: the task read failed through b %v after the kill (lease %v): %s",
			time.Since(killed).Round(time.Millisecond), "3s", errorMessage(failed))
		if msg := errorMessage(failed); !strings.Contains(msg, "stopped before it ended") || !strings.Contains(msg, lost) {
			t.Fatalf("the task of the killed replica failed with %q, want it to say that replica %s stopped", msg, lost)
		}
		eventually(t, "HAProxy reads the failed task from the survivor", func() (bool, string) {
			task, err := viaLB.get(id)
			if err != nil {
				return false, err.Error()
			}
			return task["status"] == "failed", fmt.Sprintf("status %v", task["status"])
		})

		// a starts again in its place, with a new id in the store.
		a = start("a")
		bothUp()
		viaA.wantStatus(t, id, "failed")
		if again := a.log.find(replicaIDLine); again == "" || again == lost {
			t.Errorf("the restarted replica's id in the store = %q, want a new one (was %s)", again, lost)
		}
	})

	t.Run("SIGTERMFailsItsTaskAfterTheGrace", func(t *testing.T) {
		id := viaA.startTask(t, "slow_compute", map[string]any{"seconds": 600, "label": "sigterm"})
		viaB.wantStatus(t, id, "working")
		if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatalf("SIGTERM to a: %v", err)
		}
		sigterm := time.Now()
		failed := viaB.awaitEnd(t, id, "failed", "working")
		endedAfter := time.Since(sigterm)
		if msg := errorMessage(failed); !strings.Contains(msg, "the host shut down") {
			t.Fatalf("the task of the replica stopped with SIGTERM failed with %q, want \"the host shut down…\"", msg)
		}
		select {
		case <-a.exited:
		case <-time.After(patience):
			t.Fatalf("replica a did not exit within %v of SIGTERM", patience)
		}
		exitedAfter := time.Since(sigterm)
		if a.waitErr != nil {
			t.Errorf("replica a exited with %v after SIGTERM, want exit status 0", a.waitErr)
		}
		t.Logf("SIGTERM to a (drain_delay %v, then the grace of 10 s): its task read failed through b after %v, a exited after %v: %s",
			drainDelay, endedAfter.Round(time.Millisecond), exitedAfter.Round(time.Millisecond), errorMessage(failed))
		eventually(t, "HAProxy reads the failed task from the survivor", func() (bool, string) {
			task, err := viaLB.get(id)
			if err != nil {
				return false, err.Error()
			}
			return task["status"] == "failed", fmt.Sprintf("status %v", task["status"])
		})
	})
}

// taskReplicaConfig is a replica's mcphost.toml for the tasks test: name,
// drain_delay, HAProxy's frontend address, the ops address, the task
// store's URL, plugins/everything.
const taskReplicaConfig = `
[server]
name = "replica-%s"
stateless = true
drain_delay = "%s"
allowed_origins = ["http://%s"]
watch = false
lock_file = "off"

[server.metrics]
enabled = true
listen = "%s"

[server.tasks]
store = "%s"

[[plugin]]
name = "everything"
path = %q
max_instances = 4
`

// replicaIDLine is the line in which a replica sharing a task store logs
// its id in it, which names it in the failure of a task it lost.
var replicaIDLine = regexp.MustCompile(`this replica's id in it: replica=(\S+)`)

// freeAddr returns a loopback host:port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// tasksClient speaks the Tasks extension to one endpoint as a stateless
// 2026-07-28 client, over raw HTTP (go-sdk has no Tasks yet): each
// request's _meta carries the client's capabilities with the extension
// (and elicitation) declared, and its headers Mcp-Method and, for
// tasks/get, tasks/update and tasks/cancel, Mcp-Name = the task's id.
type tasksClient struct {
	name     string // a, b or HAProxy: what errors call it
	endpoint string
	http     *http.Client
	id       atomic.Int64
}

func newTasksClient(name, addr string) *tasksClient {
	return &tasksClient{name: name, endpoint: "http://" + addr + "/mcp", http: &http.Client{Timeout: 30 * time.Second}}
}

// rpc sends method with params and returns the answer's result; an error
// says what failed: the connection, the HTTP status, or the JSON-RPC error.
func (c *tasksClient) rpc(method, name string, params map[string]any) (map[string]any, error) {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "tasks-replicas-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions":  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
			"elicitation": map[string]any{},
		},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id.Add(1), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s through %s: %w", method, c.name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s through %s: read the answer: %w", method, c.name, err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// One event: the answer.
		if i := bytes.Index(b, []byte("data: ")); i >= 0 {
			b, _, _ = bytes.Cut(b[i+len("data: "):], []byte("\n"))
		}
	}
	var answer struct {
		Result map[string]any `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &answer); err != nil {
		return nil, fmt.Errorf("%s through %s: HTTP %d, answer %q is not JSON-RPC: %v", method, c.name, resp.StatusCode, b, err)
	}
	if answer.Error != nil {
		return nil, fmt.Errorf("%s through %s: error %d: %s", method, c.name, answer.Error.Code, answer.Error.Message)
	}
	return answer.Result, nil
}

// startTask calls tool, which must answer with a task, and returns its id.
func (c *tasksClient) startTask(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	res, err := c.rpc("tools/call", tool, map[string]any{"name": tool, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call %s through %s = %v, want a task (CreateTaskResult)", tool, c.name, res)
	}
	return id
}

// get returns the task id as tasks/get shows it.
func (c *tasksClient) get(id string) (map[string]any, error) {
	return c.rpc("tasks/get", id, map[string]any{"taskId": id})
}

// wantStatus checks that tasks/get shows the task id in status want.
func (c *tasksClient) wantStatus(t *testing.T, id, want string) {
	t.Helper()
	task, err := c.get(id)
	if err != nil {
		t.Fatal(err)
	}
	if task["status"] != want {
		t.Fatalf("task %s through %s: %v, want status %s", id, c.name, task, want)
	}
}

// cancel sends tasks/cancel for the task id.
func (c *tasksClient) cancel(t *testing.T, id string) {
	t.Helper()
	if _, err := c.rpc("tasks/cancel", id, map[string]any{"taskId": id}); err != nil {
		t.Fatal(err)
	}
}

// update answers the task id's input requests with responses.
func (c *tasksClient) update(t *testing.T, id string, responses map[string]any) {
	t.Helper()
	if _, err := c.rpc("tasks/update", id, map[string]any{"taskId": id, "inputResponses": responses}); err != nil {
		t.Fatal(err)
	}
}

// awaitEnd polls the task id until it shows status want, and returns it;
// any status other than want and meanwhile fails the test at once, as
// does patience passing (a task stuck in meanwhile).
func (c *tasksClient) awaitEnd(t *testing.T, id, want, meanwhile string) map[string]any {
	t.Helper()
	var task map[string]any
	eventually(t, fmt.Sprintf("task %s reads %s through %s", id, want, c.name), func() (bool, string) {
		var err error
		task, err = c.get(id)
		if err != nil {
			return false, err.Error()
		}
		switch task["status"] {
		case want:
			return true, ""
		case meanwhile:
			return false, fmt.Sprintf("status %v", task["status"])
		}
		t.Fatalf("task %s through %s: %v, want %s until %s", id, c.name, task, meanwhile, want)
		return false, ""
	})
	return task
}

// errorMessage is the message of a failed task's error.
func errorMessage(task map[string]any) string {
	e, _ := task["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}
