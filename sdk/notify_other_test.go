//go:build !wasip1

package sdk

import (
	"math"
	"testing"
)

func TestNotifications(t *testing.T) {
	stubCalls = nil
	defer func() { stubCalls = nil }()
	ctx := &Context{}
	ctx.LogMessage(LevelInfo, "started")
	ctx.LogMessageAs("db", LevelWarning, map[string]any{"rows": 3})
	ctx.LogMessage("error", math.NaN()) // does not marshal: sent as an explanation
	ctx.Progress(50, 100, "half way")
	ctx.Progress(1, 0, "")
	ResourceUpdated("test://x")
	ToolListChanged()
	ResourceListChanged()
	PromptListChanged()

	want := []stubCall{
		{"notify_logging_message", `{"level":"info","data":"started"}`},
		{"notify_logging_message", `{"level":"warning","logger":"db","data":{"rows":3}}`},
		{"notify_logging_message", `{"level":"error","data":"sdk: log data does not marshal to JSON: json: unsupported value: NaN"}`},
		{"notify_progress", `{"progress":50,"total":100,"message":"half way"}`},
		{"notify_progress", `{"progress":1}`},
		{"notify_resource_updated", `{"uri":"test://x"}`},
		{"notify_tool_list_changed", ""},
		{"notify_resource_list_changed", ""},
		{"notify_prompt_list_changed", ""},
	}
	if len(stubCalls) != len(want) {
		t.Fatalf("calls = %q", stubCalls)
	}
	for i, c := range stubCalls {
		if c != want[i] {
			t.Errorf("call %d = %q, want %q", i, c, want[i])
		}
	}
}
