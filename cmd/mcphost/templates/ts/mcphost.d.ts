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
    /** Asks the user (elicitation/create) and resolves to the client's
     * ElicitResult. The handler does not wait: it runs again from its
     * start with the answer (ABI.md §8, sdk/js/README.md), so it must ask
     * the same questions in the same order every time it runs. Ask only
     * what clientCapabilities declares. */
    elicit(params: {
      message: string;
      requestedSchema?: JSONSchema;
      mode?: "form" | "url";
      url?: string;
      elicitationId?: string;
      [key: string]: unknown;
    }): Promise<{ action: "accept" | "decline" | "cancel"; content?: Record<string, unknown>; [key: string]: unknown }>;
    /** Asks the client's model (sampling/createMessage) and resolves to its
     * CreateMessageResult; as elicit, the handler runs again with it. */
    sample(params: {
      messages: { role: "user" | "assistant"; content: Content | Content[] }[];
      maxTokens: number;
      systemPrompt?: string;
      [key: string]: unknown;
    }): Promise<{ role: "assistant"; content: Content | Content[]; model: string; stopReason?: string; [key: string]: unknown }>;
    /** Asks for the client's roots (roots/list); as elicit. */
    listRoots(): Promise<{ roots: { uri: string; name?: string }[] }>;
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

  /** A resource's metadata, as registerResource takes it. */
  export interface ResourceMetadata {
    title?: string;
    description?: string;
    mimeType?: string;
    annotations?: { audience?: ("user" | "assistant")[]; priority?: number; lastModified?: string };
    /** A resource's size in bytes (not for templates). */
    size?: number;
    icons?: { src: string; mimeType?: string; sizes?: string[] }[];
    _meta?: Record<string, unknown>;
  }

  /** The URI a read callback gets: the TypeScript SDK passes a URL; this
   * has its href. */
  export interface ResourceUri {
    readonly href: string;
    toString(): string;
  }

  /** One content of a resource: text or blob (base64). */
  export type ResourceContents =
    | { uri?: string; mimeType?: string; text: string; _meta?: Record<string, unknown> }
    | { uri?: string; mimeType?: string; blob: string; _meta?: Record<string, unknown> };

  /** What a read callback may return: a string (one text content), bytes
   * (one blob content), both with the resource's mimeType, or MCP's
   * ReadResourceResult (a content without a uri gets the one read). */
  export type ReadResourceReturn = string | Uint8Array | ArrayBuffer | { contents: ResourceContents[]; _meta?: Record<string, unknown> };

  /** Completes a prompt argument or a template variable: the values that
   * fit value (at most 100 are sent; more set total and hasMore). context
   * holds the arguments the client already filled in. */
  export type CompleteCallback = (
    value: string,
    context: { arguments: Record<string, string> },
  ) => string[] | { values: string[]; total?: number; hasMore?: boolean } | Promise<string[] | { values: string[]; total?: number; hasMore?: boolean }>;

  /** A URI template (RFC 6570, beginning with a literal scheme:
   * "note://{id}"), as the TypeScript SDK's. The TypeScript SDK's list
   * callback is not supported (the constructor throws): register each
   * resource to list with registerResource. */
  export class ResourceTemplate {
    constructor(uriTemplate: string, callbacks?: { list?: undefined; complete?: Record<string, CompleteCallback> });
    readonly uriTemplate: string;
  }

  /** A prompt argument, as MCP lists it (arguments are strings). */
  export interface PromptArgument {
    name: string;
    title?: string;
    description?: string;
    required?: boolean;
  }

  /** A prompt's definition: arguments as MCP lists them, or argsSchema, a
   * JSON Schema object whose properties are the arguments (their title
   * and description) and whose required are the required ones. complete
   * completes arguments by name. */
  export interface PromptConfig {
    title?: string;
    description?: string;
    arguments?: PromptArgument[];
    argsSchema?: JSONSchema & { properties?: Record<string, JSONSchema>; required?: string[] };
    complete?: Record<string, CompleteCallback>;
    icons?: { src: string; mimeType?: string; sizes?: string[] }[];
    _meta?: Record<string, unknown>;
  }

  /** A message of a prompt. */
  export interface PromptMessage {
    role: "user" | "assistant";
    content: Content;
  }

  /** What a prompt callback may return: MCP's GetPromptResult (its
   * description defaults to the prompt's), or a string (one user
   * message). */
  export type GetPromptReturn = string | { description?: string; messages: PromptMessage[]; _meta?: Record<string, unknown> };

  /** Collects what a plugin contributes, in the shape of the TypeScript
   * MCP SDK's McpServer. The name and version are informative: the host
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
    /** Adds a resource. A thrown McpError fails the read with its code
     * (-32002 with data {uri} for "resource not found"); another error
     * with -32603 and its message. */
    registerResource(
      name: string,
      uri: string,
      metadata: ResourceMetadata,
      read: (uri: ResourceUri, ctx: Context) => ReadResourceReturn | Promise<ReadResourceReturn>,
    ): this;
    /** Adds a resource template: read gets the template's variables as the
     * host matched them (a string; an array or object for an exploded
     * variable; absent when the URI leaves it undefined). */
    registerResource(
      name: string,
      template: ResourceTemplate,
      metadata: ResourceMetadata,
      read: (uri: ResourceUri, variables: Record<string, string | string[] | Record<string, string>>, ctx: Context) => ReadResourceReturn | Promise<ReadResourceReturn>,
    ): this;
    /** Adds a prompt. The host refuses a request without a required
     * argument before get runs. */
    registerPrompt<Args extends Record<string, string | undefined> = Record<string, string | undefined>>(
      name: string,
      config: PromptConfig,
      get: (args: Args, ctx: Context) => GetPromptReturn | Promise<GetPromptReturn>,
    ): this;
  }

  /** A protocol-level error: thrown from a handler, it fails the request
   * with this JSON-RPC code instead of returning a result with isError. */
  export class McpError extends Error {
    constructor(code: number, message: string, data?: unknown);
    readonly code: number;
    readonly data: unknown;
  }

  /** The part of the Fetch API's Headers the engine has: names are
   * case-insensitive. */
  export class Headers implements Iterable<[string, string]> {
    constructor(init?: Headers | Iterable<[string, string]> | Record<string, string>);
    append(name: string, value: string): void;
    set(name: string, value: string): void;
    get(name: string): string | null;
    has(name: string): boolean;
    delete(name: string): void;
    forEach(fn: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void;
    entries(): IterableIterator<[string, string]>;
    keys(): IterableIterator<string>;
    values(): IterableIterator<string>;
    [Symbol.iterator](): IterableIterator<[string, string]>;
  }

  /** The part of the Fetch API's Response that fetch returns (the body is
   * read whole, at once; it may be read more than once). */
  export class Response {
    constructor(body?: string | Uint8Array | null, init?: { status?: number; statusText?: string; headers?: Headers | Record<string, string>; url?: string });
    readonly status: number;
    readonly statusText: string;
    readonly ok: boolean;
    readonly headers: Headers;
    readonly url: string;
    text(): Promise<string>;
    json(): Promise<any>;
    bytes(): Promise<Uint8Array>;
    arrayBuffer(): Promise<ArrayBuffer>;
  }

  /** What fetch takes; other RequestInit keys (mode, …) are ignored. A
   * signal aborted already rejects with its reason before the request is
   * sent; once sent, a request runs to its end (bounded by the call's
   * deadline). */
  export interface RequestInit {
    method?: string;
    headers?: Headers | Iterable<[string, string]> | Record<string, string>;
    body?: string | Uint8Array | ArrayBuffer | null;
    signal?: AbortSignal | null;
  }

  /** The Fetch API's fetch over the host's http_request (ABI.md §7), also
   * the global fetch: only the hosts the plugin's allowed_hosts grants are
   * reachable (private addresses only with allow_private_network), the
   * response is capped at max_output_kb and bounded by the call's
   * deadline. A refused or failed request rejects with a TypeError naming
   * the method, URL and reason; an HTTP error status resolves (ok false). */
  export function fetch(url: string | { url: string } | { href: string }, init?: RequestInit): Promise<Response>;

  /** A value of the plugin's config in mcphost.toml, or undefined. */
  export function config(key: string): string | undefined;

  /** Writes a line to the host's log (not to the client). */
  export function log(level: "debug" | "info" | "warn" | "error", ...args: unknown[]): void;
}

