package sdk

import (
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// Text returns a text content block.
func Text(s string) abi.Content { return abi.Content{Type: "text", Text: s} }

// Image returns an image content block; data is sent base64-encoded.
func Image(data []byte, mimeType string) abi.Content {
	return abi.Content{Type: "image", Data: data, MimeType: mimeType}
}

// Audio returns an audio content block; data is sent base64-encoded.
func Audio(data []byte, mimeType string) abi.Content {
	return abi.Content{Type: "audio", Data: data, MimeType: mimeType}
}

// ResourceLink returns a content block that links to a resource the client
// may read (it need not be listed by resources/list).
func ResourceLink(uri, name string) abi.Content {
	return abi.Content{Type: "resource_link", URI: uri, Name: name}
}

// EmbeddedText returns a content block embedding a text resource.
func EmbeddedText(uri, mimeType, text string) abi.Content {
	c := TextContents(uri, mimeType, text)
	return abi.Content{Type: "resource", Resource: &c}
}

// EmbeddedBlob returns a content block embedding a binary resource; data is
// sent base64-encoded.
func EmbeddedBlob(uri, mimeType string, data []byte) abi.Content {
	c := BlobContents(uri, mimeType, data)
	return abi.Content{Type: "resource", Resource: &c}
}

// TextContents returns the text contents of a resource, for a
// [ResourceHandler] result or [EmbeddedText].
func TextContents(uri, mimeType, text string) abi.ResourceContents {
	return abi.ResourceContents{URI: uri, MimeType: mimeType, Text: text}
}

// BlobContents returns the binary contents of a resource.
func BlobContents(uri, mimeType string, data []byte) abi.ResourceContents {
	return abi.ResourceContents{URI: uri, MimeType: mimeType, Blob: data}
}

// TextResult returns a successful tool result holding one text content.
func TextResult(s string) *abi.CallToolResult {
	return &abi.CallToolResult{Content: []abi.Content{Text(s)}}
}

// ToolError returns a tool result that reports the tool ran and failed
// (isError set), with the formatted message as its one text content. The
// model sees the message and may correct itself.
func ToolError(format string, args ...any) *abi.CallToolResult {
	return &abi.CallToolResult{
		Content: []abi.Content{Text(fmt.Sprintf(format, args...))},
		IsError: true,
	}
}

// InvalidParams returns a protocol error with code -32602 (invalid params)
// and the formatted message, for a handler to return as its error.
func InvalidParams(format string, args ...any) *abi.Error {
	return &abi.Error{Code: abi.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// ResourceNotFound returns the protocol error for a resource that does not
// exist (code -32002, with the URI in data), for a [ResourceHandler] to
// return when a URI matched a template but names nothing.
func ResourceNotFound(uri string) *abi.Error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &abi.Error{Code: abi.CodeResourceNotFound, Message: "resource not found: " + uri, Data: data}
}

// UserMessage returns a prompt message from the user.
func UserMessage(c abi.Content) abi.PromptMessage { return abi.PromptMessage{Role: "user", Content: c} }

// AssistantMessage returns a prompt message from the assistant.
func AssistantMessage(c abi.Content) abi.PromptMessage {
	return abi.PromptMessage{Role: "assistant", Content: c}
}
