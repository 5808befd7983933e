package tasks_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/internal/tasks"
	"github.com/mcphost/mcphost/host/internal/tasks/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(*testing.T) (tasks.Store, tasks.Store) {
		m := tasks.NewMemory(0)
		return m, m
	})
}

// TestMemoryLimit: a full Memory store refuses a new task, naming its
// limit, and takes one again once a task has expired.
func TestMemoryLimit(t *testing.T) {
	m := tasks.NewMemory(2)
	ctx := context.Background()
	now := time.Now()
	mk := func(id string, ttl time.Duration) *tasks.Task {
		return &tasks.Task{ID: id, Status: tasks.Working, CreatedAt: now, UpdatedAt: now, Expires: now.Add(ttl)}
	}
	if err := m.Create(ctx, mk("a", 200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, mk("b", time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, mk("c", time.Minute)); !errors.Is(err, tasks.ErrFull) || !strings.Contains(err.Error(), "2 tasks") {
		t.Fatalf("Create past the limit = %v, want ErrFull naming it", err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := m.Create(ctx, mk("c", time.Minute)); err != nil {
		t.Fatalf("Create once a task expired = %v", err)
	}
}
