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

// The tools registered by every McpServer of the plugin, by name, in the
// order they were registered.
const tools = new Map();

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

const exportsTable = {
  list_tools: () => "O" + JSON.stringify({ tools: [...tools.values()].map((t) => t.def) }),
  call_tool: callTool,
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
