// The built-in module "mcphost": what a JavaScript plugin imports to
// contribute tools, resources, resource templates, prompts and completions,
// and the dispatcher the engine's C glue (glue.c) calls
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

// What every McpServer of the plugin registered, in the order registered:
// tools and prompts by name, resources by URI, templates by URI template.
const tools = new Map();
const resources = new Map();
const templates = new Map();
const prompts = new Map();

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

// ResourceTemplate is a URI template (RFC 6570, with a literal scheme:
// "note://{id}") to register with registerResource, as the TypeScript
// SDK's. callbacks.complete maps a variable's name to a function (value,
// context) returning, or resolving to, the completions of that variable.
// callbacks.list (the TypeScript SDK's way of listing a template's
// resources) is not supported: register those with registerResource.
export class ResourceTemplate {
  constructor(uriTemplate, callbacks = {}) {
    if (typeof uriTemplate !== "string" || uriTemplate === "") {
      throw new TypeError("ResourceTemplate: the URI template must be a non-empty string");
    }
    if (typeof callbacks?.list === "function") {
      throw new TypeError(`ResourceTemplate ${JSON.stringify(uriTemplate)}: a list callback is not supported; register each resource with registerResource`);
    }
    this.uriTemplate = uriTemplate;
    this.complete = completers(`ResourceTemplate ${JSON.stringify(uriTemplate)}`, callbacks?.complete);
  }

  toString() {
    return this.uriTemplate;
  }
}

// completers checks a { name: (value, context) => values } map.
function completers(what, map) {
  if (map === undefined || map === null) return {};
  if (typeof map !== "object") throw new TypeError(`${what}: complete must be an object of functions`);
  for (const [k, fn] of Object.entries(map)) {
    if (typeof fn !== "function") throw new TypeError(`${what}: complete.${k} must be a function`);
  }
  return { ...map };
}

// copy copies the keys of from that are defined to def.
function copy(def, from, keys) {
  for (const key of keys) {
    if (from?.[key] !== undefined) def[key] = from[key];
  }
  return def;
}

// McpServer collects what a plugin contributes, in the shape of the
// TypeScript MCP SDK's McpServer. The name and version are
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
  // annotations, size, icons, _meta } (optional). read(uri, ctx) for a
  // resource, read(uri, variables, ctx) for a template, where uri has
  // .href (the URI read) and variables are the template's, as the host
  // matched them (ABI.md §3). read returns, or resolves to, one of:
  //   a string                      one text content, with the mimeType
  //   a Uint8Array or ArrayBuffer   one blob content, with the mimeType
  //   a ReadResourceResult          { contents: [...] } (a content without
  //                                 a uri gets the one read)
  // A thrown McpError fails the request with its code (-32002 "resource
  // not found", with data { uri }, for a URI the template matches but no
  // resource has); another error fails it with -32603 and its message.
  registerResource(name, uri, metadata, read) {
    if (typeof name !== "string" || name === "") {
      throw new TypeError("registerResource: the name must be a non-empty string");
    }
    if (typeof metadata === "function" && read === undefined) {
      read = metadata;
      metadata = {};
    }
    const what = `registerResource ${JSON.stringify(name)}`;
    if (typeof read !== "function") throw new TypeError(`${what}: the read callback must be a function`);
    const keys = ["title", "description", "mimeType", "annotations", "icons", "_meta"];
    if (uri instanceof ResourceTemplate) {
      if (templates.has(uri.uriTemplate)) {
        throw new Error(`${what}: the template ${JSON.stringify(uri.uriTemplate)} is registered already`);
      }
      const def = copy({ uriTemplate: uri.uriTemplate, name }, metadata, keys);
      templates.set(uri.uriTemplate, { def, read, complete: uri.complete });
      return this;
    }
    if (typeof uri !== "string" || uri === "") {
      throw new TypeError(`${what}: the URI must be a non-empty string or a ResourceTemplate`);
    }
    if (resources.has(uri)) throw new Error(`${what}: the URI ${JSON.stringify(uri)} is registered already`);
    const def = copy({ uri, name }, metadata, [...keys, "size"]);
    resources.set(uri, { def, read });
    return this;
  }

  // registerPrompt adds a prompt. config: { title, description, argsSchema
  // or arguments, complete, icons, _meta }: arguments as MCP lists them
  // ([{ name, title, description, required }]), or argsSchema a JSON
  // Schema object whose properties are the arguments (their title and
  // description) and whose required are the required ones; prompt
  // arguments are strings. complete maps an argument's name to a function
  // (value, context) returning, or resolving to, its completions.
  // get(args, ctx) returns, or resolves to, a GetPromptResult
  // ({ description, messages }) or a string (one user message). The host
  // refuses a request without a required argument before get runs.
  registerPrompt(name, config, get) {
    if (typeof name !== "string" || name === "") {
      throw new TypeError("registerPrompt: the name must be a non-empty string");
    }
    if (typeof config === "function" && get === undefined) {
      get = config;
      config = {};
    }
    const what = `registerPrompt ${JSON.stringify(name)}`;
    if (typeof get !== "function") throw new TypeError(`${what}: the callback must be a function`);
    if (prompts.has(name)) throw new Error(`${what}: a prompt of that name is registered already`);
    const def = copy({ name }, config, ["title", "description"]);
    const args = promptArguments(what, config);
    if (args.length > 0) def.arguments = args;
    copy(def, config, ["icons", "_meta"]);
    prompts.set(name, { def, get, complete: completers(what, config?.complete) });
    return this;
  }
}

