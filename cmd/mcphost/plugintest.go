package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mcphost/mcphost/host"
)

// checkStatus is the verdict on one thing `plugin test` tried.
type checkStatus string

const (
	checkPass checkStatus = "PASS"
	checkWarn checkStatus = "WARN" // valid MCP, but worth a look
	checkFail checkStatus = "FAIL" // not valid, or the call failed
	checkSkip checkStatus = "SKIP"
)

// check is one line of the `plugin test` report.
type check struct {
	Status checkStatus     `json:"status"`
	Kind   string          `json:"kind"` // tool, resource, prompt, plugin
	Name   string          `json:"name"`
	Detail string          `json:"detail,omitempty"`
	Args   json.RawMessage `json:"arguments,omitempty"`
	// LeftOut is set on the check of an item serve would leave out, and
	// Pointer is the JSON Pointer, in the item, of the part at fault.
	LeftOut bool          `json:"leftOut,omitempty"`
	Pointer string        `json:"pointer,omitempty"`
	Took    time.Duration `json:"tookNs,omitempty"`
	// Output is what the plugin wrote to stdout and stderr during the
	// call ("stderr: panic: …"): a Go plugin's panic, for one, is there
	// and not in the error, which says only that the module trapped.
	Output []string `json:"output,omitempty"`
}

// outputSink collects, for `plugin test`, the lines of stdout and stderr
// that the host logs for a plugin ("plugin output"), whatever the log
// level.
type outputSink struct {
	mu    sync.Mutex
	lines []string
}

// Accept implements hclog.SinkAdapter.
func (s *outputSink) Accept(_ string, _ hclog.Level, msg string, args ...any) {
	if msg != "plugin output" {
		return
	}
	var stream, line string
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "stream":
			stream = fmt.Sprint(args[i+1])
		case "line":
			line = fmt.Sprint(args[i+1])
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, stream+": "+line)
}

// take returns the lines collected since the last take.
func (s *outputSink) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := s.lines
	s.lines = nil
	return lines
}

// keyValues is a repeatable NAME=VALUE flag.
type keyValues map[string]string

func (kv keyValues) String() string { return fmt.Sprint(map[string]string(kv)) }

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not NAME=VALUE", s)
	}
	kv[k] = v
	return nil
}

// runPluginTest loads one plugin alone, in the default sandbox, and
// exercises everything it offers through a real MCP client.
func runPluginTest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcphost plugin test [--args TOOL=JSON]... [--config-value KEY=VALUE]... [--allow-path DIR=GUEST]... [--allow-host HOST]... [--timeout D] [--json] FILE.wasm")
	toolArgs := keyValues{}
	pluginConfig := keyValues{}
	fs.Var(toolArgs, "args", "`TOOL=JSON` arguments for a tool instead of generated ones (repeatable)")
	fs.Var(pluginConfig, "config-value", "`KEY=VALUE` handed to the plugin as config (repeatable)")
	paths := keyValues{}
	fs.Var(paths, "allow-path", "`DIR=GUEST`: grant the directory DIR at GUEST, as allowed_paths does (\"rw:DIR\" writable; repeatable)")
	var hosts listFlag
	fs.Var(&hosts, "allow-host", "`HOST`: let the plugin reach HOST over HTTP, as allowed_hosts does (repeatable)")
	timeout := fs.Duration("timeout", 10*time.Second, "deadline of each call")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{"usage: mcphost plugin test [--args TOOL=JSON]... [--config-value KEY=VALUE]... [--allow-path DIR=GUEST]... [--allow-host HOST]... [--timeout D] [--json] FILE.wasm"}
	}
	for name, text := range toolArgs {
		if !json.Valid([]byte(text)) {
			return &usageError{fmt.Sprintf("--args %s: not valid JSON: %s", name, text)}
		}
	}
	checks, err := testPlugin(ctx, fs.Arg(0), toolArgs, pluginConfig, grants{paths: paths, hosts: hosts}, *timeout, stderr)
	if err != nil {
		return err
	}
	failed := 0
	for _, c := range checks {
		if c.Status == checkFail {
			failed++
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checks); err != nil {
			return err
		}
	} else {
		printChecks(stdout, checks)
	}
	if failed > 0 {
		return fmt.Errorf("%s: %d of %d checks failed", fs.Arg(0), failed, len(checks))
	}
	return nil
}

