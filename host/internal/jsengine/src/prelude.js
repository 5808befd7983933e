// The built-in module "mcphost": what a JavaScript plugin imports to
// contribute tools, and the dispatcher the engine's C glue (glue.c) calls
// for every export. It runs inside the sandbox, in the same QuickJS
// context as the plugin; the glue hands it the native functions as
// globalThis.__mcphost_native and this module hides them again.
//
//   import { McpServer, McpError } from "mcphost";
//   const server = new McpServer({ name: "hello", version: "1.0.0" });
//   server.registerTool("greet", {
//     description: "Greets someone",
//     inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
//   }, async ({ name }, ctx) => `Hello, ${name}!`);
//
// See sdk/js/README.md for the whole API.

const native = globalThis.__mcphost_native;
delete globalThis.__mcphost_native;

// What every McpServer of the plugin registered, in the order it was
// registered: tools by name, resources by URI, resource templates by their
// URI template, prompts by name.
const tools = new Map();
const resources = new Map();
const templates = new Map();
const prompts = new Map();

// ResourceTemplate names a family of resources by an RFC 6570 URI template
// (level 1: "notes://{id}"), as the TypeScript SDK's does; complete maps a
// variable's name to a function (value, ctx) returning, or resolving to,
// the values that complete it.
export class ResourceTemplate {
  constructor(uriTemplate, { complete } = {}) {
    if (typeof uriTemplate !== "string" || uriTemplate === "") {
      throw new TypeError("ResourceTemplate: the URI template must be a non-empty string");
    }
    this.uriTemplate = uriTemplate;
    this.complete = complete ?? {};
  }
}

// McpError is a protocol-level error: thrown from a handler it fails the
// request with this JSON-RPC code (-32602 invalid params, -32603 internal
// error, -32000..-32099 server errors) instead of returning a tool result
// with isError.
export class McpError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = "McpError";
    this.code = code;
    this.data = data;
  }
}

// McpServer collects what a plugin contributes, in the shape of the
// TypeScript MCP SDK's McpServer (tools for now). The name and version are
// the host's: a plugin's are informative only.
export class McpServer {
  constructor(info = {}, options = {}) {
    this.info = info;
    this.options = options;
  }

  // registerTool adds a tool. config: { title, description, inputSchema,
  // outputSchema, annotations, _meta }, the schemas as JSON Schema objects
  // (the host validates arguments against inputSchema before the handler
  // runs). handler(args, ctx) returns, or resolves to, one of:
  //   a string                 one text content
  //   a CallToolResult         { content, structuredContent, isError }
  //   any other value          its JSON as text, and as structuredContent
  //                            when the tool has an outputSchema
  // A thrown error becomes a result with isError and the error's message
  // and JavaScript file:line; a thrown McpError fails the request.
  registerTool(name, config, handler) {
    if (typeof name !== "string" || name === "") {
      throw new TypeError("registerTool: the name must be a non-empty string");
    }
    if (typeof config === "function" && handler === undefined) {
      handler = config;
      config = {};
    }
    if (typeof handler !== "function") {
      throw new TypeError(`registerTool ${JSON.stringify(name)}: the handler must be a function`);
    }
    if (tools.has(name)) {
      throw new Error(`registerTool ${JSON.stringify(name)}: a tool of that name is registered already`);
    }
    const def = { name };
    for (const key of ["title", "description"]) {
      if (config[key] !== undefined) def[key] = String(config[key]);
    }
    def.inputSchema = config.inputSchema ?? { type: "object" };
    for (const key of ["outputSchema", "annotations", "_meta"]) {
      if (config[key] !== undefined) def[key] = config[key];
    }
    tools.set(name, { def, handler });
    return this;
  }