// promptArguments returns the MCP arguments of a prompt's config.
function promptArguments(what, config) {
  if (config?.arguments !== undefined) {
    if (!Array.isArray(config.arguments)) throw new TypeError(`${what}: arguments must be an array`);
    return config.arguments.map((a) => {
      if (typeof a?.name !== "string" || a.name === "") throw new TypeError(`${what}: every argument needs a name`);
      return copy({ name: a.name }, a, ["title", "description", "required"]);
    });
  }
  const schema = config?.argsSchema;
  if (schema === undefined) return [];
  if (typeof schema !== "object" || schema === null || typeof (schema.properties ?? {}) !== "object") {
    throw new TypeError(`${what}: argsSchema must be a JSON Schema object with properties`);
  }
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(schema.properties ?? {}).map(([name, p]) => {
    const a = copy({ name }, p, ["title", "description"]);
    if (required.has(name)) a.required = true;
    return a;
  });
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

// utf8 returns the UTF-8 bytes of the string s (lone surrogates as U+FFFD).
function utf8(s) {
  return native.encode(s.toWellFormed());
}

// fromUtf8 returns the text of the UTF-8 bytes b (a Uint8Array), as
// TextDecoder does: an invalid sequence is U+FFFD.
function fromUtf8(b) {
  return native.decode(b, false, false);
}

// Headers is the part of the Fetch API's Headers a plugin needs: names are
// case-insensitive, and kept lower-case.
export class Headers {
  #map = new Map();

  constructor(init) {
    if (init === undefined || init === null) return;
    const pairs = init instanceof Headers ? init.entries()
      : typeof init[Symbol.iterator] === "function" ? init
      : Object.entries(init);
    for (const [k, v] of pairs) this.append(k, v);
  }

  append(name, value) {
    const k = String(name).toLowerCase();
    const v = String(value);
    this.#map.set(k, this.#map.has(k) ? `${this.#map.get(k)}, ${v}` : v);
  }
  set(name, value) { this.#map.set(String(name).toLowerCase(), String(value)); }
  get(name) { return this.#map.get(String(name).toLowerCase()) ?? null; }
  has(name) { return this.#map.has(String(name).toLowerCase()); }
  delete(name) { this.#map.delete(String(name).toLowerCase()); }
  forEach(fn, thisArg) { for (const [k, v] of this.#map) fn.call(thisArg, v, k, this); }
  entries() { return this.#map.entries(); }
  keys() { return this.#map.keys(); }
  values() { return this.#map.values(); }
  [Symbol.iterator]() { return this.#map.entries(); }
}

// Response is the part of the Fetch API's Response that fetch returns.
export class Response {
  #body;

  constructor(body, init = {}) {
    this.#body = typeof body === "string" ? utf8(body) : body instanceof Uint8Array ? body : new Uint8Array(0);
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? "";
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = new Headers(init.headers);
    this.url = init.url ?? "";
    this.redirected = false;
    this.type = "basic";
  }

  async bytes() { return this.#body.slice(); }
  async arrayBuffer() { return this.#body.slice().buffer; }
  async text() { return fromUtf8(this.#body); }
  async json() { return JSON.parse(fromUtf8(this.#body)); }
}

// fetch is the Fetch API's fetch over the host's http_request (ABI.md §7):
// only what the plugin's allowed_hosts grants is reachable (redirects
// re-checked, private addresses refused unless allow_private_network), the
// response is capped at max_output_kb, and the call's deadline bounds it.
// A request the host refuses or that fails rejects with a TypeError naming
// the method, the URL and the host's reason. The request is made at once
// (the engine has no I/O to overlap), so awaiting several fetches runs
// them one after the other. init: { method, headers, body, signal } with
// body a string, a Uint8Array or an ArrayBuffer; a signal aborted already
// rejects with its reason before the request is sent (once sent, a
// request runs to its end: the engine has no I/O to abort); mode,
// credentials and the like are ignored.
export async function fetch(input, init = {}) {
  const signal = init?.signal ?? input?.signal;
  if (signal?.aborted) throw signal.reason;
  const url = typeof input === "string" ? input : String(input?.url ?? input?.href ?? input);
  const method = String(init?.method ?? input?.method ?? "GET").toUpperCase();
  const headers = Object.fromEntries(new Headers(init?.headers ?? input?.headers));
  const req = { method, url };
  if (Object.keys(headers).length > 0) req.headers = headers;
  let body = init?.body;
  if (body !== undefined && body !== null) {
    if (typeof body === "string") body = utf8(body);
    else if (body instanceof ArrayBuffer) body = new Uint8Array(body);
    else if (ArrayBuffer.isView(body)) body = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
    else throw new TypeError(`fetch ${method} ${url}: the body must be a string, a Uint8Array or an ArrayBuffer (JSON.stringify an object)`);
    req.body = body.toBase64();
  }
  const answer = JSON.parse(native.http(JSON.stringify(req)));
  if (answer.error !== undefined) throw new TypeError(`fetch ${method} ${url}: ${answer.error}`);
  return new Response(answer.body === undefined ? new Uint8Array(0) : Uint8Array.fromBase64(answer.body),
    { status: answer.status, headers: answer.headers, url });
}

globalThis.fetch = fetch;
globalThis.Headers = Headers;
globalThis.Response = Response;

// The web platform's globals beyond the language: each is a getter that
// evaluates the file that defines it (web.js, or url.js for URL and
// URLSearchParams) at its first use and then replaces that file's globals
// with plain properties, so that an instance that uses none of them never
// parses it (web.js takes ~10 ms to parse). Present without them
// (QuickJS's own): queueMicrotask, atob, btoa, performance, DOMException.
let web = null;
const lazyFiles = {
  web: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Event", "EventTarget",
    "AbortController", "AbortSignal", "crypto", "TextEncoder", "TextDecoder", "structuredClone"],
  url: ["URL", "URLSearchParams"],
};
const lazyGetters = new Map();
const loaded = {};

function loadLazy(file) {
  if (loaded[file] !== undefined) return loaded[file];
  const got = native.lazy(file)({
    encode: native.encode,
    decode: native.decode,
    random: native.random,
    armed: native.armed,
    pending: native.pending,
    report: (err, what) => log("error", `${what} threw: ${errorText(err)}`),
  });
  loaded[file] = got;
  if (file === "web") web = got;
  for (const name of lazyFiles[file]) {
    if (Object.getOwnPropertyDescriptor(globalThis, name)?.get === lazyGetters.get(name)) {
      Object.defineProperty(globalThis, name, { value: got.globals[name], writable: true, configurable: true, enumerable: false });
    }
  }
  return got;
}

for (const [file, names] of Object.entries(lazyFiles)) {
  for (const name of names) {
    const get = () => loadLazy(file).globals[name];
    lazyGetters.set(name, get);
    Object.defineProperty(globalThis, name, {
      get,
      set(v) { Object.defineProperty(globalThis, name, { value: v, writable: true, configurable: true, enumerable: false }); },
      configurable: true,
      enumerable: false,
    });
  }
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

// Asking the client (ABI.md §8). A handler never waits for the client:
// ctx.elicit, ctx.sample and ctx.listRoots return the answer when this
// call has it, and otherwise a promise that never settles, having noted
// the question. When the call's promise is left pending with questions
// noted, the glue returns them (inputRequests) instead of a result; the host asks the client and calls
// the export again with the answers, and the handler runs again from its
// start, its questions now answered in the order it asks them. The
// answers of earlier rounds travel in requestState (the client carries
// it: they are the client's own answers), so a handler must ask the same
// questions in the same order each time it runs, as any code does that
// decides by its arguments and earlier answers.
const STATE_PREFIX = "mcphost.js/1:";

// rounds reads the answers of earlier rounds and this one's from the
// request.
function rounds(env) {
  const req = env.request ?? {};
  let state = { answers: {}, methods: {} };
  if (typeof req.requestState === "string" && req.requestState.startsWith(STATE_PREFIX)) {
    try {
      state = JSON.parse(req.requestState.slice(STATE_PREFIX.length));
    } catch {
      throw new McpError(-32602, "requestState is not the one this plugin sent");
    }
  }
  const r = { answers: { ...state.answers }, methods: { ...state.methods }, asked: null, next: 0 };
  for (const [k, v] of Object.entries(req.inputResponses ?? {})) r.answers[k] = v;
  asking = r;
  return r;
}

// ask returns the answer to the handler's next question, or notes it and
// returns a promise that never settles.
function ask(r, method, params) {
  const key = `q${r.next++}`;
  if (key in r.answers) {
    if (r.methods[key] !== method) {
      return Promise.reject(new Error(`the handler asked ${method} where it asked ${r.methods[key]} before: it must ask the same questions in the same order every time it runs`));
    }
    return Promise.resolve(r.answers[key]);
  }
  if (r.asked === null) r.asked = {};
  r.asked[key] = { method, params: params ?? {} };
  r.methods[key] = method;
  return new Promise(() => {});
}

// asking is the rounds of the call being served; when its handler's
// promise is left pending, the glue calls __mcphost_unsettled, which
// returns the questions it noted.
let asking = null;

// inputRequests is the output of a call that asks the client (ABI.md §8).
function inputRequests(r) {
  const state = { answers: r.answers, methods: {} };
  for (const k of Object.keys(r.answers)) state.methods[k] = r.methods[k];
  for (const k of Object.keys(r.asked)) state.methods[k] = r.methods[k];
  return "O" + JSON.stringify({ inputRequests: r.asked, requestState: STATE_PREFIX + JSON.stringify(state) });
}

// context is the ctx a handler gets: the request's context (ABI.md §3) and
// what it may do while it runs.
function context(env, r) {
  const c = env.context ?? {};
  const meta = c._meta ?? {};
  return {
    // elicit asks the user (elicitation/create: { message,
    // requestedSchema } or { mode: "url", … }) and resolves to the
    // ElicitResult ({ action, content }).
    elicit: (params) => ask(r, "elicitation/create", params),
    // sample asks the client's model (sampling/createMessage: { messages,
    // maxTokens, … }) and resolves to the CreateMessageResult.
    sample: (params) => ask(r, "sampling/createMessage", params),
    // listRoots asks for the client's roots and resolves to { roots }.
    listRoots: () => ask(r, "roots/list", {}),
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
    const value = await tool.handler(req.arguments ?? {}, context(env, rounds(env)));
    return "O" + JSON.stringify(toolResult(tool, value));
  } catch (err) {
    return toolFailure(req.name, err);
  }
}

// toolFailure is the result of tool name's handler having thrown err: a
// tool error with the error's text, or the McpError's protocol error.
function toolFailure(name, err) {
  if (err instanceof McpError) return protocolError(err.code, err.message, err.data);
  log("warn", `tool ${JSON.stringify(name)} failed: ${errorText(err)}`);
  return "O" + JSON.stringify({ content: [{ type: "text", text: errorText(err) }], isError: true });
}

// failed is the ABI error of a callback of what that threw err: an
// McpError's code, else -32603 with the error's text (also logged).
function failed(what, err) {
  if (err instanceof McpError) return protocolError(err.code, err.message, err.data);
  log("warn", `${what} failed: ${errorText(err)}`);
  return protocolError(-32603, `${what}: ${errorText(err)}`);
}

// resourceUri is the uri a read callback gets: the TypeScript SDK passes a
// URL; this has its href.
function resourceUri(uri) {
  return { href: uri, toString: () => uri };
}

function readResult(what, uri, mimeType, value) {
  const one = (c) => {
    const r = { uri };
    if (mimeType !== undefined) r.mimeType = mimeType;
    return Object.assign(r, c);
  };
  if (typeof value === "string") return { contents: [one({ text: value })] };
  if (value instanceof ArrayBuffer) value = new Uint8Array(value);
  if (value instanceof Uint8Array) return { contents: [one({ blob: value.toBase64() })] };
  if (value !== null && typeof value === "object" && Array.isArray(value.contents)) {
    return { ...value, contents: value.contents.map((c) => (c?.uri === undefined ? { uri, ...c } : c)) };
  }
  throw new TypeError(`${what} returned ${value === null ? "null" : typeof value}: want a string, a Uint8Array or { contents }`);
}

async function readResource(env) {
  const req = env.request ?? {};
  const c = env.context ?? {};
  const uri = String(req.uri ?? "");
  const r = resources.get(uri);
  const t = r === undefined && c.uriTemplate !== undefined ? templates.get(c.uriTemplate) : undefined;
  if (r === undefined && t === undefined) return protocolError(-32002, "resource not found", { uri });
  const what = r !== undefined ? `resource ${JSON.stringify(uri)}` : `resource template ${JSON.stringify(c.uriTemplate)}`;
  try {
    const ctx = context(env, rounds(env));
    const value = r !== undefined
      ? await r.read(resourceUri(uri), ctx)
      : await t.read(resourceUri(uri), c.uriVariables ?? {}, ctx);
    return "O" + JSON.stringify(readResult(what, uri, (r ?? t).def.mimeType, value));
  } catch (err) {
    return failed(what, err);
  }
}

async function getPrompt(env) {
  const req = env.request ?? {};
  const p = prompts.get(req.name);
  if (!p) return protocolError(-32602, `unknown prompt ${JSON.stringify(req.name)}`);
  const what = `prompt ${JSON.stringify(req.name)}`;
  try {
    let value = await p.get(req.arguments ?? {}, context(env, rounds(env)));
    if (typeof value === "string") value = { messages: [{ role: "user", content: { type: "text", text: value } }] };
    if (value === null || typeof value !== "object" || !Array.isArray(value.messages)) {
      throw new TypeError(`returned ${value === null ? "null" : typeof value}: want a string or { messages }`);
    }
    if (value.description === undefined && p.def.description !== undefined) value = { description: p.def.description, ...value };
    return "O" + JSON.stringify(value);
  } catch (err) {
    return failed(what, err);
  }
}

// MAX_COMPLETIONS is MCP's limit on the values of one completion result.
const MAX_COMPLETIONS = 100;

async function complete(env) {
  const req = env.request ?? {};
  const ref = req.ref ?? {};
  const arg = req.argument ?? {};
  let owner;
  if (ref.type === "ref/prompt") owner = prompts.get(ref.name);
  else if (ref.type === "ref/resource") owner = templates.get(ref.uri);
  const fn = owner?.complete?.[arg.name];
  if (typeof fn !== "function") return "O" + JSON.stringify({ completion: { values: [] } });
  const what = `completion of ${JSON.stringify(arg.name)} in ${ref.type === "ref/prompt" ? "prompt " + JSON.stringify(ref.name) : "template " + JSON.stringify(ref.uri)}`;
  try {
    const got = await fn(String(arg.value ?? ""), { arguments: req.context?.arguments ?? {} });
    const all = Array.isArray(got?.values) ? got.values : got;
    if (all === null || typeof all !== "object" || typeof all[Symbol.iterator] !== "function") {
      throw new TypeError("returned no array of values");
    }
    const values = Array.from(all, String);
    const completion = { values: values.slice(0, MAX_COMPLETIONS) };
    if (got?.total !== undefined) completion.total = got.total;
    else if (values.length > MAX_COMPLETIONS) completion.total = values.length;
    if (got?.hasMore !== undefined) completion.hasMore = Boolean(got.hasMore);
    else if (values.length > MAX_COMPLETIONS) completion.hasMore = true;
    return "O" + JSON.stringify({ completion });
  } catch (err) {
    return failed(what, err);
  }
}

const exportsTable = {
  list_tools: () => "O" + JSON.stringify({ tools: [...tools.values()].map((t) => t.def) }),
  call_tool: callTool,
  list_resources: () => "O" + JSON.stringify({ resources: [...resources.values()].map((r) => r.def) }),
  list_resource_templates: () => "O" + JSON.stringify({ resourceTemplates: [...templates.values()].map((t) => t.def) }),
  read_resource: readResource,
  list_prompts: () => "O" + JSON.stringify({ prompts: [...prompts.values()].map((p) => p.def) }),
  get_prompt: getPrompt,
  complete,
};

// The glue calls this with the name of the export and its input (the
// envelope's JSON text). It returns, or resolves to, "O" + the output or
// "E" + the ABI error's JSON.
// The glue describes an error thrown while the plugin's module is first
// evaluated with this, so that it names the place in the plugin's sources.
globalThis.__mcphost_error_text = errorText;

// serving is the export being served and its envelope: a timer's
// callback that throws ends that call (__mcphost_timer_failed).
let serving = null;

globalThis.__mcphost_dispatch = (name, input) => {
  asking = null;
  serving = null;
  const fn = exportsTable[name];
  if (!fn) return protocolError(-32603, `the JavaScript engine has no export ${name}`);
  const env = JSON.parse(input);
  serving = { name, env };
  return fn(env);
};

// __mcphost_tick is the glue's way to the timers (web.js: tick): it fires
// the timer that is due and returns 0, or the milliseconds to wait for
// the next, or -1 when none is left, or -2 when a callback threw during a
// call; __mcphost_tick(-1) drops them all (at the end of every call).
globalThis.__mcphost_tick = (mode) => (web === null ? -1 : web.tick(mode, serving !== null));

// __mcphost_timer_failed is the call's output when a timer's callback
// threw: what the handler's own throw would have given.
globalThis.__mcphost_timer_failed = () => {
  const err = web.timerFailure();
  if (serving?.name === "call_tool") return toolFailure(serving.env.request?.name, err);
  return failed(`${serving?.name ?? "the call"}: a timer's callback`, err);
};

// __mcphost_has tells whether the plugin registered anything an export
// serves.
globalThis.__mcphost_has = (name) => {
  switch (name) {
    case "list_tools":
    case "call_tool":
      return tools.size > 0;
    case "list_resources":
      return resources.size > 0;
    case "list_resource_templates":
      return templates.size > 0;
    case "read_resource":
      return resources.size + templates.size > 0;
    case "list_prompts":
    case "get_prompt":
      return prompts.size > 0;
    case "complete":
      return [...prompts.values(), ...templates.values()].some((o) => Object.keys(o.complete).length > 0);
    default:
      return false;
  }
};

// __mcphost_unsettled is what the glue calls when the call's promise is
// still pending once no job is left: the questions the handler asked
// (ABI.md §8), or undefined when it asked none (the promise waits for
// nothing that will happen).
globalThis.__mcphost_unsettled = () => (asking?.asked ? inputRequests(asking) : undefined);