// grants are what `plugin test` grants the plugin beyond the default
// sandbox: allowed_paths (host directory, "rw:" prefixed when writable,
// to guest path) and allowed_hosts.
type grants struct {
	paths map[string]string
	hosts []string
}

// toml is the grants as keys of a [[plugin]] table.
func (g grants) toml() string {
	var b strings.Builder
	if len(g.paths) > 0 {
		b.WriteString("allowed_paths = {")
		for i, dir := range slices.Sorted(maps.Keys(g.paths)) {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s = %s", tomlQuote(dir), tomlQuote(g.paths[dir]))
		}
		b.WriteString(" }\n")
	}
	if len(g.hosts) > 0 {
		quoted := make([]string, len(g.hosts))
		for i, h := range g.hosts {
			quoted[i] = tomlQuote(h)
		}
		fmt.Fprintf(&b, "allowed_hosts = [%s]\n", strings.Join(quoted, ", "))
	}
	return b.String()
}

// configTOML is config as the [plugin.config] table of a [[plugin]]
// table ("" for none).
func configTOML(config map[string]string) string {
	if len(config) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[plugin.config]\n")
	for k, v := range config {
		b.WriteString(tomlQuote(k) + " = " + tomlQuote(v) + "\n")
	}
	return b.String()
}

// tomlQuote quotes s as a TOML basic string.
func tomlQuote(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a TOML basic string
	return string(b)
}

// testPlugin loads the plugin at path alone, with only the grants g, and
// tries every tool, resource and prompt it offers.
func testPlugin(ctx context.Context, path string, toolArgs, pluginConfig map[string]string, g grants, timeout time.Duration, stderr io.Writer) ([]check, error) {
	extra := fmt.Sprintf("timeout = %q\n", timeout.String()) + g.toml()
	extra += configTOML(pluginConfig)
	logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "mcphost", Level: hclog.Warn, Output: stderr})
	output := &outputSink{}
	logger.RegisterSink(output)
	h, err := loadAlone(ctx, "tested", path, extra, host.Options{Logger: logger, LoadEveryPlugin: true})
	if err != nil {
		return []check{{Status: checkFail, Kind: "plugin", Name: path, Detail: err.Error()}}, nil
	}
	defer h.Close(context.WithoutCancel(ctx))

	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	ss, err := h.Server().Connect(ctx, serverTransport, nil)
	if err != nil {
		return nil, fmt.Errorf("plugin test: connect: %w", err)
	}
	defer ss.Close()
	// The client declares sampling, elicitation and roots, so a plugin's
	// requests for them are exercised; it answers with a fixed message,
	// declines every elicitation and offers one root.
	client := mcp.NewClient(&mcp.Implementation{Name: "mcphost-plugin-test", Version: buildVersion()}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{
				Role: "assistant", Model: "mcphost-plugin-test",
				Content: &mcp.TextContent{Text: "(mcphost plugin test: no model here; this is a fixed reply)"},
			}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///tmp/mcphost-plugin-test", Name: "plugin-test"})
	cs, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		return nil, fmt.Errorf("plugin test: connect: %w", err)
	}
	defer cs.Close()

	var checks []check
	// add records a check with what the plugin wrote meanwhile.
	add := func(c check) {
		c.Output = output.take()
		checks = append(checks, c)
	}
	output.take() // what loading wrote
	// What serve would leave out fails, item by item: the listing below
	// shows only what is served.
	for _, p := range h.Plugins() {
		if p.Hostile {
			checks = append(checks, check{Status: checkFail, Kind: "plugin", Name: path, Detail: wholePluginReason})
		}
		for _, l := range p.LeftOut {
			detail := "left out: " + l.Reason
			if l.Pointer != "" {
				detail = "left out: at " + showPointer(l.Pointer) + ": " + l.Reason
			}
			checks = append(checks, check{Status: checkFail, Kind: l.Kind, Name: strings.TrimPrefix(l.Label(), l.Kind+" "),
				Detail: detail, Pointer: l.Pointer, LeftOut: true})
		}
		// Its apps loaded, so each lies within the grants given here.
		for _, a := range appReports(p.Apps) {
			checks = append(checks, check{Status: checkPass, Kind: "app", Name: a.URI, Detail: strings.TrimPrefix(describeApp(a), a.URI+": ")})
		}
	}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			add(check{Status: checkFail, Kind: "tool", Name: "tools/list", Detail: err.Error()})
			break
		}
		add(testTool(ctx, cs, tool, toolArgs[tool.Name]))
	}
	for res, err := range cs.Resources(ctx, nil) {
		if err != nil {
			add(check{Status: checkFail, Kind: "resource", Name: "resources/list", Detail: err.Error()})
			break
		}
		add(testResource(ctx, cs, res))
	}
	for tmpl, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			add(check{Status: checkFail, Kind: "template", Name: "resources/templates/list", Detail: err.Error()})
			break
		}
		add(testTemplate(ctx, cs, tmpl, toolArgs[tmpl.URITemplate]))
	}
	for prompt, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			add(check{Status: checkFail, Kind: "prompt", Name: "prompts/list", Detail: err.Error()})
			break
		}
		add(testPrompt(ctx, cs, prompt, toolArgs[prompt.Name]))
	}
	if len(checks) == 0 {
		checks = append(checks, check{Status: checkWarn, Kind: "plugin", Name: path, Detail: "offers no tools, resources, resource templates or prompts"})
	}
	return checks, nil
}

