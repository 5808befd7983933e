package plugin

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// Flavor is the plugin ABI a module was written for.
type Flavor string

// Flavors the host loads. A module that exports mcphost_abi_version is
// mcphost's; one that does not is read as hyper-mcp's: v1 when it exports
// describe and call, else v2. hyper-mcp's v2 exports and envelope are
// mcphost's; the differences are adapted here, so the bridge speaks one ABI.
const (
	FlavorMCPHost    Flavor = "mcphost"
	FlavorHyperMCPv1 Flavor = "hyper-mcp v1"
	FlavorHyperMCPv2 Flavor = "hyper-mcp v2"
)

// hyper-mcp v1 exports.
const (
	v1Describe = "describe" // () -> ListToolsResult
	v1Call     = "call"     // {"params": CallToolRequest params} -> CallToolResult
)

// adapt maps a call of an mcphost export with its ABI input to the export
// and input the plugin's flavor expects.
func (p *Plugin) adapt(export string, input []byte) (string, []byte, error) {
	switch p.flavor {
	case FlavorHyperMCPv1:
		switch export {
		case abi.ExportListTools:
			return v1Describe, nil, nil
		case abi.ExportCallTool:
			var in struct {
				Request map[string]json.RawMessage `json:"request"`
				Context struct {
					Meta json.RawMessage `json:"_meta"`
				} `json:"context"`
			}
			if err := json.Unmarshal(input, &in); err != nil {
				return "", nil, fmt.Errorf("adapt call_tool input for hyper-mcp v1: %w", err)
			}
			// hyper-mcp v1 passes the request's params whole: their _meta,
			// which the envelope carries in its context only, goes back in.
			if m := in.Context.Meta; len(m) > 0 && string(m) != "{}" && string(m) != "null" && in.Request != nil {
				in.Request["_meta"] = m
			}
			b, err := json.Marshal(struct {
				Params map[string]json.RawMessage `json:"params"`
			}{in.Request})
			return v1Call, b, err
		}
	case FlavorHyperMCPv2:
		if export == abi.ExportComplete {
			// hyper-mcp passes ref.type without its "ref/" prefix.
			var in struct {
				Request map[string]json.RawMessage `json:"request"`
				Context json.RawMessage            `json:"context"`
			}
			if err := json.Unmarshal(input, &in); err != nil {
				return "", nil, fmt.Errorf("adapt complete input for hyper-mcp v2: %w", err)
			}
			var ref map[string]any
			if err := json.Unmarshal(in.Request["ref"], &ref); err == nil {
				if t, ok := ref["type"].(string); ok {
					ref["type"] = strings.TrimPrefix(t, "ref/")
				}
				b, err := json.Marshal(ref)
				if err != nil {
					return "", nil, err
				}
				in.Request["ref"] = b
			}
			b, err := json.Marshal(in)
			return export, b, err
		}
	}
	return export, input, nil
}

// detectFlavor reads the flavor from the module's exports.
func detectFlavor(exports func(string) bool) Flavor {
	switch {
	case exports(abi.VersionExport):
		return FlavorMCPHost
	case exports(v1Describe) && exports(v1Call) && !exports(abi.ExportListTools):
		return FlavorHyperMCPv1
	default:
		return FlavorHyperMCPv2
	}
}
