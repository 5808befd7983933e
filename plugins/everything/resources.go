package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

const watchedResourceURI = "test://watched-resource"

// textResource returns a resource handler that answers with text.
func textResource(mimeType, text string) sdk.ResourceHandler {
	return func(_ *sdk.Context, uri string) (*abi.ReadResourceResult, error) {
		return &abi.ReadResourceResult{Contents: []abi.ResourceContents{sdk.TextContents(uri, mimeType, text)}}, nil
	}
}

func registerResources() {
	sdk.AddResource(abi.Resource{
		Name:        "static-text",
		Description: "A static text resource for testing",
		MimeType:    "text/plain",
		URI:         "test://static-text",
	}, textResource("text/plain", "This is the content of the static text resource."))

	sdk.AddResource(abi.Resource{
		Name:        "static-binary",
		Description: "A static binary resource (image) for testing",
		MimeType:    "image/png",
		URI:         "test://static-binary",
	}, func(_ *sdk.Context, uri string) (*abi.ReadResourceResult, error) {
		return &abi.ReadResourceResult{Contents: []abi.ResourceContents{sdk.BlobContents(uri, "image/png", imageData)}}, nil
	})

	sdk.AddResourceTemplate(abi.ResourceTemplate{
		Name:        "template",
		Description: "A resource template with parameter substitution",
		MimeType:    "application/json",
		URITemplate: "test://template/{id}/data",
	}, templateResource)

	// go-sdk's server announces an update of this resource every 3 seconds;
	// here the tool test_update_watched_resource does (see README).
	sdk.AddResource(abi.Resource{
		Name:        "watched-resource",
		Description: "A resource that auto-updates every 3 seconds",
		MimeType:    "text/plain",
		URI:         watchedResourceURI,
	}, textResource("text/plain", "Watched resource content"))
}

// templateResource serves test://template/{id}/data. The id is taken from
// the URI as it is, not percent-decoded, as go-sdk's server does.
func templateResource(_ *sdk.Context, uri string) (*abi.ReadResourceResult, error) {
	id := strings.TrimSuffix(strings.TrimPrefix(uri, "test://template/"), "/data")
	jsonContent := fmt.Sprintf(`{"id": "%s", "templateTest": true, "data": "Data for ID: %s"}`, id, id)
	return &abi.ReadResourceResult{Contents: []abi.ResourceContents{sdk.TextContents(uri, "application/json", jsonContent)}}, nil
}

func registerPrompts() {
	sdk.AddPrompt(abi.Prompt{
		Name:        "test_simple_prompt",
		Title:       "Simple Test Prompt",
		Description: "A simple prompt without arguments",
	}, func(*sdk.Context, map[string]string) (*abi.GetPromptResult, error) {
		return &abi.GetPromptResult{
			Description: "A simple test prompt",
			Messages:    []abi.PromptMessage{textMessage("user", "This is a simple prompt for testing.")},
		}, nil
	})

	sdk.AddPrompt(abi.Prompt{
		Name:        "test_prompt_with_arguments",
		Title:       "Prompt With Arguments",
		Description: "A prompt with required arguments",
		Arguments: []abi.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, func(_ *sdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
		return &abi.GetPromptResult{
			Description: "A prompt with arguments",
			Messages: []abi.PromptMessage{textMessage("user",
				fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"]))},
		}, nil
	})

	sdk.AddPrompt(abi.Prompt{
		Name:        "test_prompt_with_embedded_resource",
		Title:       "Prompt With Embedded Resource",
		Description: "A prompt that includes an embedded resource",
		Arguments: []abi.PromptArgument{
			{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
		},
	}, func(_ *sdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
		return &abi.GetPromptResult{
			Description: "A prompt with an embedded resource",
			Messages: []abi.PromptMessage{
				sdk.UserMessage(sdk.EmbeddedText(args["resourceUri"], "text/plain", "Embedded resource content for testing.")),
				textMessage("user", "Please process the embedded resource above."),
			},
		}, nil
	})

	sdk.AddPrompt(abi.Prompt{
		Name:        "test_prompt_with_image",
		Title:       "Prompt With Image",
		Description: "A prompt that includes image content",
	}, func(*sdk.Context, map[string]string) (*abi.GetPromptResult, error) {
		return &abi.GetPromptResult{
			Description: "A prompt with an image",
			Messages: []abi.PromptMessage{
				sdk.UserMessage(sdk.Image(imageData, "image/png")),
				textMessage("user", "Please analyze the image above."),
			},
		}, nil
	})

	// The prompts/get analogue of test_input_required_result_elicitation:
	// elicits context first, returns the messages on retry.
	sdk.AddPrompt(abi.Prompt{
		Name:        "test_input_required_result_prompt",
		Description: "MRTR (SEP-2322): asks for context via an in-band elicitation request",
	}, func(ctx *sdk.Context, _ map[string]string) (*abi.GetPromptResult, error) {
		if content := acceptedContent(ctx, "user_context"); content != nil {
			contextStr, _ := content["context"].(string)
			return &abi.GetPromptResult{
				Description: "A prompt with elicited context",
				Messages:    []abi.PromptMessage{textMessage("user", fmt.Sprintf("Context: %s", contextStr))},
			}, nil
		}
		return &abi.GetPromptResult{InputRequests: map[string]json.RawMessage{
			"user_context": sdk.ElicitRequest("Please provide context for the prompt", contextSchema),
		}}, nil
	})
}
