package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

// The fixtures of the Tasks extension (SEP-2663) that the conformance
// suite's tasks-* scenarios call. A tool that supports tasks declares it
// (abi.Tool.Execution); when the host may run a call as a task
// (ctx.CanRunAsTask) the handler says whether it wants to (sdk.RunAsTask),
// and the host calls it again inside the task (ctx.TaskID), where it may
// take until the task's deadline.

var (
	taskOptional = &abi.ToolExecution{TaskSupport: abi.TaskOptional}
	taskRequired = &abi.ToolExecution{TaskSupport: abi.TaskRequired}
)

func registerTaskTools() {
	sdk.AddTool(abi.Tool{
		Name:        "greet",
		Description: "Says hello to name; never runs as a task",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(_ *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
		var in struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, sdk.InvalidParams("greet: %v", err)
		}
		return sdk.TextResult(fmt.Sprintf("Hello, %s!", in.Name)), nil
	})

	sdk.AddTool(abi.Tool{
		Name:        "slow_compute",
		Description: "Works for the given number of seconds (0: answers at once), as a task when the client supports them",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":3600},"label":{"type":"string"}},"required":["seconds"]}`),
		Execution:   taskOptional,
	}, slowCompute)

	sdk.AddTool(abi.Tool{
		Name:        "failing_job",
		Description: "Runs only as a task, and fails as a tool after about a second",
		InputSchema: emptyObject,
		Execution:   taskRequired,
	}, func(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
		if ctx.CanRunAsTask() {
			return sdk.RunAsTask(), nil
		}
		time.Sleep(time.Second)
		return nil, errors.New("failing_job failed, as it always does")
	})

	sdk.AddTool(abi.Tool{
		Name:        "protocol_error_job",
		Description: "Runs as a task and ends in a protocol error (the task fails)",
		InputSchema: emptyObject,
		Execution:   taskOptional,
	}, func(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
		if ctx.CanRunAsTask() {
			return sdk.RunAsTask(), nil
		}
		return nil, &abi.Error{Code: -32603, Message: "protocol_error_job: an internal error, on purpose"}
	})

	sdk.AddTool(abi.Tool{
		Name:        "confirm_delete",
		Description: "Asks the user to confirm, inside a task, before deleting filename (deletes nothing)",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}`),
		Execution:   taskOptional,
	}, confirmDelete)

	sdk.AddTool(abi.Tool{
		Name:        "multi_input",
		Description: "Asks two questions at once, inside a task",
		InputSchema: emptyObject,
		Execution:   taskOptional,
	}, multiInput)

	sdk.AddTool(abi.Tool{
		Name:        "test_tool_with_task",
		Description: "Asks for user_name (multi-round trip), then greets the user from a task",
		InputSchema: emptyObject,
		Execution:   taskRequired,
	}, toolWithTask)
}

// slowCompute works for the number of seconds asked. seconds 0 answers at
// once, without a task.
func slowCompute(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("slow_compute: %v", err)
	}
	if in.Seconds > 0 && ctx.CanRunAsTask() {
		return sdk.RunAsTask(), nil
	}
	// The host's clock: a sleep ends early when the call is cancelled.
	time.Sleep(time.Duration(in.Seconds * float64(time.Second)))
	label := in.Label
	if label == "" {
		label = "slow_compute"
	}
	return sdk.TextResult(fmt.Sprintf("%s: computed for %gs", label, in.Seconds)), nil
}

var deleteSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

// confirmDelete asks, from inside a task, whether to delete filename.
func confirmDelete(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	if ctx.CanRunAsTask() {
		return sdk.RunAsTask(), nil
	}
	var in struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("confirm_delete: %v", err)
	}
	answer, ok := ctx.ElicitResponse("confirm")
	if !ok {
		return sdk.InputRequired(map[string]json.RawMessage{
			"confirm": sdk.ElicitRequest(fmt.Sprintf("Delete %s?", in.Filename), deleteSchema),
		}, ""), nil
	}
	if answer.Accepted() && answer.Content["confirm"] == true {
		return sdk.TextResult(fmt.Sprintf("Deleted %s (not really: this is a test fixture)", in.Filename)), nil
	}
	return sdk.TextResult(fmt.Sprintf("Kept %s", in.Filename)), nil
}

// multiInput asks two questions at once, from inside a task, and completes
// when both are answered.
func multiInput(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	if ctx.CanRunAsTask() {
		return sdk.RunAsTask(), nil
	}
	first, ok1 := ctx.ElicitResponse("first")
	second, ok2 := ctx.ElicitResponse("second")
	if !ok1 || !ok2 {
		return sdk.InputRequired(map[string]json.RawMessage{
			"first":  sdk.ElicitRequest("First name?", nameSchema),
			"second": sdk.ElicitRequest("Second name?", nameSchema),
		}, ""), nil
	}
	return sdk.TextResult(fmt.Sprintf("Got %v and %v", first.Content["name"], second.Content["name"])), nil
}

// toolWithTask gathers user_name by a multi-round trip first, and runs as
// a task only once it has it.
func toolWithTask(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	answer, ok := ctx.ElicitResponse("user_name")
	if !ok || !answer.Accepted() {
		return sdk.InputRequired(map[string]json.RawMessage{
			"user_name": sdk.ElicitRequest("What is your name?", nameSchema),
		}, ""), nil
	}
	if ctx.CanRunAsTask() {
		return sdk.RunAsTask(), nil
	}
	return sdk.TextResult(fmt.Sprintf("Hello, %v! (from a task)", answer.Content["name"])), nil
}
