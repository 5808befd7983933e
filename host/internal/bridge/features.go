package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	yosida "github.com/yosida95/uritemplate/v3"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/uritemplate"
)

// ListResources asks a plugin for its resources and checks each on its
// own: an absolute URI, unique within the plugin, a name, and no hidden
// text anywhere in it (see checkText). A resource that fails is left out
// and refused says why; so are the resources past lim.
func ListResources(ctx context.Context, p Caller, lim Limits) (resources []*mcp.Resource, refused []Refusal, err error) {
	raws, refused, err := listItems(ctx, p, abi.ExportListResources, "resource", lim,
		func(r *struct {
			Resources []json.RawMessage `json:"resources"`
		}) []json.RawMessage {
			return r.Resources
		})
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for i, raw := range raws {
		var r mcp.Resource
		key, err := decodeItem(raw, &r)
		key.URI = cmp.Or(key.URI, r.URI)
		if err == nil {
			err = checkResource(&r, seen)
		}
		if err != nil {
			refused = append(refused, refuse(abi.ExportListResources, "resource", i, key.URI, err))
			continue
		}
		seen[r.URI] = true
		resources = append(resources, &r)
	}
	return resources, refused, nil
}

func checkResource(r *mcp.Resource, seen map[string]bool) error {
	if u, err := url.Parse(r.URI); err != nil || u.Scheme == "" {
		return at("/uri", fmt.Errorf("uri %s is not an absolute URI", ShowName(r.URI)))
	}
	if r.Name == "" {
		return at("/name", errors.New("name is missing"))
	}
	if err := lookAlike(r.Name); err != nil {
		return at("/name", fmt.Errorf("name %s %w", ShowName(r.Name), err))
	}
	if seen[r.URI] {
		return at("/uri", errors.New("is listed twice (the first is kept)"))
	}
	return nil
}

// itemName names item i in an error: by its key (name or URI) when it has
// one that is not itself the problem, else by its position.
func itemName(i int, key string) string {
	if key == "" || visibleText(key) != nil || len(key) > 200 {
		return fmt.Sprintf("#%d", i+1)
	}
	return strconv.QuoteToASCII(key)
}

// ListResourceTemplates asks a plugin for its resource templates and checks
// each on its own: a valid RFC 6570 template of an absolute URI, unique
// within the plugin, a name, and no hidden text anywhere in it (see
// checkText). A template that fails is left out and refused says why; so
// are the templates past lim.
func ListResourceTemplates(ctx context.Context, p Caller, lim Limits) (templates []*mcp.ResourceTemplate, refused []Refusal, err error) {
	raws, refused, err := listItems(ctx, p, abi.ExportListResourceTemplates, "template", lim,
		func(r *struct {
			ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
		}) []json.RawMessage {
			return r.ResourceTemplates
		})
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for i, raw := range raws {
		var t mcp.ResourceTemplate
		key, err := decodeItem(raw, &t)
		key.URITemplate = cmp.Or(key.URITemplate, t.URITemplate)
		if err == nil {
			err = checkTemplate(&t, seen)
		}
		if err != nil {
			refused = append(refused, refuse(abi.ExportListResourceTemplates, "template", i, key.URITemplate, err))
			continue
		}
		seen[t.URITemplate] = true
		templates = append(templates, &t)
	}
	return templates, refused, nil
}

func checkTemplate(t *mcp.ResourceTemplate, seen map[string]bool) error {
	parsed, err := uritemplate.Parse(t.URITemplate)
	if err != nil {
		return at("/uriTemplate", fmt.Errorf("not an RFC 6570 URI template: %w", err))
	}
	if parsed.Scheme() == "" {
		return at("/uriTemplate", errors.New(`has no scheme: an absolute URI template begins with one, e.g. "note://{id}" (RFC 3986)`))
	}
	// go-sdk parses it again when it is registered, with its own parser,
	// and panics if that refuses it.
	if _, err := yosida.New(t.URITemplate); err != nil {
		return at("/uriTemplate", fmt.Errorf("not a URI template go-sdk can serve: %w", err))
	}
	if t.Name == "" {
		return at("/name", errors.New("name is missing"))
	}
	if err := lookAlike(t.Name); err != nil {
		return at("/name", fmt.Errorf("name %s %w", ShowName(t.Name), err))
	}
	if seen[t.URITemplate] {
		return at("/uriTemplate", errors.New("is listed twice (the first is kept)"))
	}
	return nil
}

// TemplateMatch is a resource template a URI matched, and the values of
// its variables in the URI.
type TemplateMatch struct {
	// Template is the template as the plugin listed it.
	Template string
	// Variables are the values Template.Match gave (see
	// uritemplate.Template.Match).
	Variables map[string]any
}

