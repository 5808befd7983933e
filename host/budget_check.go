package host

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/plugin"
)

// checkReservations warns when [server] max_memory_mb cannot hold one
// instance of every plugin of cfg at once: the budget then cannot keep an
// instance for each, and a busy plugin may keep another waiting
// (docs/config.md says what is guaranteed then). It is a warning, not an
// error: a host of many plugins that are mostly idle may choose a budget
// smaller than all of them (RATIONALE.md).
func checkReservations(logger hclog.Logger, cfg *config.Config) {
	limit := plugin.InstanceBytes(cfg.Server.MaxMemoryMB)
	if limit == 0 {
		return
	}
	var sum int64
	var each []string
	for _, p := range cfg.Plugins {
		sum += plugin.InstanceBytes(p.MemoryMB)
		each = append(each, fmt.Sprintf("%s %d", p.Name, p.MemoryMB))
	}
	if sum <= limit {
		return
	}
	logger.Warn("[server] max_memory_mb cannot hold one instance of every plugin: a plugin is guaranteed an instance only while the others hold little; raise max_memory_mb to the plugins' memory_mb together, or lower memory_mb",
		"max_memory_mb", cfg.Server.MaxMemoryMB, "memory_mb_together", sum>>20, "plugins", strings.Join(each, ", "))
}
