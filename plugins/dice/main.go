// Command dice is mcphost's example of an MCP App (SEP-1865): a tool,
// roll_dice, whose result a client that renders MCP Apps shows in the
// plugin's page, ui://dice/app.html, with a button that rolls again by
// calling the tool from the page. Clients without apps get the same roll
// as text.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/dice/dice.wasm ./plugins/dice
package main

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

// appURI is the app's resource.
const appURI = "ui://dice/app.html"

// page is the app: HTML with its script inline, speaking the apps
// protocol (JSON-RPC over postMessage) by hand; it reaches nothing but
// its host, so its CSP declares no source.
//
//go:embed app.html
var page string

func init() {
	output, err := sdk.SchemaFor[rollOut]()
	if err != nil {
		panic(err)
	}
	sdk.AddTypedTool(abi.Tool{
		Name:         "roll_dice",
		Title:        "Roll dice",
		Description:  "Rolls dice (3d6 unless told otherwise) and returns each die and the total. Clients that render MCP Apps show the roll in a page with a button to roll again.",
		OutputSchema: output,
		Annotations:  &abi.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)},
		// The link to the app: a client that renders MCP Apps shows the
		// result in it.
		Meta: map[string]any{abi.UIMetaKey: map[string]any{"resourceUri": appURI}},
	}, roll)

	sdk.AddResource(abi.Resource{
		URI:         appURI,
		Name:        "dice_app",
		Title:       "Dice",
		Description: "Shows a roll of roll_dice, with a button to roll again.",
		MimeType:    abi.UIMimeType,
	}, func(*sdk.Context, string) (*abi.ReadResourceResult, error) {
		contents := sdk.TextContents(appURI, abi.UIMimeType, page)
		// No csp: the page reaches no origin (the host's default policy).
		contents.Meta = map[string]any{abi.UIMetaKey: map[string]any{"prefersBorder": true}}
		return &abi.ReadResourceResult{Contents: []abi.ResourceContents{contents}}, nil
	})
}

type rollIn struct {
	Count int `json:"count,omitempty" jsonschema:"How many dice, 1 to 20 (default 3)."`
	Sides int `json:"sides,omitempty" jsonschema:"Sides of each die, 2 to 100 (default 6)."`
}

type rollOut struct {
	Dice  string `json:"dice" jsonschema:"What was rolled, e.g. 3d6."`
	Rolls []int  `json:"rolls" jsonschema:"Each die."`
	Total int    `json:"total" jsonschema:"The sum."`
}

// roll rolls; the result is the roll as text, for every client, and as
// structured content, which the app shows.
func roll(_ *sdk.Context, in rollIn) (*abi.CallToolResult, error) {
	if in.Count == 0 {
		in.Count = 3
	}
	if in.Sides == 0 {
		in.Sides = 6
	}
	if in.Count < 1 || in.Count > 20 || in.Sides < 2 || in.Sides > 100 {
		return sdk.ToolError("count must be 1 to 20 and sides 2 to 100, got %d and %d", in.Count, in.Sides), nil
	}
	out := rollOut{Dice: fmt.Sprintf("%dd%d", in.Count, in.Sides)}
	for range in.Count {
		n := 1 + rand.IntN(in.Sides)
		out.Rolls = append(out.Rolls, n)
		out.Total += n
	}
	return &abi.CallToolResult{Content: []abi.Content{sdk.Text(out.String())}, StructuredContent: out}, nil
}

// String is the roll as text, for clients without apps.
func (r rollOut) String() string {
	s := make([]string, len(r.Rolls))
	for i, n := range r.Rolls {
		s[i] = fmt.Sprint(n)
	}
	return fmt.Sprintf("%s: %s (total %d)", r.Dice, strings.Join(s, ", "), r.Total)
}
