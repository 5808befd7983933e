package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/host"
)

// leftOutItem is, in a report (validate, plugin test, plugin inspect,
// their --json), an item a plugin lists that serve would leave out.
type leftOutItem struct {
	Kind string `json:"kind"` // tool, prompt, resource, template
	// Name is the name or URI as listed (JSON escapes hidden characters);
	// Index its position in the plugin's list of its kind (0: unknown).
	Name    string `json:"name"`
	Index   int    `json:"index,omitempty"`
	Pointer string `json:"pointer"` // JSON Pointer of the part at fault, "" for the whole item
	Reason  string `json:"reason"`
	Hostile bool   `json:"hostile,omitempty"`
}

func leftOutItems(p host.PluginInfo) []leftOutItem {
	items := []leftOutItem{}
	for _, l := range p.LeftOut {
		items = append(items, leftOutItem{Kind: l.Kind, Name: l.Name, Index: l.Index, Pointer: l.Pointer, Reason: l.Reason, Hostile: l.Hostile})
	}
	return items
}

// wholePluginReason is what a report says of a plugin left out whole.
const wholePluginReason = "left out whole: it hides text or offers look-alike names (hostile, not buggy: nothing it lists is served)"

// leftOutLines describes, one line each after prefix, what serve would
// leave out of plugin p: the whole plugin when it is hostile, then every
// item, with its JSON Pointer and why.
func leftOutLines(prefix string, p host.PluginInfo) []string {
	var lines []string
	if p.Hostile {
		lines = append(lines, prefix+wholePluginReason)
	}
	for _, l := range p.LeftOut {
		lines = append(lines, prefix+describeLeftOut(l))
	}
	return lines
}

// describeLeftOut says what is left out and why: `tool #3 "../etc" at
// /name: …`.
func describeLeftOut(l host.LeftOut) string {
	where := ""
	if l.Pointer != "" {
		where = " at " + showPointer(l.Pointer)
	}
	return fmt.Sprintf("%s%s: %s", l.Label(), where, l.Reason)
}

// showPointer prints a JSON Pointer as it is when it is short printable
// ASCII, else quoted (hidden characters escaped) and shortened.
func showPointer(p string) string {
	const most = 200
	plain := len(p) <= most
	for i := 0; plain && i < len(p); i++ {
		plain = p[i] > ' ' && p[i] < 0x7f
	}
	if plain {
		return p
	}
	if len(p) > most {
		return host.ShowName(p)
	}
	return strconv.QuoteToASCII(p)
}

// leftOutError is the failure of a check (validate, plugin test, plugin
// inspect) that found items serve would leave out: it lists every one.
type leftOutError struct {
	items int
	lines []string
}

func (e *leftOutError) Error() string {
	return fmt.Sprintf("%d item(s) left out; serve would not offer them:\n  %s", e.items, strings.Join(e.lines, "\n  "))
}

// checkLeftOut returns a leftOutError for what serve would leave out of
// plugins, or nil when nothing is. Each line names file (the config) and
// the plugin; with one plugin alone (a .wasm file, plugin test and
// inspect), file is that plugin's and its name (made up) is left out.
func checkLeftOut(file string, plugins []host.PluginInfo, alone bool) error {
	e := &leftOutError{}
	for _, p := range plugins {
		prefix := fmt.Sprintf("%s: plugin %q: ", file, p.Name)
		if alone {
			prefix = file + ": "
		}
		e.items += len(p.LeftOut)
		e.lines = append(e.lines, leftOutLines(prefix, p)...)
	}
	if len(e.lines) == 0 {
		return nil
	}
	return e
}