  // registerResource adds a resource (uri a string) or a resource template
  // (uri a ResourceTemplate). metadata: { title, description, mimeType,
  // annotations, _meta }. read(uri, ctx) for a resource, read(uri,
  // variables, ctx) for a template, returns or resolves to a
  // ReadResourceResult ({ contents: [...] }) or a string (one text content
  // of the resource's mimeType, text/plain by default).
  registerResource(name, uri, metadata, read) {
    if (typeof metadata === "function" && read === undefined) {
      read = metadata;
      metadata = {};
    }
    if (typeof name !== "string" || name === "") {
      throw new TypeError("registerResource: the name must be a non-empty string");
    }
    if (typeof read !== "function") {
      throw new TypeError(`registerResource ${JSON.stringify(name)}: the read callback must be a function`);
    }
    const def = { name };
    for (const key of ["title", "description", "mimeType", "annotations", "_meta", "size"]) {
      if (metadata?.[key] !== undefined) def[key] = metadata[key];
    }
    if (uri instanceof ResourceTemplate) {
      if (templates.has(uri.uriTemplate)) {
        throw new Error(`registerResource ${JSON.stringify(name)}: the template ${uri.uriTemplate} is registered already`);
      }
      def.uriTemplate = uri.uriTemplate;
      templates.set(uri.uriTemplate, { def, read, complete: uri.complete });
    } else {
      if (typeof uri !== "string" || uri === "") {
        throw new TypeError(`registerResource ${JSON.stringify(name)}: the URI must be a string or a ResourceTemplate`);
      }
      if (resources.has(uri)) {
        throw new Error(`registerResource ${JSON.stringify(name)}: the URI ${uri} is registered already`);
      }
      def.uri = uri;
      resources.set(uri, { def, read });
    }
    return this;
  }

  // registerPrompt adds a prompt. config: { title, description, arguments:
  // [{ name, description, required, complete(value, ctx) }] }. get(args,
  // ctx) returns or resolves to a GetPromptResult ({ description, messages
  // }) or a string (one user message of that text).
  registerPrompt(name, config, get) {
    if (typeof config === "function" && get === undefined) {
      get = config;
      config = {};
    }
    if (typeof name !== "string" || name === "") {
      throw new TypeError("registerPrompt: the name must be a non-empty string");
    }
    if (typeof get !== "function") {
      throw new TypeError(`registerPrompt ${JSON.stringify(name)}: the callback must be a function`);
    }
    if (prompts.has(name)) {
      throw new Error(`registerPrompt ${JSON.stringify(name)}: a prompt of that name is registered already`);
    }
    const def = { name };
    for (const key of ["title", "description", "_meta"]) {
      if (config?.[key] !== undefined) def[key] = config[key];
    }
    const completers = {};
    if (config?.arguments !== undefined) {
      def.arguments = config.arguments.map((a) => {
        const arg = { name: String(a.name) };
        if (a.description !== undefined) arg.description = String(a.description);
        if (a.required !== undefined) arg.required = Boolean(a.required);
        if (typeof a.complete === "function") completers[arg.name] = a.complete;
        return arg;
      });
    }
    prompts.set(name, { def, get, complete: completers });
    return this;
  }
}

// log writes a line to the host's log (not to the client): level is
// "debug", "info", "warn" or "error".
export function log(level, ...args) {
  native.log(String(level), args.map(show).join(" "));
}

// config returns the value of a key of the plugin's `config` in
// mcphost.toml, or undefined.
export function config(key) {
  return native.config(String(key));
}

globalThis.console = {
  log: (...a) => log("info", ...a),
  info: (...a) => log("info", ...a),
  debug: (...a) => log("debug", ...a),
  warn: (...a) => log("warn", ...a),
  error: (...a) => log("error", ...a),
};

