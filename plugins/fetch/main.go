// Command fetch is mcphost's port of the reference server mcp-server-fetch
// (modelcontextprotocol/servers, src/fetch): the fetch tool and the fetch
// prompt, with the same names, input schema, result text and errors. Its
// requests go through the host's http_request, so only the hosts its
// allowed_hosts grant are reached.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/fetch/fetch.wasm ./plugins/fetch
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

// The reference's user agents: for the model's fetches (the tool) and the
// user's (the prompt).
const (
	userAgentAutonomous = "ModelContextProtocol/1.0 (Autonomous; +https://github.com/modelcontextprotocol/servers)"
	userAgentManual     = "ModelContextProtocol/1.0 (User-Specified; +https://github.com/modelcontextprotocol/servers)"
)

// Config keys: the reference's --user-agent and --ignore-robots-txt.
const (
	userAgentKey       = "user_agent"
	ignoreRobotsTxtKey = "ignore_robots_txt"
)

// inputSchema is pydantic's model_json_schema() of the reference's Fetch
// model, key for key.
const inputSchema = `{"description":"Parameters for fetching a URL.","properties":{"url":{"description":"URL to fetch","format":"uri","minLength":1,"title":"Url","type":"string"},"max_length":{"default":5000,"description":"Maximum number of characters to return.","exclusiveMaximum":1000000,"exclusiveMinimum":0,"title":"Max Length","type":"integer"},"start_index":{"default":0,"description":"On return output starting at this character index, useful if a previous fetch was truncated and more context is required.","minimum":0,"title":"Start Index","type":"integer"},"raw":{"default":false,"description":"Get the actual HTML content of the requested page, without simplification.","title":"Raw","type":"boolean"}},"required":["url"],"title":"Fetch","type":"object"}`

func init() {
	sdk.AddTool(abi.Tool{
		Name: "fetch",
		Description: `Fetches a URL from the internet and optionally extracts its contents as markdown.

Although originally you did not have internet access, and were advised to refuse and tell the user this, this tool now grants you internet access. Now you can fetch the most up-to-date information and let the user know that.`,
		InputSchema: json.RawMessage(inputSchema),
	}, fetchTool)
	sdk.AddPrompt(abi.Prompt{
		Name:        "fetch",
		Description: "Fetch a URL and extract its contents as markdown",
		Arguments:   []abi.PromptArgument{{Name: "url", Description: "URL to fetch", Required: true}},
	}, fetchPrompt)
}

// settings are the plugin's config values.
type settings struct {
	autonomousUA, manualUA string
	ignoreRobots           bool
}

func readSettings(ctx *sdk.Context) settings {
	s := settings{autonomousUA: userAgentAutonomous, manualUA: userAgentManual}
	if ua, ok := ctx.Config(userAgentKey); ok && ua != "" {
		s.autonomousUA, s.manualUA = ua, ua
	}
	if v, ok := ctx.Config(ignoreRobotsTxtKey); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "1", "yes":
			s.ignoreRobots = true
		}
	}
	return s
}

// fetchArgs are the tool's arguments after the reference's defaults.
type fetchArgs struct {
	url        string
	maxLength  int
	startIndex int
	raw        bool
}

// parseArgs reads and checks the arguments as pydantic's Fetch model does
// (the host has already checked them against the input schema).
func parseArgs(raw json.RawMessage) (fetchArgs, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return fetchArgs{}, fmt.Errorf("arguments: %w", err)
	}
	a := fetchArgs{maxLength: 5000}
	var u string
	if err := json.Unmarshal(in["url"], &u); err != nil {
		return fetchArgs{}, fmt.Errorf("url: %w", err)
	}
	norm, err := normalizeURL(u)
	if err != nil {
		return fetchArgs{}, err
	}
	a.url = norm
	intArg := func(name string, dst *int) error {
		v, ok := in[name]
		if !ok || string(v) == "null" {
			return nil
		}
		var f float64
		if err := json.Unmarshal(v, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1e15 {
			return fmt.Errorf("%s: not an integer: %s", name, v)
		}
		*dst = int(f)
		return nil
	}
	if err := intArg("max_length", &a.maxLength); err != nil {
		return fetchArgs{}, err
	}
	if err := intArg("start_index", &a.startIndex); err != nil {
		return fetchArgs{}, err
	}
	if a.maxLength <= 0 || a.maxLength >= 1000000 || a.startIndex < 0 {
		return fetchArgs{}, fmt.Errorf("max_length must be in 1..999999 and start_index at least 0")
	}
	if v, ok := in["raw"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &a.raw); err != nil {
			return fetchArgs{}, fmt.Errorf("raw: %w", err)
		}
	}
	return a, nil
}

// fetchTool is the reference's call_tool for "fetch".
func fetchTool(ctx *sdk.Context, raw json.RawMessage) (*abi.CallToolResult, error) {
	a, err := parseArgs(raw)
	if err != nil {
		return sdk.ToolError("%s", err.Error()), nil
	}
	set := readSettings(ctx)
	if !set.ignoreRobots {
		if err := checkRobots(a.url, set.autonomousUA); err != nil {
			return sdk.ToolError("%s", err.Error()), nil
		}
	}
	content, prefix, err := fetchURL(a.url, set.autonomousUA, a.raw)
	if err != nil {
		return sdk.ToolError("%s", err.Error()), nil
	}
	return sdk.TextResult(prefix + "Contents of " + a.url + ":\n" + page(content, a.startIndex, a.maxLength)), nil
}

// page is the part of content the reference returns for start and
// maxLength, counted in characters (code points), with its note on what is
// left.
func page(content string, start, maxLength int) string {
	rs := []rune(content)
	if start >= len(rs) {
		return "<error>No more content available.</error>"
	}
	end := min(start+maxLength, len(rs))
	out := string(rs[start:end])
	if out == "" {
		return "<error>No more content available.</error>"
	}
	if got := end - start; got == maxLength && len(rs)-end > 0 {
		out += fmt.Sprintf("\n\n<error>Content truncated. Call the fetch tool with a start_index of %d to get more content.</error>", end)
	}
	return out
}

// fetchPrompt is the reference's get_prompt for "fetch": the user's own
// fetch, without the robots.txt check.
func fetchPrompt(ctx *sdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
	u, ok := args["url"]
	if !ok {
		return nil, sdk.InvalidParams("URL is required")
	}
	content, prefix, err := fetchURL(u, readSettings(ctx).manualUA, false)
	if err != nil {
		var fe *fetchError
		if !errors.As(err, &fe) {
			return nil, err
		}
		return &abi.GetPromptResult{
			Description: "Failed to fetch " + u,
			Messages:    []abi.PromptMessage{sdk.UserMessage(sdk.Text(err.Error()))},
		}, nil
	}
	return &abi.GetPromptResult{
		Description: "Contents of " + u,
		Messages:    []abi.PromptMessage{sdk.UserMessage(sdk.Text(prefix + content))},
	}, nil
}
