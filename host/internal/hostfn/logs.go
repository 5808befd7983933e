package hostfn

import (
	"context"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/time/rate"

	"github.com/mcphost/mcphost/host/internal/clip"
	"github.com/mcphost/mcphost/host/internal/telemetry"
)

// Bounds on what a plugin's calls of host functions may put in the host
// log, the same as on its WASI output and its Extism log calls (package
// plugin) and apart from them: lines per second, in bursts of twice that,
// and the bytes of one value (a payload, a URL, an error naming either).
// A plugin can call a host function with a bad payload millions of times
// in one call; each would otherwise be a line.
const (
	LogLinesPerSecond = 50
	maxLogValueBytes  = 2048
)

// logBudget is a plugin's budget of host-log lines for its host-function
// calls.
type logBudget struct {
	lines   *rate.Limiter
	dropLog *rate.Limiter // how often a drop is logged
	dropped atomic.Int64
}

func newLogBudget() *logBudget {
	return &logBudget{lines: rate.NewLimiter(LogLinesPerSecond, 2*LogLinesPerSecond), dropLog: rate.NewLimiter(1, 1)}
}

// log writes one line for a plugin's host-function call, within the
// plugin's budget (the drop is logged at most once a second), with every
// string, error and byte value cut at maxLogValueBytes. A level the log
// does not record costs no budget.
// logFor is log for a line about the call ctx serves: it carries the
// call's trace_id when the host records its trace.
func (f *functions) logFor(ctx context.Context, level hclog.Level, msg string, args ...any) {
	if id := telemetry.TraceID(ctx); id != "" {
		args = append(args, "trace_id", id)
	}
	f.log(level, msg, args...)
}

func (f *functions) log(level hclog.Level, msg string, args ...any) {
	if level < f.logger.GetLevel() {
		return
	}
	if !f.logs.lines.Allow() {
		n := f.logs.dropped.Add(1)
		if f.logs.dropLog.Allow() {
			f.logger.Warn("plugin's host function calls log too much; dropping lines", "dropped_so_far", n, "limit_per_second", LogLinesPerSecond)
		}
		return
	}
	for i := 1; i < len(args); i += 2 {
		switch v := args[i].(type) {
		case string:
			args[i] = clip.Text(v, maxLogValueBytes)
		case []byte:
			args[i] = clip.Text(string(v), maxLogValueBytes)
		case error:
			args[i] = clip.Text(v.Error(), maxLogValueBytes)
		}
	}
	f.logger.Log(level, msg, args...)
}
