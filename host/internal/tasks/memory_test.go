package tasks_test

import (
	"testing"

	"github.com/mcphost/mcphost/host/internal/tasks"
	"github.com/mcphost/mcphost/host/internal/tasks/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(*testing.T) (tasks.Store, tasks.Store) {
		m := tasks.NewMemory()
		return m, m
	})
}
