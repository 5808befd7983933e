package main

import (
	"strings"

	"github.com/mcphost/mcphost/host"
)

// appReport is what inspect, validate and plugin test say of one app (an
// MCP Apps ui:// resource) of a plugin.
type appReport struct {
	URI string `json:"uri"`
	// Tools are the tools whose results it shows.
	Tools []string `json:"tools"`
	// Reaches are its CSP sources ("connectDomains https://api.example.com"),
	// Permissions the browser features and Domain the origin it asks for.
	Reaches     []string `json:"reaches"`
	Permissions []string `json:"permissions,omitempty"`
	Domain      string   `json:"domain,omitempty"`
}

func appReports(apps []host.AppInfo) []appReport {
	var out []appReport
	for _, a := range apps {
		r := appReport{URI: a.URI, Tools: a.Tools, Reaches: a.Sources, Permissions: a.Permissions, Domain: a.Domain}
		if r.Tools == nil {
			r.Tools = []string{}
		}
		if r.Reaches == nil {
			r.Reaches = []string{}
		}
		out = append(out, r)
	}
	return out
}

// describeApp says, on one line, what an app is shown by and asks to
// reach: "ui://dice/app.html: shows the results of roll_dice; reaches no
// origin".
func describeApp(a appReport) string {
	parts := []string{"shows the results of " + strings.Join(a.Tools, ", ")}
	if len(a.Tools) == 0 {
		parts[0] = "no tool links to it"
	}
	if len(a.Reaches) == 0 {
		parts = append(parts, "reaches no origin")
	} else {
		parts = append(parts, "reaches "+strings.Join(a.Reaches, ", "))
	}
	if len(a.Permissions) > 0 {
		parts = append(parts, "asks for "+strings.Join(a.Permissions, ", "))
	}
	if a.Domain != "" {
		parts = append(parts, "asks for the origin "+a.Domain)
	}
	return a.URI + ": " + strings.Join(parts, "; ")
}
