// Package storetest holds the tests every tasks.Store must pass, run by
// each store's own tests.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/internal/tasks"
)

// Open returns two handles onto one new, empty store, as two replicas
// would hold them (the same value for a store inside one process).
type Open func(t *testing.T) (a, b tasks.Store)

// Run runs the tests of a Store.
func Run(t *testing.T, open Open) {
	t.Run("CreateGetThroughTheOtherHandle", func(t *testing.T) { createGet(t, open) })
	t.Run("CreateTwiceFails", func(t *testing.T) { createTwice(t, open) })
	t.Run("UnknownIsNotFound", func(t *testing.T) { unknown(t, open) })
	t.Run("Expires", func(t *testing.T) { expires(t, open) })
	t.Run("UpdatesAreAtomic", func(t *testing.T) { atomicUpdates(t, open) })
	t.Run("UpdateAbortKeepsTheTask", func(t *testing.T) { abort(t, open) })
	t.Run("UpdateReturnsTheStoredTask", func(t *testing.T) { updateReturns(t, open) })
	t.Run("PublishReachesTheOtherHandle", func(t *testing.T) { publish(t, open) })
	t.Run("PublishReachesEverySubscription", func(t *testing.T) { publishEvery(t, open) })
}

func newTask(id string, ttl time.Duration) *tasks.Task {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &tasks.Task{ID: id, Status: tasks.Working, CreatedAt: now, UpdatedAt: now, Expires: now.Add(ttl), Owner: "replica-a", Lease: now.Add(time.Minute), Call: []byte(`{"tool":"slow"}`)}
}

func createGet(t *testing.T, open Open) {
	a, b := open(t)
	ctx := context.Background()
	want := newTask("t-create", time.Minute)
	want.InputRequests = map[string]json.RawMessage{"k": []byte(`{"method":"elicitation/create"}`)}
	if err := a.Create(ctx, want); err != nil {
		t.Fatalf("Create: %v", err)
	}
	got, err := b.Get(ctx, want.ID)
	if err != nil {
		t.Fatalf("Get from the other handle: %v", err)
	}
	if got.ID != want.ID || got.Status != want.Status || !got.CreatedAt.Equal(want.CreatedAt) || !got.Expires.Equal(want.Expires) ||
		got.Owner != want.Owner || string(got.Call) != string(want.Call) || string(got.InputRequests["k"]) != string(want.InputRequests["k"]) {
		t.Fatalf("Get = %+v, want %+v", got, want)
	}
	// What Get returned is the caller's own.
	got.Status = tasks.Failed
	again, err := a.Get(ctx, want.ID)
	if err != nil || again.Status != tasks.Working {
		t.Fatalf("Get after editing a returned task = %+v, %v; want it unchanged", again, err)
	}
}

func createTwice(t *testing.T, open Open) {
	a, b := open(t)
	ctx := context.Background()
	if err := a.Create(ctx, newTask("t-twice", time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, newTask("t-twice", time.Minute)); !errors.Is(err, tasks.ErrExists) {
		t.Fatalf("second Create = %v, want ErrExists", err)
	}
}

func unknown(t *testing.T, open Open) {
	a, _ := open(t)
	ctx := context.Background()
	if _, err := a.Get(ctx, "t-never"); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("Get = %v, want ErrNotFound", err)
	}
	if _, err := a.Update(ctx, "t-never", func(*tasks.Task) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("Update = %v, want ErrNotFound", err)
	}
}

func expires(t *testing.T, open Open) {
	a, b := open(t)
	ctx := context.Background()
	task := newTask("t-expires", 300*time.Millisecond)
	if err := a.Create(ctx, task); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, task.ID); err != nil {
		t.Fatalf("Get before expiry: %v", err)
	}
	time.Sleep(time.Until(task.Expires) + 200*time.Millisecond)
	if _, err := b.Get(ctx, task.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("Get after expiry = %v, want ErrNotFound", err)
	}
	if _, err := a.Update(ctx, task.ID, func(*tasks.Task) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("Update after expiry = %v, want ErrNotFound", err)
	}
	// The ID of an expired task is free again.
	if err := b.Create(ctx, newTask(task.ID, time.Minute)); err != nil {
		t.Fatalf("Create with the ID of an expired task: %v", err)
	}
	// An update keeps the expiry the task was created with.
	long := newTask("t-expires-updated", 400*time.Millisecond)
	if err := a.Create(ctx, long); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Update(ctx, long.ID, func(x *tasks.Task) error { x.Status = tasks.Completed; return nil }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(long.Expires) + 200*time.Millisecond)
	if _, err := a.Get(ctx, long.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("Get of an updated task after expiry = %v, want ErrNotFound", err)
	}
}