// The engine's globals beyond the language (sdk/js/README.md, "Globals"),
// declared here because a plugin's tsconfig has no "DOM" lib and no Node
// types: neither platform is what the engine is. fetch, Headers and
// Response are the module's, also global.

/** What setTimeout and setInterval return: as in Node, it converts to its
 * number id (clearTimeout takes either); ref and unref do nothing (no
 * timer outlives the call that set it). */
interface Timeout {
  ref(): Timeout;
  unref(): Timeout;
  hasRef(): boolean;
  /** Starts the timer's delay again from now. */
  refresh(): Timeout;
  [Symbol.toPrimitive](): number;
}
/** Calls callback after ms (0 to 2^31-1; another value is 0), if the call
 * that set it is still running then: timers left when a call ends are
 * dropped. */
declare function setTimeout<A extends unknown[]>(callback: (...args: A) => void, ms?: number, ...args: A): Timeout;
/** Calls callback every ms (at least 1) while the call that set it runs. */
declare function setInterval<A extends unknown[]>(callback: (...args: A) => void, ms?: number, ...args: A): Timeout;
declare function clearTimeout(id: Timeout | number | undefined | null): void;
declare function clearInterval(id: Timeout | number | undefined | null): void;
declare function queueMicrotask(callback: () => void): void;
declare function atob(data: string): string;
declare function btoa(data: string): string;
/** A deep copy by the structured clone algorithm: plain objects, arrays,
 * Date, RegExp, Map, Set, ArrayBuffer, typed arrays, DataView, errors;
 * cycles kept. A function, a symbol or another class's object throws a
 * DOMException "DataCloneError". */
