package tasks_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/internal/tasks"
	"github.com/mcphost/mcphost/internal/testutil"
)

// benchRuns tells the runs of a benchmark apart (-count), which share a
// server.
var benchRuns atomic.Int64

// BenchmarkStore measures the round trips of the task store a replica
// makes, on the embedded store (the baseline) and on a local redis-server
// with two clients, as two replicas hold it:
//
//	go test -run '^$' -bench BenchmarkStore -benchtime 2000x ./host/internal/tasks/
//
// Get and Update read and change a task written by the other client;
// Publish is the time from Publish on one client to the ID's arrival on the
// other's subscription, one at a time, reported as p50 and p99.
func BenchmarkStore(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		m := tasks.NewMemory(0)
		benchStore(b, m, m)
	})
	b.Run("redis", func(b *testing.B) {
		s := testutil.StartRedis(b)
		benchStore(b, openRedis(b, s.URL(), tasks.RedisOptions{}), openRedis(b, s.URL(), tasks.RedisOptions{}))
	})
}

func benchStore(b *testing.B, a, other tasks.Store) {
	ctx := context.Background()
	now := time.Now().UTC()
	task := &tasks.Task{ID: "t-bench", Status: tasks.Working, CreatedAt: now, UpdatedAt: now, Expires: now.Add(time.Hour),
		Owner: "replica-a", Lease: now.Add(time.Minute), Principal: "alice", Call: []byte(`{"name":"slow_compute","arguments":{"seconds":3}}`)}
	if err := a.Create(ctx, task); err != nil {
		b.Fatal(err)
	}
	b.Run("Get", func(b *testing.B) {
		for b.Loop() {
			if _, err := other.Get(ctx, task.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Update", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			_, err := other.Update(ctx, task.ID, func(x *tasks.Task) error {
				x.Lease = now.Add(time.Duration(n) * time.Millisecond)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Create", func(b *testing.B) {
		run := benchRuns.Add(1)
		n := 0
		for b.Loop() {
			n++
			t := *task
			t.ID = fmt.Sprintf("t-bench-%d-%d", run, n)
			if err := other.Create(ctx, &t); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Publish", func(b *testing.B) {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		events, err := other.Subscribe(sctx)
		if err != nil {
			b.Fatal(err)
		}
		var lat []time.Duration
		n := 0
		for b.Loop() {
			n++
			id := fmt.Sprint("t-", n)
			start := time.Now()
			if err := a.Publish(ctx, id); err != nil {
				b.Fatal(err)
			}
			for got := range events {
				if got == id {
					break
				}
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-µs")
		cancel()
		for range events {
		}
	})
}
