// Command filesystem is the tools of @modelcontextprotocol/server-filesystem
// (2026.8.31) as an mcphost plugin: the same tool names, input schemas,
// descriptions and result texts, confined to the plugin's grants
// (allowed_paths). README.md says how to configure it and where it differs.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/filesystem/filesystem.wasm ./plugins/filesystem
package main

import (
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

// textOutput is the output schema of every tool that answers with text.
const textOutput = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`

const schemaHead = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",`

// pathOnly is the input schema of the tools that take one path.
const pathOnly = schemaHead + `"properties":{"path":{"type":"string"}},"required":["path"]}`

const readTextSchema = schemaHead + `"properties":{"path":{"type":"string"},"tail":{"description":"If provided, returns only the last N lines of the file","type":"number"},"head":{"description":"If provided, returns only the first N lines of the file","type":"number"}},"required":["path"]}`

const mediaOutput = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"content":{"type":"array","items":{"anyOf":[{"type":"object","properties":{"type":{"type":"string","enum":["image","audio"]},"data":{"type":"string"},"mimeType":{"type":"string"}},"required":["type","data","mimeType"],"additionalProperties":false},{"type":"object","properties":{"type":{"type":"string","const":"resource"},"resource":{"type":"object","properties":{"uri":{"type":"string"},"mimeType":{"type":"string"},"blob":{"type":"string"}},"required":["uri","blob"],"additionalProperties":false}},"required":["type","resource"],"additionalProperties":false}]}}},"required":["content"],"additionalProperties":false}`

// readOnly, write, … are the reference's annotations.
var (
	no          = false
	yes         = true
	readOnly    = &abi.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}
	idempotent  = &abi.ToolAnnotations{IdempotentHint: true, DestructiveHint: &yes, OpenWorldHint: &no}
	destructive = &abi.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}
	mkdirNotes  = &abi.ToolAnnotations{IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no}
)

func init() {
	tool := func(name, title, desc, input, output string, notes *abi.ToolAnnotations, h sdk.ToolHandler) {
		sdk.AddTool(abi.Tool{
			Name: name, Title: title, Description: desc,
			InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output),
			Annotations: notes,
		}, h)
	}
	tool("read_file", "Read File (Deprecated)",
		"Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
		readTextSchema, textOutput, readOnly, readTextFile)
	tool("read_text_file", "Read Text File",
		"Read the complete contents of a file from the file system as text. "+
			"Handles various text encodings and provides detailed error messages "+
			"if the file cannot be read. Use this tool when you need to examine "+
			"the contents of a single file. Use the 'head' parameter to read only "+
			"the first N lines of a file, or the 'tail' parameter to read only "+
			"the last N lines of a file. Operates on the file as text regardless of extension. "+
			"Only works within allowed directories.",
		readTextSchema, textOutput, readOnly, readTextFile)
	tool("read_media_file", "Read Media File",
		"Read a file and return it as a base64-encoded content block with its MIME type. "+
			"Image and audio files are returned as image/audio content; any other file type is "+
			"returned as an embedded resource. Only works within allowed directories.",
		pathOnly, mediaOutput, readOnly, readMediaFile)
	tool("read_multiple_files", "Read Multiple Files",
		"Read the contents of multiple files simultaneously. This is more "+
			"efficient than reading files one by one when you need to analyze "+
			"or compare multiple files. Each file's content is returned with its "+
			"path as a reference. Failed reads for individual files won't stop "+
			"the entire operation. Only works within allowed directories.",
		schemaHead+`"properties":{"paths":{"minItems":1,"type":"array","items":{"type":"string"},"description":"Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories."}},"required":["paths"]}`,
		textOutput, readOnly, readMultipleFiles)
	tool("write_file", "Write File",
		"Create a new file or completely overwrite an existing file with new content. "+
			"Use with caution as it will overwrite existing files without warning. "+
			"Handles text content with proper encoding. Only works within allowed directories.",
		schemaHead+`"properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`,
		textOutput, idempotent, writeFile)
	tool("edit_file", "Edit File",
		"Make line-based edits to a text file. Each edit replaces exact line sequences "+
			"with new content. Returns a git-style diff showing the changes made. "+
			"Only works within allowed directories.",
		schemaHead+`"properties":{"path":{"type":"string"},"edits":{"type":"array","items":{"type":"object","properties":{"oldText":{"type":"string","description":"Text to search for - must match exactly"},"newText":{"type":"string","description":"Text to replace with"}},"required":["oldText","newText"]}},"dryRun":{"default":false,"description":"Preview changes using git-style diff format","type":"boolean"}},"required":["path","edits"]}`,
		textOutput, destructive, editFile)
	tool("create_directory", "Create Directory",
		"Create a new directory or ensure a directory exists. Can create multiple "+
			"nested directories in one operation. If the directory already exists, "+
			"this operation will succeed silently. Perfect for setting up directory "+
			"structures for projects or ensuring required paths exist. Only works within allowed directories.",
		pathOnly, textOutput, mkdirNotes, createDirectory)
	tool("list_directory", "List Directory",
		"Get a detailed listing of all files and directories in a specified path. "+
			"Results clearly distinguish between files and directories with [FILE] and [DIR] "+
			"prefixes. This tool is essential for understanding directory structure and "+
			"finding specific files within a directory. Only works within allowed directories.",
		pathOnly, textOutput, readOnly, listDirectory)
	tool("list_directory_with_sizes", "List Directory with Sizes",
		"Get a detailed listing of all files and directories in a specified path, including sizes. "+
			"Results clearly distinguish between files and directories with [FILE] and [DIR] "+
			"prefixes. This tool is useful for understanding directory structure and "+
			"finding specific files within a directory. Only works within allowed directories.",
		schemaHead+`"properties":{"path":{"type":"string"},"sortBy":{"default":"name","description":"Sort entries by name or size","type":"string","enum":["name","size"]}},"required":["path"]}`,
		textOutput, readOnly, listDirectoryWithSizes)
	tool("directory_tree", "Directory Tree",
		"Get a recursive tree view of files and directories as a JSON structure. "+
			"Each entry includes 'name', 'type' (file/directory), and 'children' for directories. "+
			"Files have no children array, while directories always have a children array (which may be empty). "+
			"The output is formatted with 2-space indentation for readability. Only works within allowed directories.",
		schemaHead+`"properties":{"path":{"type":"string"},"excludePatterns":{"default":[],"type":"array","items":{"type":"string"}}},"required":["path"]}`,
		textOutput, readOnly, directoryTree)
	tool("move_file", "Move File",
		"Move or rename files and directories. Can move files between directories "+
			"and rename them in a single operation. If the destination exists, the "+
			"operation will fail. Works across different directories and can be used "+
			"for simple renaming within the same directory. Both source and destination must be within allowed directories.",
		schemaHead+`"properties":{"source":{"type":"string"},"destination":{"type":"string"}},"required":["source","destination"]}`,
		textOutput, destructive, moveFileTool)
	tool("search_files", "Search Files",
		"Recursively search for files and directories matching a pattern. "+
			"The patterns should be glob-style patterns that match paths relative to the working directory. "+
			"Use pattern like '*.ext' to match files in current directory, and '**/*.ext' to match files in all subdirectories. "+
			"Returns full paths to all matching items. Great for finding files when you don't know their exact location. "+
			"Only searches within allowed directories.",
		schemaHead+`"properties":{"path":{"type":"string"},"pattern":{"type":"string"},"excludePatterns":{"default":[],"type":"array","items":{"type":"string"}}},"required":["path","pattern"]}`,
		textOutput, readOnly, searchFiles)
	tool("get_file_info", "Get File Info",
		"Retrieve detailed metadata about a file or directory. Returns comprehensive "+
			"information including size, creation time, last modified time, permissions, "+
			"and type. This tool is perfect for understanding file characteristics "+
			"without reading the actual content. Only works within allowed directories.",
		pathOnly, textOutput, readOnly, getFileInfo)
	tool("list_allowed_directories", "List Allowed Directories",
		"Returns the list of directories that this server is allowed to access. "+
			"Subdirectories within these allowed directories are also accessible. "+
			"Use this to understand which directories and their nested paths are available "+
			"before trying to access files.",
		schemaHead+`"properties":{}}`, textOutput, readOnly, listAllowedDirectories)
}

// textResult is the reference's answer of a text tool: the text, and the
// same text as structuredContent.content.
func textResult(text string) *abi.CallToolResult {
	return &abi.CallToolResult{
		Content:           []abi.Content{sdk.Text(text)},
		StructuredContent: map[string]any{"content": text},
	}
}

// decode reads a tool's arguments (already checked against its schema by
// the host).
func decode(args json.RawMessage, v any) error {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return sdk.InvalidParams("arguments: %v", err)
	}
	return nil
}