// ReadResource asks the plugin for a resource's contents. match, when the
// URI is not one of the plugin's resources, is the template it matched,
// whose variables the plugin receives in the call's context.
func ReadResource(ctx context.Context, p Caller, req *mcp.ReadResourceRequest, match *TemplateMatch) (*mcp.ReadResourceResult, error) {
	params := *req.Params
	params.Meta = nil // sent once, in context._meta
	res, err := invoke[mcp.ReadResourceResult](ctx, p, abi.ExportReadResource, &params, req.Params.Meta, req.ClientCapabilities(), match)
	if err != nil {
		return nil, err
	}
	for i, c := range res.Contents {
		if c == nil {
			return nil, RPCError(fmt.Errorf("plugin %q: %s: contents #%d is null", p.Name(), abi.ExportReadResource, i+1))
		}
	}
	if res.Contents == nil && res.InputRequests == nil {
		res.Contents = []*mcp.ResourceContents{}
	}
	return res, nil
}

// ListPrompts asks a plugin for its prompts and checks each on its own: a
// valid name, unique within the plugin, named arguments, and no hidden
// text anywhere in it (see checkText). A prompt that fails is left out and
// refused says why; so are the prompts past lim.
func ListPrompts(ctx context.Context, p Caller, lim Limits) (prompts []*mcp.Prompt, refused []Refusal, err error) {
	raws, refused, err := listItems(ctx, p, abi.ExportListPrompts, "prompt", lim,
		func(r *struct {
			Prompts []json.RawMessage `json:"prompts"`
		}) []json.RawMessage {
			return r.Prompts
		})
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for i, raw := range raws {
		var pr mcp.Prompt
		key, err := decodeItem(raw, &pr)
		key.Name = cmp.Or(key.Name, pr.Name)
		if err == nil {
			err = checkPrompt(&pr, seen)
		}
		if err != nil {
			refused = append(refused, refuse(abi.ExportListPrompts, "prompt", i, key.Name, err))
			continue
		}
		seen[pr.Name] = true
		prompts = append(prompts, &pr)
	}
	return prompts, refused, nil
}

func checkPrompt(pr *mcp.Prompt, seen map[string]bool) error {
	if err := checkName(pr.Name); err != nil {
		return err
	}
	if seen[pr.Name] {
		return at("/name", errors.New("is listed twice (the first is kept)"))
	}
	for j, a := range pr.Arguments {
		if a == nil || a.Name == "" {
			return at(fmt.Sprintf("/arguments/%d", j), fmt.Errorf("argument #%d has no name", j+1))
		}
		if err := lookAlike(a.Name); err != nil {
			return at(fmt.Sprintf("/arguments/%d/name", j), fmt.Errorf("argument #%d: name %s %w", j+1, ShowName(a.Name), err))
		}
	}
	return nil
}

// GetPrompt checks that every required argument is present, then asks the
// plugin for the prompt's messages.
func GetPrompt(ctx context.Context, p Caller, prompt *mcp.Prompt, pluginName string, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	for _, a := range prompt.Arguments {
		if _, ok := req.Params.Arguments[a.Name]; a.Required && !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("prompt %q: missing required argument %q", prompt.Name, a.Name)}
		}
	}
	params := *req.Params
	params.Name = pluginName
	params.Meta = nil // sent once, in context._meta
	res, err := invoke[mcp.GetPromptResult](ctx, p, abi.ExportGetPrompt, &params, req.Params.Meta, req.ClientCapabilities(), nil)
	if err != nil {
		return nil, err
	}
	for i, m := range res.Messages {
		if m == nil || m.Content == nil {
			return nil, RPCError(fmt.Errorf("plugin %q: %s: message #%d has no content", p.Name(), abi.ExportGetPrompt, i+1))
		}
	}
	if res.Messages == nil && res.InputRequests == nil {
		res.Messages = []*mcp.PromptMessage{}
	}
	return res, nil
}

// Complete asks the plugin for completions of a prompt or template argument.
// ref is the reference as the plugin knows it (its own prompt name).
func Complete(ctx context.Context, p Caller, ref *mcp.CompleteReference, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	params := *req.Params
	params.Ref = ref
	params.Meta = nil // sent once, in context._meta
	res, err := invoke[mcp.CompleteResult](ctx, p, abi.ExportComplete, &params, req.Params.Meta, req.ClientCapabilities(), nil)
	if err != nil {
		return nil, err
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	if len(res.Completion.Values) > 100 {
		// The spec caps a completion at 100 values.
		res.Completion.Values = res.Completion.Values[:100]
		res.Completion.HasMore = true
	}
	return res, nil
}