// testTool calls a tool with the given arguments, or with arguments made up
// from its input schema, and checks the reply.
func testTool(ctx context.Context, cs *mcp.ClientSession, tool *mcp.Tool, given string) check {
	c := check{Kind: "tool", Name: tool.Name}
	args := json.RawMessage(given)
	if given == "" {
		schema, err := schemaOf(tool.InputSchema)
		if err != nil {
			c.Status, c.Detail = checkFail, "inputSchema: "+err.Error()
			return c
		}
		generated := exampleFor(schema, 0)
		if resolved, err := schema.Resolve(nil); err == nil {
			if err := resolved.Validate(generated); err != nil {
				c.Status = checkSkip
				c.Detail = fmt.Sprintf("could not make up arguments that match the inputSchema (%v); pass --args %s=JSON", err, tool.Name)
				return c
			}
		}
		args, _ = json.Marshal(generated)
	}
	c.Args = args
	began := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: args})
	c.Took = time.Since(began)
	switch {
	case err != nil:
		c.Status, c.Detail = checkFail, err.Error()
	case res.IsError:
		c.Status, c.Detail = checkWarn, "returned a tool error: "+firstText(res.Content)
	default:
		c.Status = checkPass
		if problems := contentProblems(res.Content); len(problems) > 0 {
			c.Status, c.Detail = checkFail, strings.Join(problems, "; ")
		} else if tool.Description == "" {
			c.Status, c.Detail = checkWarn, "no description: a model cannot tell when to use it"
		}
	}
	return c
}

// testResource reads a resource and checks its contents.
func testResource(ctx context.Context, cs *mcp.ClientSession, r *mcp.Resource) check {
	c := check{Kind: "resource", Name: r.URI}
	began := time.Now()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
	c.Took = time.Since(began)
	if err != nil {
		c.Status, c.Detail = checkFail, err.Error()
		return c
	}
	c.Status = checkPass
	if len(res.Contents) == 0 {
		c.Status, c.Detail = checkFail, "read returned no contents"
	}
	for _, rc := range res.Contents {
		if rc == nil || rc.URI == "" {
			c.Status, c.Detail = checkFail, "a content item has no uri"
		}
	}
	return c
}

// testTemplate reads one resource of a resource template: its variables
// are the given ones (--args TEMPLATE=JSON object of strings), else the
// plugin's first completion for each, else "example". A template that is
// not RFC 6570 fails; a read that fails is a warning, since the plugin may
// well have no resource at the made-up URI.
func testTemplate(ctx context.Context, cs *mcp.ClientSession, t *mcp.ResourceTemplate, given string) check {
	c := check{Kind: "template", Name: t.URITemplate}
	tmpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		c.Status, c.Detail = checkFail, "not an RFC 6570 URI template: "+err.Error()
		return c
	}
	vars := map[string]string{}
	if given != "" {
		if err := json.Unmarshal([]byte(given), &vars); err != nil {
			c.Status, c.Detail = checkSkip, fmt.Sprintf("--args %s: a template's variables are a JSON object of strings: %v", t.URITemplate, err)
			return c
		}
	}
	values := uritemplate.Values{}
	for _, name := range tmpl.Varnames() {
		if _, ok := vars[name]; !ok {
			vars[name] = "example"
			res, err := cs.Complete(ctx, &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: t.URITemplate},
				Argument: mcp.CompleteParamsArgument{Name: name},
			})
			if err == nil && len(res.Completion.Values) > 0 {
				vars[name] = res.Completion.Values[0]
			}
		}
		values.Set(name, uritemplate.String(vars[name]))
	}
	c.Args, _ = json.Marshal(vars)
	uri, err := tmpl.Expand(values)
	if err != nil {
		c.Status, c.Detail = checkFail, "expand: "+err.Error()
		return c
	}
	began := time.Now()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	c.Took = time.Since(began)
	if err != nil {
		c.Status, c.Detail = checkWarn, fmt.Sprintf("read %s: %v (pass --args '%s={...}' with variables it knows)", uri, err, t.URITemplate)
		return c
	}
	c.Status, c.Detail = checkPass, "read "+uri
	if len(res.Contents) == 0 {
		c.Status, c.Detail = checkFail, "read "+uri+" returned no contents"
	}
	for _, rc := range res.Contents {
		if rc == nil || rc.URI == "" {
			c.Status, c.Detail = checkFail, "read "+uri+": a content item has no uri"
		}
	}
	return c
}