function show(v) {
  if (typeof v === "string") return v;
  if (v instanceof Error) return `${v.name}: ${v.message}${where(v)}`;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

// where returns " (at file:line:col)" for the innermost frame of err's
// stack that is the plugin's own code, or "" when there is none. The place
// is the one in the sources the plugin was bundled from, when the bundle
// carries their positions (mcphost plugin build appends them).
function where(err) {
  const stack = typeof err?.stack === "string" ? err.stack : "";
  for (const line of stack.split("\n")) {
    const m = /\(?([^\s()]+:\d+(?::\d+)?)\)?\s*$/.exec(line.trim());
    if (m && !m[1].startsWith("mcphost:") && !m[1].startsWith("native")) return ` (at ${original(m[1])})`;
  }
  return "";
}

// original maps "plugin.js:LINE:COL" of the bundle to the source file,
// line and column it came from, through the table the build appended
// (Symbol.for("mcphost.positions"): sources, and for each bundle line
// segments of four numbers, all 0-based); other places are kept.
function original(place) {
  const table = globalThis[Symbol.for("mcphost.positions")];
  const m = /^plugin\.js:(\d+)(?::(\d+))?$/.exec(place);
  if (!table || !m) return place;
  const segs = table.lines?.[Number(m[1]) - 1];
  if (!Array.isArray(segs) || segs.length < 4) return place;
  const col = m[2] === undefined ? 0 : Number(m[2]) - 1;
  let i = 0;
  for (let j = 4; j + 3 < segs.length && segs[j] <= col; j += 4) i = j;
  const source = table.sources?.[segs[i + 1]];
  if (typeof source !== "string") return place;
  return `${source}:${segs[i + 2] + 1}:${segs[i + 3] + 1 + Math.max(0, col - segs[i])}`;
}

// context is the ctx a handler gets: the request's context (ABI.md §3) and
// what it may do while it runs.
function context(env) {
  const c = env.context ?? {};
  const meta = c._meta ?? {};
  return {
    requestId: c.id,
    _meta: meta,
    clientCapabilities: c.clientCapabilities ?? {},
    // log sends an MCP log message (notifications/message) to the client,
    // when it asked for that level, and to the host log.
    log(level, data, logger) {
      const msg = { level: String(level), data };
      if (logger !== undefined) msg.logger = String(logger);
      native.notify("notify_logging_message", JSON.stringify(msg));
    },
    // progress reports progress to a client that asked for it.
    progress(progress, total, message) {
      const msg = { progress };
      if (total !== undefined) msg.total = total;
      if (message !== undefined) msg.message = String(message);
      native.notify("notify_progress", JSON.stringify(msg));
    },
    config: { get: config },
  };
}

function toolResult(tool, value) {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  if (value === undefined || value === null) return { content: [] };
  if (typeof value === "object" && !Array.isArray(value) &&
      (Array.isArray(value.content) || "structuredContent" in value || "isError" in value)) {
    const r = { ...value };
    if (!Array.isArray(r.content)) {
      r.content = r.structuredContent !== undefined ? [{ type: "text", text: JSON.stringify(r.structuredContent) }] : [];
    }
    return r;
  }
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`tool ${JSON.stringify(tool.def.name)} returned a ${typeof value}, which has no JSON`);
  const r = { content: [{ type: "text", text }] };
  if (tool.def.outputSchema !== undefined) r.structuredContent = value;
  return r;
}

function errorText(err) {
  if (err instanceof Error) return `${err.name}: ${err.message}${where(err)}`;
  return `thrown: ${show(err)}`;
}

// protocolError is the ABI error text of a failed request (ABI.md §4).
function protocolError(code, message, data) {
  const e = { code, message: String(message) };
  if (data !== undefined) e.data = data;
  return "E" + JSON.stringify(e);
}

async function callTool(env) {
  const req = env.request ?? {};
  const tool = tools.get(req.name);
  if (!tool) return protocolError(-32602, `unknown tool ${JSON.stringify(req.name)}`);
  try {
    const value = await tool.handler(req.arguments ?? {}, context(env));
    return "O" + JSON.stringify(toolResult(tool, value));
  } catch (err) {
    if (err instanceof McpError) return protocolError(err.code, err.message, err.data);
    log("warn", `tool ${JSON.stringify(req.name)} failed: ${errorText(err)}`);
    return "O" + JSON.stringify({ content: [{ type: "text", text: errorText(err) }], isError: true });
  }
}

// failed turns what a resource, prompt or completion callback threw into
// the request's error: an McpError's code, else -32603 with the message
// and where it was thrown.
function failed(what, err) {
  if (err instanceof McpError) return protocolError(err.code, err.message, err.data);
  log("warn", `${what} failed: ${errorText(err)}`);
  return protocolError(-32603, `${what} failed: ${errorText(err)}`);
}