declare function structuredClone<T>(value: T, options?: { transfer?: never[] }): T;

/** console writes to the host's log (not to the client). */
declare var console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  debug(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
};
declare var performance: { now(): number; readonly timeOrigin: number };

declare var fetch: typeof import("mcphost").fetch;
declare var Headers: typeof import("mcphost").Headers;
type Headers = import("mcphost").Headers;
declare var Response: typeof import("mcphost").Response;
type Response = import("mcphost").Response;

declare class DOMException extends Error {
  constructor(message?: string, name?: string);
  readonly name: string;
  readonly code: number;
}

/** Random values from the host's crypto/rand. There is no crypto.subtle. */
declare var crypto: {
  getRandomValues<T extends Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array>(array: T): T;
  randomUUID(): `${string}-${string}-${string}-${string}-${string}`;
};

/** UTF-8 encoding. */
declare class TextEncoder {
  readonly encoding: "utf-8";
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}
/** UTF-8 decoding only (another label is a RangeError). */
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  readonly encoding: "utf-8";
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  decode(input?: ArrayBuffer | ArrayBufferView, options?: { stream?: boolean }): string;
}

/** The URL Standard's URL (host names: lower-casing and Punycode, no
 * UTS #46 mapping). */
declare class URL {
  constructor(url: string | URL, base?: string | URL);
  static canParse(url: string | URL, base?: string | URL): boolean;
  static parse(url: string | URL, base?: string | URL): URL | null;
  href: string;
  readonly origin: string;
  protocol: string;
  username: string;
  password: string;
  host: string;
  hostname: string;
  port: string;
  pathname: string;
  search: string;
  readonly searchParams: URLSearchParams;
  hash: string;
  toString(): string;
  toJSON(): string;
}
declare class URLSearchParams implements Iterable<[string, string]> {
  constructor(init?: string | URLSearchParams | Iterable<[string, string]> | Record<string, string>);
  readonly size: number;
  append(name: string, value: string): void;
  delete(name: string, value?: string): void;
  get(name: string): string | null;
  getAll(name: string): string[];
  has(name: string, value?: string): boolean;
  set(name: string, value: string): void;
  sort(): void;
  forEach(callback: (value: string, name: string, params: URLSearchParams) => void, thisArg?: unknown): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
  toString(): string;
}

declare class Event {
  constructor(type: string, init?: { bubbles?: boolean; cancelable?: boolean; composed?: boolean });
  readonly type: string;
  readonly target: EventTarget | null;
  readonly currentTarget: EventTarget | null;
  readonly defaultPrevented: boolean;
  readonly cancelable: boolean;
  readonly timeStamp: number;
  preventDefault(): void;
  stopPropagation(): void;
  stopImmediatePropagation(): void;
}
type EventListenerOrObject = ((event: Event) => void) | { handleEvent(event: Event): void };
declare class EventTarget {
  addEventListener(type: string, listener: EventListenerOrObject | null, options?: boolean | { once?: boolean; capture?: boolean; signal?: AbortSignal }): void;
  removeEventListener(type: string, listener: EventListenerOrObject | null, options?: boolean | { capture?: boolean }): void;
  dispatchEvent(event: Event): boolean;
}
declare class AbortSignal extends EventTarget {
  private constructor();
  readonly aborted: boolean;
  readonly reason: any;
  onabort: ((event: Event) => void) | null;
  throwIfAborted(): void;
  static abort(reason?: unknown): AbortSignal;
  /** Aborts with a DOMException "TimeoutError" after ms, if the call is
   * still running then (it is a timer). */
  static timeout(ms: number): AbortSignal;
  static any(signals: Iterable<AbortSignal>): AbortSignal;
}
declare class AbortController {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}