func atomicUpdates(t *testing.T, open Open) {
	a, b := open(t)
	ctx := context.Background()
	task := newTask("t-atomic", time.Minute)
	if err := a.Create(ctx, task); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, err := s.Update(ctx, task.ID, func(x *tasks.Task) error {
					var n int
					fmt.Sscan(x.StatusMessage, &n)
					x.StatusMessage = fmt.Sprint(n + 1)
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Update: %v", err)
	}
	got, err := a.Get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.StatusMessage != fmt.Sprint(writers*each) {
		t.Fatalf("after %d concurrent increments the count is %s: an update was lost", writers*each, got.StatusMessage)
	}
}

func abort(t *testing.T, open Open) {
	a, b := open(t)
	ctx := context.Background()
	task := newTask("t-abort", time.Minute)
	if err := a.Create(ctx, task); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("already ended")
	_, err := b.Update(ctx, task.ID, func(x *tasks.Task) error {
		x.Status = tasks.Cancelled
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Update = %v, want the change's own error", err)
	}
	got, err := a.Get(ctx, task.ID)
	if err != nil || got.Status != tasks.Working {
		t.Fatalf("after an aborted update: %+v, %v; want it unchanged", got, err)
	}
}

func publish(t *testing.T, open Open) {
	a, b := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := b.Subscribe(ctx)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	// A subscription may take a moment to reach a shared store: publish
	// until it arrives.
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := a.Publish(ctx, "t-published"); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		select {
		case id := <-events:
			if id != "t-published" {
				t.Fatalf("Subscribe delivered %q, want t-published", id)
			}
			cancel()
			for range events { // the channel closes with ctx
			}
			return
		case <-tick.C:
		case <-deadline:
			t.Fatal("nothing published reached the other handle's subscription in 10s")
		}
	}
}

func updateReturns(t *testing.T, open Open) {
	a, b := open(t)
	ctx := context.Background()
	task := newTask("t-returns", time.Minute)
	task.Principal = "alice"
	if err := a.Create(ctx, task); err != nil {
		t.Fatal(err)
	}
	got, err := b.Update(ctx, task.ID, func(x *tasks.Task) error {
		// change gets the task as stored.
		if x.Principal != "alice" || string(x.Call) != string(task.Call) || !x.Expires.Equal(task.Expires) {
			return fmt.Errorf("change got %+v, want the task as created", x)
		}
		x.Status = tasks.Completed
		x.Owner = ""
		x.Result = []byte(`{"content":[]}`)
		return nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got.Status != tasks.Completed || got.Owner != "" || string(got.Result) != `{"content":[]}` || got.Principal != "alice" {
		t.Fatalf("Update returned %+v, want the changed task", got)
	}
	stored, err := a.Get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status != got.Status || stored.Owner != got.Owner || string(stored.Result) != string(got.Result) || !stored.Expires.Equal(task.Expires) {
		t.Fatalf("Get after Update = %+v, want %+v", stored, got)
	}
	// What Update returned is the caller's own.
	got.Status = tasks.Failed
	if again, err := b.Get(ctx, task.ID); err != nil || again.Status != tasks.Completed {
		t.Fatalf("Get after editing what Update returned = %+v, %v; want it unchanged", again, err)
	}
}

// publishEvery checks that one Publish reaches every subscription, the
// publisher's own included: each replica's owner of a task listens.
func publishEvery(t *testing.T, open Open) {
	a, b := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	subs := map[string]<-chan string{}
	for name, s := range map[string]tasks.Store{"a": a, "b": b} {
		events, err := s.Subscribe(ctx)
		if err != nil {
			t.Fatalf("Subscribe on %s: %v", name, err)
		}
		subs[name] = events
	}
	got := map[string]bool{}
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for len(got) < len(subs) {
		if err := a.Publish(ctx, "t-every"); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	wait:
		for {
			select {
			case id := <-subs["a"]:
				if id != "t-every" {
					t.Fatalf("a's subscription delivered %q, want t-every", id)
				}
				got["a"] = true
			case id := <-subs["b"]:
				if id != "t-every" {
					t.Fatalf("b's subscription delivered %q, want t-every", id)
				}
				got["b"] = true
			case <-tick.C:
				break wait
			case <-deadline:
				t.Fatalf("in 10s, a Publish reached only %v of the subscriptions a and b", got)
			}
		}
	}
	cancel()
	for _, events := range subs {
		for range events { // each channel closes with ctx
		}
	}
}
