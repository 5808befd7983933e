// mcphost's AssemblyScript example plugin: two prompts with arguments, and
// completion of those arguments, written against the plugin ABI
// (abi/ABI.md) with Extism's AssemblyScript PDK for logging and the kernel's
// declarations; input and output move through mcphost's input_read and
// output_write (below).
//
// Build: ./build.sh (npm ci, then asc with --use abort=assembly/index/pluginAbort).
import { Host, LogLevel } from "@extism/as-pdk";
import { alloc, error_set, input_length, store_u64, store_u8 } from "@extism/as-pdk/lib/env";
import { Kind, Parser, Value, quote, validUTF8 } from "./json";
import { PROMPTS, Prompt, canonical, completions, findPrompt, render } from "./prompts";

const INVALID_PARAMS = -32602;

/** The ABI major version this plugin is written for (abi/ABI.md §2). */
export function mcphost_abi_version(): i32 {
  return 1;
}

// The abort handler, given to the compiler with --use abort=assembly/index/pluginAbort.
//
// AssemblyScript calls abort() on a failed assertion, an out-of-bounds
// access or an allocation failure. Its default imports env.abort, which
// mcphost does not provide (a plugin imports only extism:host/env, WASI and
// extism:host/user), so the plugin brings its own: log the reason to the
// host log and trap. A trap is the ABI's "plugin failed" (abi/ABI.md §4):
// the client gets a -32603 error and the instance is replaced. The exports
// check their input first, so that untrusted input never gets here.
// @ts-ignore: decorator (lazy: abort can be compiled before this file's globals)
@lazy let aborting = false;

// @ts-ignore: used through --use abort=…, not by name
function pluginAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  if (!aborting) {
    aborting = true; // logging allocates; do not recurse if that fails too
    Host.log(
      LogLevel.Error,
      "abort: " + (message !== null ? message : "") + " at " + (fileName !== null ? fileName : "?") + ":" + line.toString() + ":" + column.toString(),
    );
  }
  unreachable();
}

/** Reports a JSON-RPC error (abi/ABI.md §4); returns the export's result code. */
function fail(code: i32, message: string): i32 {
  error_set(toKernel('{"code":' + code.toString() + ',"message":' + quote(message) + "}"));
  return 1;
}

/** Sets the output, UTF-8 encoded. (The PDK's outputString sizes by UTF-16 length, not UTF-8 bytes.) */
function output(json: string): i32 {
  const b = String.UTF8.encode(json);
  output_write(changetype<usize>(b), <u32>b.byteLength); // the host copies it at once
  return 0;
}

// The call's input and output move in one host call each, to and from this
// module's own memory: input_read and output_write (ABI.md §7, "Moving
// input and output"; mcphost from ABI draft 7 on). For an older host, read
// the input with input_load_u64 and write the output with alloc, store_u64
// and output_set, 8 bytes per call (ABI.md §6, "Cost"), as toKernel does
// for the error text; the PDK's Host.input and Host.output move the last
// length % 8 bytes byte by byte, at about a microsecond each.

// @ts-ignore: decorator
@external("extism:host/user", "input_read")
declare function input_read(dst: usize, offset: u64, length: u32): void;
// @ts-ignore: decorator
@external("extism:host/user", "output_write")
declare function output_write(src: usize, length: u32): void;

/** Reads the call's input, in one host call. */
function readInput(): Uint8Array {
  const n = <i32>input_length();
  const b = new Uint8Array(n);
  if (n > 0) input_read(b.dataStart, 0, <u32>n);
  return b;
}

/** Copies s, UTF-8 encoded, into a new kernel block and returns its offset:
 * for error_set, which takes a block. */
function toKernel(s: string): u64 {
  const b = Uint8Array.wrap(String.UTF8.encode(s));
  const n = b.length;
  const off = alloc(<u64>n);
  const p = b.dataStart;
  let i = 0;
  for (; i + 8 <= n; i += 8) store_u64(off + <u64>i, load<u64>(p + <usize>i));
  if (i < n && n >= 8) {
    store_u64(off + <u64>(n - 8), load<u64>(p + <usize>(n - 8)));
    i = n;
  }
  for (; i < n; i++) store_u8(off + <u64>i, b[i]);
  return off;
}

/** The error set by readRequest when it returns null. */
let inputError = "";

/** Reads the input envelope and returns its request object, or null with inputError set. */
function readRequest(exportName: string): Value | null {
  const bytes = readInput();
  if (!validUTF8(bytes)) {
    inputError = exportName + ": input is not UTF-8";
    return null;
  }
  const p = new Parser(String.UTF8.decode(bytes.buffer));
  const env = p.run();
  if (env === null) {
    inputError = exportName + ": " + p.error;
    return null;
  }
  if (!env.isObject()) {
    inputError = exportName + ": input is a JSON " + env.kindName() + ", not an object";
    return null;
  }
  const req = env.get("request");
  if (req === null || !req.isObject()) {
    inputError = exportName + ": request is missing or not an object";
    return null;
  }
  return req;
}

