// Command time is mcphost's port of the reference server mcp-server-time
// (modelcontextprotocol/servers, src/time): the tools get_current_time and
// convert_time, with the same names, input schemas, result text and errors.
// The IANA time zone database is compiled into the plugin (time/tzdata),
// so it needs no file from the host.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/time/time.wasm ./plugins/time
package main

import (
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

// localZoneKey is the config key naming the zone the tool descriptions
// offer as the local one (the reference's --local-timezone).
const localZoneKey = "local_timezone"

func init() {
	local := localZoneName()
	f := false
	annotations := &abi.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f}
	sdk.AddTool(abi.Tool{
		Name:        "get_current_time",
		Description: "Get current time in a specific timezone",
		InputSchema: mustJSON(map[string]any{
			"type": "object",
			"properties": map[string]any{
				"timezone": map[string]any{
					"type":        "string",
					"description": fmt.Sprintf("IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use '%s' as local timezone if no timezone provided by the user.", local),
				},
			},
			"required": []string{"timezone"},
		}),
		Annotations: annotations,
	}, getCurrentTime)
	sdk.AddTool(abi.Tool{
		Name:        "convert_time",
		Description: "Convert time between timezones",
		InputSchema: mustJSON(map[string]any{
			"type": "object",
			"properties": map[string]any{
				"source_timezone": map[string]any{
					"type":        "string",
					"description": fmt.Sprintf("Source IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use '%s' as local timezone if no source timezone provided by the user.", local),
				},
				"time": map[string]any{
					"type":        "string",
					"description": "Time to convert in 24-hour format (HH:MM)",
				},
				"target_timezone": map[string]any{
					"type":        "string",
					"description": fmt.Sprintf("Target IANA timezone name (e.g., 'Asia/Tokyo', 'America/San_Francisco'). Use '%s' as local timezone if no target timezone provided by the user.", local),
				},
			},
			"required": []string{"source_timezone", "time", "target_timezone"},
		}),
		Annotations: annotations,
	}, convertTime)
}

// localZoneName is the configured local zone if it names a zone, else UTC:
// the reference falls back to UTC when it cannot tell the machine's zone,
// and a sandbox has no /etc/localtime to tell it from.
func localZoneName() string {
	name, ok := configValue(localZoneKey)
	if !ok || name == "" {
		return "UTC"
	}
	if _, err := loadZone(name); err != nil {
		return "UTC"
	}
	return name
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("time: schema: %v", err))
	}
	return b
}

// queryError is the text of every failed call, as the reference words it.
func queryError(err error) (*abi.CallToolResult, error) {
	return sdk.ToolError("Error processing mcp-server-time query: %s", err.Error()), nil
}

// getCurrentTime answers get_current_time.
func getCurrentTime(_ *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in map[string]any
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("get_current_time: arguments: %v", err)
	}
	zone, _ := in["timezone"].(string)
	if zone == "" { // Python's `if not timezone`
		return queryError(fmt.Errorf("Missing required argument: timezone"))
	}
	r, err := currentTime(zone, nowFunc())
	if err != nil {
		return queryError(err)
	}
	return sdk.TextResult(r.json("")), nil
}

// convertTime answers convert_time.
func convertTime(_ *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in map[string]any
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("convert_time: arguments: %v", err)
	}
	for _, k := range []string{"source_timezone", "time", "target_timezone"} {
		if _, ok := in[k]; !ok {
			return queryError(fmt.Errorf("Missing required arguments"))
		}
	}
	src, _ := in["source_timezone"].(string)
	hhmm, _ := in["time"].(string)
	dst, _ := in["target_timezone"].(string)
	r, err := conversion(src, hhmm, dst, nowFunc())
	if err != nil {
		return queryError(err)
	}
	return sdk.TextResult(r.json()), nil
}
