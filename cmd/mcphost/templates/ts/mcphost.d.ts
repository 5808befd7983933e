// Types of the module "mcphost" that mcphost's JavaScript engine provides
// to every JavaScript and TypeScript plugin (sdk/js/README.md). The module
// is built into the engine: a plugin imports it, never bundles it.
declare module "mcphost" {
  /** A JSON Schema object, as MCP tool schemas are. */
  export type JSONSchema = { type?: string; [keyword: string]: unknown };

  /** Content of a tool result. */
  export type Content =
    | { type: "text"; text: string; _meta?: Record<string, unknown> }
    | { type: "image"; data: string; mimeType: string; _meta?: Record<string, unknown> }
    | { type: "audio"; data: string; mimeType: string; _meta?: Record<string, unknown> }
    | { type: "resource_link"; uri: string; name: string; mimeType?: string; description?: string }
    | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } };

  /** A tool's result, as MCP's CallToolResult. */
  export interface CallToolResult {
    content?: Content[];
    structuredContent?: unknown;
    isError?: boolean;
    _meta?: Record<string, unknown>;
  }

  /** What a handler may return: a string (one text content), a
   * CallToolResult, or any other value (its JSON as text, and as
   * structuredContent when the tool has an outputSchema). */
  export type ToolReturn = string | CallToolResult | unknown;

  /** MCP logging levels. */
  export type LoggingLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

  /** The request a handler serves, and what it may do while it runs. */
  export interface Context {
    /** The JSON-RPC id of the request. */
    readonly requestId: string | number | undefined;
    /** The request's _meta. */
    readonly _meta: Record<string, unknown>;
    /** What the client declared it can do. */
    readonly clientCapabilities: Record<string, unknown>;
    /** Sends an MCP log message (notifications/message) to the client,
     * when it asked for that level, and to the host's log. */
    log(level: LoggingLevel, data: unknown, logger?: string): void;
    /** Reports progress to a client that asked for it. */
    progress(progress: number, total?: number, message?: string): void;
    /** The plugin's config of mcphost.toml. */
    readonly config: { get(key: string): string | undefined };
  }

  /** A tool's definition, as the TypeScript MCP SDK's registerTool takes it,
   * with JSON Schema objects for the schemas (the host validates the
   * arguments against inputSchema before the handler runs). */
  export interface ToolConfig {
    title?: string;
    description?: string;
    inputSchema?: JSONSchema;
    outputSchema?: JSONSchema;
    annotations?: {
      title?: string;
      readOnlyHint?: boolean;
      destructiveHint?: boolean;
      idempotentHint?: boolean;
      openWorldHint?: boolean;
    };
    _meta?: Record<string, unknown>;
  }

  /** Collects what a plugin contributes (tools, resources, resource
   * templates, prompts), in the shape of the TypeScript MCP SDK's
   * McpServer. The name and version are informative: the host
   * names the plugin after its config. */
  export class McpServer {
    constructor(info?: { name?: string; version?: string }, options?: Record<string, unknown>);
    /** Adds a tool; the handler may be async. A thrown Error becomes a
     * result with isError and the error's message and source file:line; a
     * thrown McpError fails the request. */
    registerTool<Args = Record<string, unknown>>(
      name: string,
      config: ToolConfig,
      handler: (args: Args, ctx: Context) => ToolReturn | Promise<ToolReturn>,
    ): this;
    /** Adds a resource at a fixed URI. */
    registerResource(name: string, uri: string, metadata: ResourceMetadata, read: (uri: string, ctx: Context) => ReadResult | Promise<ReadResult>): this;
    /** Adds a resource template; read gets the URI and its variables. */
    registerResource(
      name: string,
      template: ResourceTemplate,
      metadata: ResourceMetadata,
      read: (uri: string, variables: Record<string, string>, ctx: Context) => ReadResult | Promise<ReadResult>,
    ): this;
    /** Adds a prompt; required arguments are checked before get runs. */
    registerPrompt<Args = Record<string, string>>(
      name: string,
      config: { title?: string; description?: string; arguments?: PromptArgument[]; _meta?: Record<string, unknown> },
      get: (args: Args, ctx: Context) => PromptResult | Promise<PromptResult>,
    ): this;
  }

  /** A family of resources named by an RFC 6570 URI template
   * ("notes://{id}"); complete maps a variable's name to the values that
   * complete what the user typed. */
  export class ResourceTemplate {
    constructor(uriTemplate: string, options?: { complete?: Record<string, Completer> });
    readonly uriTemplate: string;
  }

  /** Returns, or resolves to, the values that complete value (at most 100
   * are sent, with the total). */
  export type Completer = (value: string, ctx: Context) => string[] | Promise<string[]>;

  /** A resource's metadata. */
  export interface ResourceMetadata {
    title?: string;
    description?: string;
    mimeType?: string;
    annotations?: Record<string, unknown>;
    _meta?: Record<string, unknown>;
  }

  /** What a read callback returns: MCP's ReadResourceResult, or a string
   * (one text content of the resource's mimeType, text/plain by default). */
  export type ReadResult =
    | string
    | { contents: ({ uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string })[] };

  /** A prompt's argument; complete offers values for it. */
  export interface PromptArgument {
    name: string;
    description?: string;
    required?: boolean;
    complete?: Completer;
  }

  /** What a prompt callback returns: MCP's GetPromptResult, or a string
   * (one user message of that text). */
  export type PromptResult =
    | string
    | { description?: string; messages: { role: "user" | "assistant"; content: Content }[] };

  /** A protocol-level error: thrown from a handler, it fails the request
   * with this JSON-RPC code instead of returning a result with isError. */
  export class McpError extends Error {
    constructor(code: number, message: string, data?: unknown);
    readonly code: number;
    readonly data: unknown;
  }

  /** A value of the plugin's config in mcphost.toml, or undefined. */
  export function config(key: string): string | undefined;

  /** Writes a line to the host's log (not to the client). */
  export function log(level: "debug" | "info" | "warn" | "error", ...args: unknown[]): void;
}