/** The string member key of obj, or null when absent or not a string. */
function str(obj: Value, key: string): string | null {
  const v = obj.get(key);
  return v !== null && v.isString() ? v.str : null;
}

export function list_prompts(): i32 {
  let out = '{"prompts":[';
  for (let i = 0; i < PROMPTS.length; i++) {
    const p = PROMPTS[i];
    if (i > 0) out += ",";
    out += '{"name":' + quote(p.name) + ',"title":' + quote(p.title) + ',"description":' + quote(p.description) + ',"arguments":[';
    for (let j = 0; j < p.args.length; j++) {
      const a = p.args[j];
      if (j > 0) out += ",";
      out += '{"name":' + quote(a.name) + ',"description":' + quote(a.description) + ',"required":' + (a.required ? "true" : "false") + "}";
    }
    out += "]}";
  }
  return output(out + "]}");
}

export function get_prompt(): i32 {
  const req = readRequest("get_prompt");
  if (req === null) return fail(INVALID_PARAMS, inputError);
  const name = str(req, "name");
  if (name === null) return fail(INVALID_PARAMS, "get_prompt: request.name is missing");
  const p = findPrompt(name);
  if (p === null) return fail(INVALID_PARAMS, "unknown prompt " + quote(name));

  let args = req.get("arguments");
  if (args !== null && args.kind == Kind.Null) args = null;
  if (args !== null && !args.isObject()) return fail(INVALID_PARAMS, "prompt " + quote(p.name) + ": arguments is not an object");
  if (args !== null) {
    for (let i = 0; i < args.keys.length; i++) {
      if (p.arg(args.keys[i]) === null) {
        return fail(INVALID_PARAMS, "prompt " + quote(p.name) + " has no argument " + quote(args.keys[i]));
      }
    }
  }
  const vals: string[] = [];
  for (let i = 0; i < p.args.length; i++) {
    const a = p.args[i];
    let v = "";
    const given = args !== null ? args.get(a.name) : null;
    if (given !== null && given.kind != Kind.Null) {
      if (!given.isString()) return fail(INVALID_PARAMS, "prompt " + quote(p.name) + ": argument " + quote(a.name) + " is a JSON " + given.kindName() + ", not a string");
      v = given.str.trim();
    }
    if (a.required && v.length == 0) {
      return fail(INVALID_PARAMS, "prompt " + quote(p.name) + ": argument " + quote(a.name) + (given === null ? " is missing" : " is empty"));
    }
    if (a.strict && v.length > 0) {
      const c = canonical(a, v);
      if (c === null) {
        return fail(INVALID_PARAMS, "prompt " + quote(p.name) + ": argument " + quote(a.name) + " is " + quote(v) + ", not one of " + a.choices.join(", "));
      }
      v = c;
    }
    vals.push(v);
  }
  // The required argument keeps its inner whitespace and line breaks; only
  // the optional ones are trimmed.
  const first = args !== null ? args.get(p.args[0].name) : null;
  if (first !== null) vals[0] = first.str;

  const r = render(p, vals);
  return output(
    '{"description":' + quote(r.description) +
      ',"messages":[{"role":"user","content":{"type":"text","text":' + quote(r.text) + "}}]}",
  );
}

export function complete(): i32 {
  const req = readRequest("complete");
  if (req === null) return fail(INVALID_PARAMS, inputError);
  const ref = req.get("ref");
  if (ref === null || !ref.isObject()) return fail(INVALID_PARAMS, "complete: request.ref is missing");
  const type = str(ref, "type");
  const name = str(ref, "name");
  if (type === null || type != "ref/prompt" || name === null) {
    return fail(INVALID_PARAMS, "complete: this plugin completes prompt arguments only (ref/prompt with a name)");
  }
  const p: Prompt | null = findPrompt(name);
  if (p === null) return fail(INVALID_PARAMS, "unknown prompt " + quote(name));
  const argument = req.get("argument");
  if (argument === null || !argument.isObject()) return fail(INVALID_PARAMS, "complete: request.argument is missing");
  const argName = str(argument, "name");
  if (argName === null) return fail(INVALID_PARAMS, "complete: request.argument.name is missing");
  const a = p.arg(argName);
  if (a === null) return fail(INVALID_PARAMS, "prompt " + quote(p.name) + " has no argument " + quote(argName));
  const value = str(argument, "value");

  const values = completions(a, value !== null ? value : "");
  let out = '{"completion":{"values":[';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ",";
    out += quote(values[i]);
  }
  return output(out + '],"total":' + values.length.toString() + ',"hasMore":false}}');
}