// testPrompt gets a prompt with the given arguments or, for each required
// argument, the plugin's first completion for it (or "example").
func testPrompt(ctx context.Context, cs *mcp.ClientSession, p *mcp.Prompt, given string) check {
	c := check{Kind: "prompt", Name: p.Name}
	args := map[string]string{}
	if given != "" {
		if err := json.Unmarshal([]byte(given), &args); err != nil {
			c.Status, c.Detail = checkSkip, fmt.Sprintf("--args %s: a prompt's arguments are a JSON object of strings: %v", p.Name, err)
			return c
		}
	}
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; ok || !a.Required {
			continue
		}
		args[a.Name] = "example"
		res, err := cs.Complete(ctx, &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: p.Name},
			Argument: mcp.CompleteParamsArgument{Name: a.Name},
		})
		if err == nil && len(res.Completion.Values) > 0 {
			args[a.Name] = res.Completion.Values[0]
		}
	}
	c.Args, _ = json.Marshal(args)
	began := time.Now()
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: args})
	c.Took = time.Since(began)
	if err != nil {
		c.Status, c.Detail = checkFail, err.Error()
		return c
	}
	c.Status = checkPass
	var contents []mcp.Content
	for _, m := range res.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			c.Status, c.Detail = checkFail, fmt.Sprintf("message role %q is neither user nor assistant", m.Role)
			return c
		}
		contents = append(contents, m.Content)
	}
	if problems := contentProblems(contents); len(problems) > 0 {
		c.Status, c.Detail = checkFail, strings.Join(problems, "; ")
	}
	return c
}

// contentProblems checks what the client's decoder does not: binary
// content must be base64 with a MIME type, links must name their target.
func contentProblems(contents []mcp.Content) []string {
	var problems []string
	for i, content := range contents {
		switch c := content.(type) {
		case nil:
			problems = append(problems, fmt.Sprintf("content %d is null", i))
		case *mcp.ImageContent:
			if c.MIMEType == "" || len(c.Data) == 0 {
				problems = append(problems, fmt.Sprintf("content %d: image without data or mimeType", i))
			}
		case *mcp.AudioContent:
			if c.MIMEType == "" || len(c.Data) == 0 {
				problems = append(problems, fmt.Sprintf("content %d: audio without data or mimeType", i))
			}
		case *mcp.ResourceLink:
			if c.URI == "" || c.Name == "" {
				problems = append(problems, fmt.Sprintf("content %d: resource_link needs uri and name", i))
			}
		case *mcp.EmbeddedResource:
			if c.Resource == nil || c.Resource.URI == "" {
				problems = append(problems, fmt.Sprintf("content %d: embedded resource without uri", i))
			}
		}
	}
	return problems
}

