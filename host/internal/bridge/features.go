package bridge

import (
	"context"
	"fmt"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mcphost/mcphost/abi"
)

// ListResources asks a plugin for its resources and checks each: an
// absolute URI, unique within the plugin, and a name.
func ListResources(ctx context.Context, p Caller) ([]*mcp.Resource, error) {
	res, err := list[mcp.ListResourcesResult](ctx, p, abi.ExportListResources)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, r := range res.Resources {
		if r == nil {
			return nil, fmt.Errorf("%s: resource #%d is null", abi.ExportListResources, i+1)
		}
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme == "" {
			return nil, fmt.Errorf("%s: resource #%d: uri %q is not an absolute URI", abi.ExportListResources, i+1, r.URI)
		}
		if r.Name == "" {
			return nil, fmt.Errorf("%s: resource %q: name is missing", abi.ExportListResources, r.URI)
		}
		if err := checkText(r.Title, r.Description); err != nil {
			return nil, fmt.Errorf("%s: resource %q: %w", abi.ExportListResources, r.URI, err)
		}
		if seen[r.URI] {
			return nil, fmt.Errorf("%s: resource %q is listed twice", abi.ExportListResources, r.URI)
		}
		seen[r.URI] = true
	}
	return res.Resources, nil
}

// ListResourceTemplates asks a plugin for its resource templates and checks
// that each is a valid RFC 6570 template of an absolute URI.
func ListResourceTemplates(ctx context.Context, p Caller) ([]*mcp.ResourceTemplate, error) {
	res, err := list[mcp.ListResourceTemplatesResult](ctx, p, abi.ExportListResourceTemplates)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, t := range res.ResourceTemplates {
		if t == nil {
			return nil, fmt.Errorf("%s: template #%d is null", abi.ExportListResourceTemplates, i+1)
		}
		if _, err := uritemplate.New(t.URITemplate); err != nil {
			return nil, fmt.Errorf("%s: template %q: not an RFC 6570 URI template: %v", abi.ExportListResourceTemplates, t.URITemplate, err)
		}
		if u, err := url.Parse(t.URITemplate); err != nil || u.Scheme == "" {
			return nil, fmt.Errorf("%s: template %q: not an absolute URI template", abi.ExportListResourceTemplates, t.URITemplate)
		}
		if t.Name == "" {
			return nil, fmt.Errorf("%s: template %q: name is missing", abi.ExportListResourceTemplates, t.URITemplate)
		}
		if seen[t.URITemplate] {
			return nil, fmt.Errorf("%s: template %q is listed twice", abi.ExportListResourceTemplates, t.URITemplate)
		}
		seen[t.URITemplate] = true
	}
	return res.ResourceTemplates, nil
}

// ReadResource asks the plugin for a resource's contents.
func ReadResource(ctx context.Context, p Caller, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	res, err := invoke[mcp.ReadResourceResult](ctx, p, abi.ExportReadResource, req.Params, req.Params.Meta, req.ClientCapabilities())
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

// ListPrompts asks a plugin for its prompts and checks their names.
func ListPrompts(ctx context.Context, p Caller) ([]*mcp.Prompt, error) {
	res, err := list[mcp.ListPromptsResult](ctx, p, abi.ExportListPrompts)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, pr := range res.Prompts {
		if pr == nil {
			return nil, fmt.Errorf("%s: prompt #%d is null", abi.ExportListPrompts, i+1)
		}
		if !validToolName.MatchString(pr.Name) {
			return nil, fmt.Errorf("%s: prompt #%d: name %q is invalid (1-128 characters from A-Z a-z 0-9 _ - .)", abi.ExportListPrompts, i+1, pr.Name)
		}
		if seen[pr.Name] {
			return nil, fmt.Errorf("%s: prompt %q is listed twice", abi.ExportListPrompts, pr.Name)
		}
		seen[pr.Name] = true
		if err := checkText(pr.Title, pr.Description); err != nil {
			return nil, fmt.Errorf("%s: prompt %q: %w", abi.ExportListPrompts, pr.Name, err)
		}
		for j, a := range pr.Arguments {
			if a == nil || a.Name == "" {
				return nil, fmt.Errorf("%s: prompt %q: argument #%d has no name", abi.ExportListPrompts, pr.Name, j+1)
			}
		}
	}
	return res.Prompts, nil
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
	res, err := invoke[mcp.GetPromptResult](ctx, p, abi.ExportGetPrompt, &params, req.Params.Meta, req.ClientCapabilities())
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
	res, err := invoke[mcp.CompleteResult](ctx, p, abi.ExportComplete, &params, req.Params.Meta, req.ClientCapabilities())
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
