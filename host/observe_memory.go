package host

import "github.com/prometheus/client_golang/prometheus"

// The memory budget and the shared compiled code, beside the lazy
// activation metrics of observe.go (package plugin: budget.go, shared.go).
var (
	memoryHeldDesc = prometheus.NewDesc("mcphost_memory_held_bytes",
		"Wasm memory the plugins' instances hold now, each counted at its memory_mb.", nil, nil)
	memoryBudgetDesc = prometheus.NewDesc("mcphost_memory_budget_bytes",
		"[server] max_memory_mb in bytes; 0 when there is no budget.", nil, nil)
	memoryReservedDesc = prometheus.NewDesc("mcphost_memory_reserved_bytes",
		"Memory reserved in the budget for the loaded plugins: one instance (memory_mb) of each; more than mcphost_memory_budget_bytes when the guarantee of an instance for every plugin does not hold.", nil, nil)
	memoryWaitingDesc = prometheus.NewDesc("mcphost_memory_waiting_calls",
		"Calls waiting now for room in the memory budget.", nil, nil)
	evictionsDesc = prometheus.NewDesc("mcphost_memory_evictions_total",
		"Idle instances closed to make room in the memory budget for another plugin's.", nil, nil)
	pluginMemoryDesc = prometheus.NewDesc("mcphost_plugin_memory_bytes",
		"Wasm memory a plugin's instances hold now, each counted at its memory_mb.", []string{"plugin"}, nil)
	pluginEvictionsDesc = prometheus.NewDesc("mcphost_plugin_evictions_total",
		"A plugin's idle instances closed to make room in the memory budget for another plugin's.", []string{"plugin"}, nil)
	codeModulesDesc = prometheus.NewDesc("mcphost_code_modules",
		"Compiled modules held now: one per distinct module among the active plugins and the released ones keeping theirs.", nil, nil)
	codeLoadsDesc = prometheus.NewDesc("mcphost_code_loads_total",
		"Times a module's machine code was compiled, or read from the on-disk cache, into memory; an activation that finds it held by another plugin of the same module, or kept since its release, does not count.", nil, nil)
	codeKeptDesc = prometheus.NewDesc("mcphost_code_kept_modules",
		"Released plugins keeping their compiled module for their next call ([server] max_idle_code_mb).", nil, nil)
	codeKeptBytesDesc = prometheus.NewDesc("mcphost_code_kept_bytes",
		"What the compiled modules kept by released plugins hold, as the host estimates it (each counted at 6 times its module's size plus 1 MiB).", nil, nil)
	codeKeepLimitDesc = prometheus.NewDesc("mcphost_code_kept_limit_bytes",
		"[server] max_idle_code_mb in bytes; 0 when released plugins keep no compiled code.", nil, nil)
	codeDroppedDesc = prometheus.NewDesc("mcphost_code_kept_dropped_total",
		"Compiled modules of released plugins freed to stay within [server] max_idle_code_mb, the least recently released first.", nil, nil)
)

// describeMemory sends the descriptions of the memory metrics.
func describeMemory(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{memoryHeldDesc, memoryBudgetDesc, memoryReservedDesc, memoryWaitingDesc, evictionsDesc, pluginMemoryDesc, pluginEvictionsDesc, codeModulesDesc, codeLoadsDesc, codeKeptDesc, codeKeptBytesDesc, codeKeepLimitDesc, codeDroppedDesc} {
		ch <- d
	}
}

// collectMemory sends the host-wide memory metrics; the per-plugin ones
// are sent with each plugin's lifecycle (observe.go).
func (h *Host) collectMemory(ch chan<- prometheus.Metric) {
	b := h.budget.Stats()
	ch <- prometheus.MustNewConstMetric(memoryHeldDesc, prometheus.GaugeValue, float64(b.Held))
	ch <- prometheus.MustNewConstMetric(memoryBudgetDesc, prometheus.GaugeValue, float64(b.Limit))
	ch <- prometheus.MustNewConstMetric(memoryReservedDesc, prometheus.GaugeValue, float64(b.Reserved))
	ch <- prometheus.MustNewConstMetric(memoryWaitingDesc, prometheus.GaugeValue, float64(b.Waiting))
	ch <- prometheus.MustNewConstMetric(evictionsDesc, prometheus.CounterValue, float64(b.Evicted))
	c := h.code.Stats()
	ch <- prometheus.MustNewConstMetric(codeModulesDesc, prometheus.GaugeValue, float64(c.Modules))
	ch <- prometheus.MustNewConstMetric(codeLoadsDesc, prometheus.CounterValue, float64(c.Loads))
	ch <- prometheus.MustNewConstMetric(codeKeptDesc, prometheus.GaugeValue, float64(c.Kept))
	ch <- prometheus.MustNewConstMetric(codeKeptBytesDesc, prometheus.GaugeValue, float64(c.KeptBytes))
	ch <- prometheus.MustNewConstMetric(codeKeepLimitDesc, prometheus.GaugeValue, float64(c.KeepLimit))
	ch <- prometheus.MustNewConstMetric(codeDroppedDesc, prometheus.CounterValue, float64(c.Dropped))
}
