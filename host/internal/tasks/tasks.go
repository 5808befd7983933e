// Package tasks keeps the state of the tasks of the MCP Tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663) in a Store: an embedded one
// for a host that runs alone (Memory), or one shared by every replica
// behind a load balancer (Redis, which Valkey serves too), so that a task
// started on one replica can be read, answered and cancelled through any
// other.
//
// The store knows nothing of MCP beyond a task's public fields: what a task
// runs is opaque to it (Task.Call), and who may see a task is the host's to
// check (Task.Principal).
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Status is a task's state, as the extension names it.
type Status string

// The statuses of SEP-2663. A task starts working, may wait for input and
// work again, and ends completed, failed or cancelled.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is a final status: nothing changes a task in
// it any more.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// ErrNotFound is returned for a task the store does not hold: never
// created, or dropped after its TTL.
var ErrNotFound = errors.New("no such task")

// ErrExists is returned by Create for an ID the store already holds.
var ErrExists = errors.New("a task with this id already exists")

// ErrFull is returned by Create when the store holds as many tasks as it
// may (Memory's limit).
var ErrFull = errors.New("the task store is full")

// Task is one task as the store keeps it.
type Task struct {
	ID            string    `json:"id"`
	Status        Status    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	// Expires is when the store drops the task (its creation plus its
	// TTL), whatever its status.
	Expires time.Time `json:"expires"`
	// PollInterval is the polling interval suggested to clients.
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// Principal is who created the task (the bearer token's subject), ""
	// without authorization: only the same principal may see it.
	Principal string `json:"principal,omitempty"`
	// Owner names the replica running the task's current round, "" while
	// none does (waiting for input, or ended); Lease is when that claim
	// lapses unless the owner renews it. A working task whose lease has
	// lapsed lost its replica.
	Owner string    `json:"owner,omitempty"`
	Lease time.Time `json:"lease,omitempty"`
	// CancelRequested is set by tasks/cancel on a task some replica runs:
	// the owner stops the run and settles the task as cancelled.
	CancelRequested bool `json:"cancelRequested,omitempty"`
	// Result is the final result of a completed task, Error the JSON-RPC
	// error of a failed one.
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	// InputRequests are the requests to the client still unanswered, by
	// key, while the task is input_required.
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Call is what the host needs to run the task's next round: opaque to
	// the store.
	Call json.RawMessage `json:"call,omitempty"`
}

// Store holds tasks. Every method is safe for concurrent use, by any
// number of replicas sharing the store.
type Store interface {
	// Create stores a new task; once it returns, Get finds the task from
	// every replica. It fails with ErrExists for an ID already held.
	Create(ctx context.Context, t *Task) error
	// Get returns the task id, or ErrNotFound.
	Get(ctx context.Context, id string) (*Task, error)
	// Update changes the task id atomically: change gets the task as
	// stored and edits it in place; its error aborts the update and is
	// returned as is. change may be called more than once when another
	// writer got there first; it must not have other effects. Update
	// returns the task as stored after the change, or ErrNotFound.
	Update(ctx context.Context, id string, change func(*Task) error) (*Task, error)
	// Publish tells every replica's Subscribe channel that the task id
	// changed in a way its owner must act on (a cancellation).
	Publish(ctx context.Context, id string) error
	// Subscribe delivers the IDs Publish is given, from every replica,
	// until ctx ends; an ID may be delivered late or twice but a
	// subscriber that is not too slow gets each one (a slow one may lose
	// some: the owner also rereads its tasks when it renews their leases).
	Subscribe(ctx context.Context) (<-chan string, error)
	// Close releases the store's resources.
	Close() error
}