async function readResource(env) {
  const uri = String(env.request?.uri ?? "");
  const c = env.context ?? {};
  try {
    let entry, value;
    if (c.uriTemplate !== undefined) {
      entry = templates.get(c.uriTemplate);
      if (entry) value = await entry.read(uri, c.uriVariables ?? {}, context(env));
    } else {
      entry = resources.get(uri);
      if (entry) value = await entry.read(uri, context(env));
    }
    if (!entry) return protocolError(-32002, `resource not found: ${uri}`);
    if (typeof value === "string") {
      value = { contents: [{ uri, mimeType: entry.def.mimeType ?? "text/plain", text: value }] };
    }
    if (typeof value !== "object" || value === null || !Array.isArray(value.contents)) {
      throw new TypeError(`the read callback of ${JSON.stringify(entry.def.name)} returned neither a string nor { contents: [...] }`);
    }
    return "O" + JSON.stringify(value);
  } catch (err) {
    return failed(`reading ${uri}`, err);
  }
}

async function getPrompt(env) {
  const req = env.request ?? {};
  const prompt = prompts.get(req.name);
  if (!prompt) return protocolError(-32602, `unknown prompt ${JSON.stringify(req.name)}`);
  for (const a of prompt.def.arguments ?? []) {
    if (a.required && (req.arguments ?? {})[a.name] === undefined) {
      return protocolError(-32602, `prompt ${JSON.stringify(req.name)}: missing required argument ${JSON.stringify(a.name)}`);
    }
  }
  try {
    let value = await prompt.get(req.arguments ?? {}, context(env));
    if (typeof value === "string") {
      value = { messages: [{ role: "user", content: { type: "text", text: value } }] };
    }
    if (typeof value !== "object" || value === null || !Array.isArray(value.messages)) {
      throw new TypeError(`prompt ${JSON.stringify(req.name)} returned neither a string nor { messages: [...] }`);
    }
    return "O" + JSON.stringify(value);
  } catch (err) {
    return failed(`prompt ${JSON.stringify(req.name)}`, err);
  }
}

// maxCompletions is how many values a completion returns at most (MCP's
// limit); total and hasMore say how many there were.
const maxCompletions = 100;

async function complete(env) {
  const req = env.request ?? {};
  const ref = req.ref ?? {};
  const arg = req.argument ?? {};
  let completer;
  if (ref.type === "ref/prompt") {
    completer = prompts.get(ref.name)?.complete?.[arg.name];
  } else if (ref.type === "ref/resource") {
    completer = templates.get(ref.uri)?.complete?.[arg.name];
  }
  if (!completer) return "O" + JSON.stringify({ completion: { values: [] } });
  try {
    const all = await completer(String(arg.value ?? ""), context(env));
    if (!Array.isArray(all)) throw new TypeError(`the completion of ${JSON.stringify(arg.name)} returned no array`);
    const values = all.slice(0, maxCompletions).map(String);
    return "O" + JSON.stringify({ completion: { values, total: all.length, hasMore: all.length > values.length } });
  } catch (err) {
    return failed(`completing ${JSON.stringify(arg.name)}`, err);
  }
}

const exportsTable = {
  list_tools: () => "O" + JSON.stringify({ tools: [...tools.values()].map((t) => t.def) }),
  call_tool: callTool,
  list_resources: () => "O" + JSON.stringify({ resources: [...resources.values()].map((r) => r.def) }),
  list_resource_templates: () => "O" + JSON.stringify({ resourceTemplates: [...templates.values()].map((r) => r.def) }),
  read_resource: readResource,
  list_prompts: () => "O" + JSON.stringify({ prompts: [...prompts.values()].map((p) => p.def) }),
  get_prompt: getPrompt,
  complete,
};

// The glue calls this with the name of the export and its input (the
// envelope's JSON text). It returns, or resolves to, "O" + the output or
// "E" + the ABI error's JSON.
globalThis.__mcphost_dispatch = (name, input) => {
  const fn = exportsTable[name];
  if (!fn) return protocolError(-32603, `the JavaScript engine has no export ${name}`);
  return fn(JSON.parse(input));
};

// hasExport tells the glue whether the plugin contributes what an export
// serves.
globalThis.__mcphost_has = (name) => name === "list_tools" || name === "call_tool" ? tools.size > 0 : false;