func firstText(contents []mcp.Content) string {
	for _, c := range contents {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return "(no text)"
}

// schemaOf converts a schema as a client decoded it into a jsonschema.Schema.
func schemaOf(raw any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// exampleFor makes up a value that satisfies the common constraints of a
// JSON Schema: declared examples, defaults, const and enum first, then a
// plain value of the type within its bounds. Objects get their required
// properties only.
func exampleFor(s *jsonschema.Schema, depth int) any {
	if s == nil || depth > 8 {
		return nil
	}
	switch {
	case s.Const != nil:
		return *s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	case len(s.Examples) > 0:
		return s.Examples[0]
	case len(s.Default) > 0:
		var v any
		if json.Unmarshal(s.Default, &v) == nil {
			return v
		}
	case len(s.AnyOf) > 0:
		return exampleFor(s.AnyOf[0], depth+1)
	case len(s.OneOf) > 0:
		return exampleFor(s.OneOf[0], depth+1)
	case len(s.AllOf) > 0 && s.Type == "" && len(s.Types) == 0:
		return exampleFor(s.AllOf[0], depth+1)
	}
	typ := s.Type
	for _, t := range s.Types {
		if t != "null" {
			typ = t
			break
		}
	}
	switch typ {
	case "object":
		obj := map[string]any{}
		for _, name := range s.Required {
			obj[name] = exampleFor(s.Properties[name], depth+1)
		}
		return obj
	case "array":
		n := 1
		if s.MinItems != nil && *s.MinItems > n {
			n = *s.MinItems
		}
		if s.MaxItems != nil && *s.MaxItems < n {
			n = *s.MaxItems
		}
		items := make([]any, n)
		for i := range items {
			items[i] = exampleFor(s.Items, depth+1)
		}
		return items
	case "integer":
		return math.Round(numberWithin(s, 1))
	case "number":
		return numberWithin(s, 1.5)
	case "boolean":
		return true
	case "null":
		return nil
	}
	return stringFor(s)
}

// numberWithin returns preferred, moved inside the schema's bounds.
func numberWithin(s *jsonschema.Schema, preferred float64) float64 {
	v := preferred
	if s.Minimum != nil && v < *s.Minimum {
		v = math.Ceil(*s.Minimum)
	}
	if s.ExclusiveMinimum != nil && v <= *s.ExclusiveMinimum {
		v = math.Floor(*s.ExclusiveMinimum) + 1
	}
	if s.Maximum != nil && v > *s.Maximum {
		v = math.Floor(*s.Maximum)
	}
	if s.ExclusiveMaximum != nil && v >= *s.ExclusiveMaximum {
		v = math.Ceil(*s.ExclusiveMaximum) - 1
	}
	return v
}

// stringFor returns a string of the schema's format and length bounds.
func stringFor(s *jsonschema.Schema) string {
	v := "example"
	switch s.Format {
	case "uri", "url", "iri":
		v = "https://example.com/"
	case "email":
		v = "user@example.com"
	case "date-time":
		v = "2026-01-01T00:00:00Z"
	case "date":
		v = "2026-01-01"
	case "time":
		v = "12:00:00Z"
	case "uuid":
		v = "00000000-0000-4000-8000-000000000000"
	case "ipv4":
		v = "192.0.2.1"
	case "hostname":
		v = "example.com"
	}
	if s.MinLength != nil && len(v) < *s.MinLength {
		v += strings.Repeat("x", *s.MinLength-len(v))
	}
	if s.MaxLength != nil && len(v) > *s.MaxLength {
		v = v[:*s.MaxLength]
	}
	return v
}

// maxOutputShown bounds the lines of a plugin's output printed under a
// check.
const maxOutputShown = 12

func printChecks(w io.Writer, checks []check) {
	counts := map[checkStatus]int{}
	for _, c := range checks {
		counts[c.Status]++
		line := fmt.Sprintf("%s  %-8s %s", c.Status, c.Kind, c.Name)
		if c.Took > 0 {
			line += fmt.Sprintf(" (%s)", c.Took.Round(10*time.Microsecond))
		}
		if len(c.Args) > 0 && string(c.Args) != "{}" {
			line += " args " + truncate(string(c.Args), 120)
		}
		if c.Detail != "" {
			line += ": " + truncate(strings.Join(strings.Fields(c.Detail), " "), 300)
		}
		fmt.Fprintln(w, line)
		// What the plugin wrote, when something is amiss: on a trap it is
		// often the only account of what happened.
		if c.Status != checkPass {
			for i, out := range c.Output {
				if i == maxOutputShown {
					fmt.Fprintf(w, "        … %d more lines of output (--json has them all)\n", len(c.Output)-i)
					break
				}
				fmt.Fprintf(w, "        %s\n", truncate(out, 300))
			}
		}
	}
	fmt.Fprintf(w, "%d checks: %d passed, %d warnings, %d failed, %d skipped\n",
		len(checks), counts[checkPass], counts[checkWarn], counts[checkFail], counts[checkSkip])
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
