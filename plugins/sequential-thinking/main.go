// Command sequential-thinking is the sequentialthinking tool of the MCP
// reference server @modelcontextprotocol/server-sequential-thinking
// (2026.8.31) as an mcphost plugin: the same tool name, description,
// schemas and annotations, the same result text on good and bad input,
// with the session's thought count and branches kept in the host's
// per-session plugin state (ABI.md §7) instead of a process's memory.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/sequential-thinking/sequential-thinking.wasm ./plugins/sequential-thinking
package main

import (
	"encoding/json"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

func init() {
	f := false
	sdk.AddTool(abi.Tool{
		Name:         "sequentialthinking",
		Title:        "Sequential Thinking",
		Description:  description,
		InputSchema:  json.RawMessage(inputSchema),
		OutputSchema: json.RawMessage(outputSchema),
		Annotations:  &abi.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f},
	}, think)
}

// stateKey is where a session's thinking is kept in the host's state.
const stateKey = "thinking"

// session is what the reference's SequentialThinkingServer keeps that its
// answers depend on: how many thoughts its history holds, and its branch
// IDs in the order they were first used. (The reference also keeps each
// thought's text, which no answer ever shows; see README.md.)
type session struct {
	Thoughts int      `json:"thoughts"`
	Branches []string `json:"branches"`
}

// thought is a call's arguments after the reference's coercion (zod): the
// booleans may come as "true"/"false" strings in any case.
type thought struct {
	Thought           string
	NextThoughtNeeded bool
	ThoughtNumber     int64
	TotalThoughts     int64
	IsRevision        bool
	RevisesThought    *int64
	BranchFromThought *int64
	BranchID          *string
}

// think is the tool: processThought of the reference's lib.js.
func think(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	in, problems, err := parseThought(args)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return sdk.ToolError("%s", "MCP error -32602: Input validation error: Invalid arguments for tool sequentialthinking: "+strings.Join(problems, "\n")), nil
	}

	if in.ThoughtNumber > in.TotalThoughts {
		in.TotalThoughts = in.ThoughtNumber
	}
	// One read-modify-write of the session's thinking that loses no
	// concurrent call's thought (UpdateState starts again if another
	// call changed it in between).
	var s session
	var failure string
	err = sdk.UpdateState(ctx, stateKey, func(stored *session, _ bool) error {
		failure = ""
		stored.Thoughts++ // thoughtHistory.push(input)
		if in.BranchFromThought != nil && in.BranchID != nil && *in.BranchID != "" {
			switch {
			case objectPrototype[*in.BranchID]:
				// this.branches[id] is inherited from Object.prototype, and
				// not an array: the reference fails after counting the
				// thought.
				failure = "this.branches[input.branchId].push is not a function"
			case !contains(stored.Branches, *in.BranchID):
				stored.Branches = append(stored.Branches, *in.BranchID)
			}
		}
		s = *stored
		return nil
	})
	if err != nil {
		return nil, err // an isError result naming the cause
	}
	if failure != "" {
		return sdk.ToolError("%s", "{\n  \"error\": "+jsString(failure)+",\n  \"status\": \"failed\"\n}"), nil
	}
	if logging(ctx) {
		ctx.Log(sdk.LevelInfo, formatThought(in))
	}
	keys := objectKeys(s.Branches)
	text := resultText(in, keys, s.Thoughts)
	structured, _ := json.Marshal(struct {
		ThoughtNumber        int64    `json:"thoughtNumber"`
		TotalThoughts        int64    `json:"totalThoughts"`
		NextThoughtNeeded    bool     `json:"nextThoughtNeeded"`
		Branches             []string `json:"branches"`
		ThoughtHistoryLength int      `json:"thoughtHistoryLength"`
	}{in.ThoughtNumber, in.TotalThoughts, in.NextThoughtNeeded, keys, s.Thoughts})
	return &abi.CallToolResult{Content: []abi.Content{sdk.Text(text)}, StructuredContent: json.RawMessage(structured)}, nil
}

// logging reports whether thoughts go to the host log: unless the plugin's
// config sets DISABLE_THOUGHT_LOGGING to "true" (in any case), as the
// reference's environment variable does.
func logging(ctx *sdk.Context) bool {
	v, _ := ctx.Config("DISABLE_THOUGHT_LOGGING")
	return strings.ToLower(v) != "true"
}

// resultText is JSON.stringify({thoughtNumber, totalThoughts,
// nextThoughtNeeded, branches, thoughtHistoryLength}, null, 2).
func resultText(in thought, branches []string, historyLength int) string {
	var b strings.Builder
	b.WriteString("{\n  \"thoughtNumber\": ")
	b.WriteString(itoa(in.ThoughtNumber))
	b.WriteString(",\n  \"totalThoughts\": ")
	b.WriteString(itoa(in.TotalThoughts))
	b.WriteString(",\n  \"nextThoughtNeeded\": ")
	if in.NextThoughtNeeded {
		b.WriteString("true")
	} else {
		b.WriteString("false")
	}
	b.WriteString(",\n  \"branches\": ")
	if len(branches) == 0 {
		b.WriteString("[]")
	} else {
		b.WriteString("[")
		for i, id := range branches {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n    ")
			b.WriteString(jsString(id))
		}
		b.WriteString("\n  ]")
	}
	b.WriteString(",\n  \"thoughtHistoryLength\": ")
	b.WriteString(itoa(int64(historyLength)))
	b.WriteString("\n}")
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
