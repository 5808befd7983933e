// web.js: the web platform's globals that a JavaScript plugin may expect
// beyond the language: timers, Event and EventTarget, AbortController and
// AbortSignal, crypto.getRandomValues and randomUUID, TextEncoder and
// TextDecoder, structuredClone (URL and URLSearchParams are url.js's).
// The prelude defines each of these globals as a getter that evaluates
// this file the first time any of them is used (an instance that uses
// none never parses it), and then replaces them with the values this
// file returns.
//
// This is a script whose value is a function of the prelude's helpers
// { encode, decode, random, armed, pending, report }: encode(s) the UTF-8 bytes of
// a well-formed string, decode(u8, fatal, stream) the Encoding Standard's
// UTF-8 decoder, random(u8) fills u8 from the host's crypto/rand, armed()
// tells the glue that a timer is set, pending() whether a job waits to
// run, report(err, what) logs an error no
// caller can catch. Nothing here reaches outside the sandbox: timers wait
// through the glue's WASI sleep, inside the running call only.
(function web(native) {
"use strict";

// ---------------------------------------------------------------- timers
//
// A timer fires only while a call (or the module's first evaluation)
// runs: the glue, when the call's promise is pending and no job is left,
// calls tick(), which fires the earliest due timer or says how long to
// wait for it; the glue sleeps that long (bounded by the call's deadline)
// and runs the job queue after each callback. When the call ends, the
// timers left are dropped (tick(-1)): an instance serves many calls, and
// a timer of one call never fires in another.

const timers = new Map(); // id -> Timeout, set and not yet fired or cleared
// heap: the scheduled timers, earliest (_due, then _order) first; a
// cleared timer (_fn null) stays until it comes first, or until compact.
const heap = [];
let lastId = 0;
let lastOrder = 0;
let timerError = null; // what a callback threw during a call

function heapPush(t) {
  let i = heap.length;
  heap.push(t);
  while (i > 0) {
    const p = (i - 1) >> 1;
    const q = heap[p];
    if (q._due < t._due || (q._due === t._due && q._order < t._order)) break;
    heap[i] = q;
    i = p;
  }
  heap[i] = t;
}

function heapPop() {
  const last = heap.pop();
  const n = heap.length;
  if (n === 0) return;
  let i = 0;
  for (;;) {
    let c = 2 * i + 1;
    if (c >= n) break;
    let x = heap[c];
    if (c + 1 < n) {
      const y = heap[c + 1];
      if (y._due < x._due || (y._due === x._due && y._order < x._order)) c++, x = y;
    }
    if (last._due < x._due || (last._due === x._due && last._order < x._order)) break;
    heap[i] = x;
    i = c;
  }
  heap[i] = last;
}

// compact rebuilds the heap without its cleared timers once they are most
// of it (a loop that sets and clears timers).
function compact() {
  if (heap.length < 1024 || heap.length < 2 * timers.size) return;
  const live = heap.filter((t) => t._fn !== null);
  heap.length = 0;
  for (const t of live) heapPush(t);
}

function schedule(t) {
  t._due = performance.now() + t._delay;
  t._order = ++lastOrder;
  heapPush(t);
}

// Timeout is what setTimeout and setInterval return: as in Node, it
// converts to its number id (clearTimeout takes either), and has ref,
// unref, hasRef (no-ops: nothing outlives the call) and refresh.
class Timeout {
  constructor(fn, delay, args, repeat) {
    this._id = ++lastId;
    this._fn = fn;
    this._args = args;
    this._delay = delay;
    this._repeat = repeat;
    this._due = 0;
    this._order = 0;
  }
  ref() { return this; }
  unref() { return this; }
  hasRef() { return true; }
  refresh() {
    if (timers.get(this._id) !== this) return this;
    const i = heap.indexOf(this);
    if (i >= 0) {
      const rest = heap.splice(i);
      for (const t of rest.slice(1)) heapPush(t);
    }
    schedule(this);
    return this;
  }
  [Symbol.toPrimitive]() { return this._id; }
}

// delayOf: a delay that is not a number from 0 to 2^31-1 ms is 0, as in
// browsers; an interval waits at least 1 ms, as in Node.
function delayOf(ms, repeat) {
  let d = Number(ms);
  if (!(d >= 0 && d <= 2147483647)) d = 0;
  return repeat && d < 1 ? 1 : d;
}

function setTimer(what, fn, ms, args, repeat) {
  if (typeof fn !== "function") {
    throw new TypeError(`${what}: the callback must be a function (a string of code is not evaluated)`);
  }
  const t = new Timeout(fn, delayOf(ms, repeat), args, repeat);
  if (timers.size === 0) native.armed();
  timers.set(t._id, t);
  schedule(t);
  return t;
}

function clearTimer(id) {
  const key = typeof id === "object" && id !== null ? id._id : Number(id);
  const t = timers.get(key);
  if (t === undefined) return;
  timers.delete(key);
  t._fn = t._args = null;
  compact();
}

function setTimeout(fn, ms, ...args) { return setTimer("setTimeout", fn, ms, args, false); }
function setInterval(fn, ms, ...args) { return setTimer("setInterval", fn, ms, args, true); }
function clearTimeout(id) { clearTimer(id); }
function clearInterval(id) { clearTimer(id); }

// tick fires the timers that are due, earliest first, until one leaves a
// job (a promise reaction) to run, and returns 0; or it returns the
// milliseconds until the next one, or -1 when none is left. A callback
// that throws during a call ends the call (-2, the error kept for
// timerFailure), as an uncaught exception would end a Node process;
// during the module's evaluation the exception fails the plugin's start.
// tick(-1) drops every timer.
function tick(mode, inCall) {
  if (mode === -1) {
    timers.clear();
    heap.length = 0;
    timerError = null;
    return -1;
  }
  let fired = false;
  let now = performance.now();
  while (heap.length > 0) {
    const t = heap[0];
    if (t._fn === null) {
      heapPop();
      continue;
    }
    if (t._due > now) {
      // The callbacks fired may have taken time: look at the clock again
      // before making the glue sleep.
      if (fired) return 0;
      now = performance.now();
      if (t._due > now) return t._due - now;
    }
    heapPop();
    if (t._repeat) schedule(t);
    else timers.delete(t._id);
    try {
      if (t._args.length === 0) t._fn();
      else t._fn.apply(globalThis, t._args);
    } catch (err) {
      if (!inCall) throw err;
      timerError = err;
      return -2;
    }
    fired = true;
    if (native.pending()) return 0;
  }
  return fired ? 0 : -1;
}

function timerFailure() {
  const err = timerError;
  timerError = null;
  return err;
}

// ----------------------------------------------------- Event, EventTarget

let eventStopped; // eventStopped(event): stopImmediatePropagation was called

class Event {
  #stop = false;
  constructor(type, init = {}) {
    if (arguments.length === 0) throw new TypeError("Event: the type is required");
    this.type = String(type);
    this.bubbles = Boolean(init?.bubbles);
    this.cancelable = Boolean(init?.cancelable);
    this.composed = Boolean(init?.composed);
    this.defaultPrevented = false;
    this.target = null;
    this.currentTarget = null;
    this.timeStamp = performance.now();
    this.isTrusted = false;
  }
  preventDefault() { if (this.cancelable) this.defaultPrevented = true; }
  stopPropagation() {}
  stopImmediatePropagation() { this.#stop = true; }
  static {
    eventStopped = (e) => e.#stop;
  }
}

class EventTarget {
  #listeners = new Map(); // type -> [{ fn, once, capture }]

  addEventListener(type, fn, options) {
    if (fn === null || fn === undefined) return;
    const opts = typeof options === "object" && options !== null ? options : { capture: Boolean(options) };
    if (opts.signal?.aborted) return;
    type = String(type);
    let list = this.#listeners.get(type);
    if (list === undefined) this.#listeners.set(type, (list = []));
    const capture = Boolean(opts.capture);
    if (list.some((l) => l.fn === fn && l.capture === capture)) return;
    const l = { fn, once: Boolean(opts.once), capture, removed: false };
    list.push(l);
    opts.signal?.addEventListener("abort", () => this.removeEventListener(type, fn, { capture }));
  }

  removeEventListener(type, fn, options) {
    const capture = Boolean(typeof options === "object" && options !== null ? options.capture : options);
    const list = this.#listeners.get(String(type));
    const i = list?.findIndex((l) => l.fn === fn && l.capture === capture) ?? -1;
    if (i >= 0) {
      list[i].removed = true;
      list.splice(i, 1);
    }
  }

  dispatchEvent(event) {
    if (!(event instanceof Event)) throw new TypeError("dispatchEvent: the argument must be an Event");
    event.target = event.currentTarget = this;
    const handler = this[`on${event.type}`];
    const list = [...(this.#listeners.get(event.type) ?? [])];
    if (typeof handler === "function") list.unshift({ fn: handler, handler: true });
    for (const l of list) {
      if (l.removed) continue;
      if (l.once) this.removeEventListener(event.type, l.fn, { capture: l.capture });
      try {
        if (typeof l.fn === "function") l.fn.call(this, event);
        else l.fn?.handleEvent?.(event);
      } catch (err) {
        native.report(err, `a listener of the event "${event.type}"`);
      }
      if (eventStopped(event)) break;
    }
    event.currentTarget = null;
    return !event.defaultPrevented;
  }
}

// ------------------------------------------------ AbortController, Signal

const signalKey = Symbol("AbortSignal");
let abortSignal; // abortSignal(signal, reason): AbortSignal's private abort

class AbortSignal extends EventTarget {
  #aborted = false;
  #reason = undefined;

  constructor(key) {
    if (key !== signalKey) throw new TypeError("AbortSignal: illegal constructor (use new AbortController().signal)");
    super();
    this.onabort = null;
  }
  get aborted() { return this.#aborted; }
  get reason() { return this.#reason; }
  throwIfAborted() {
    if (this.#aborted) throw this.#reason;
  }

  static {
    abortSignal = (signal, reason) => {
      if (signal.#aborted) return;
      signal.#aborted = true;
      signal.#reason = reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason;
      signal.dispatchEvent(new Event("abort"));
    };
  }

  // abort returns a signal aborted already.
  static abort(reason) {
    const s = new AbortSignal(signalKey);
    abortSignal(s, reason);
    return s;
  }

  // timeout returns a signal that aborts with a TimeoutError after ms, if
  // the call is still running then (a timer: see setTimeout).
  static timeout(ms) {
    const s = new AbortSignal(signalKey);
    setTimeout(() => abortSignal(s, new DOMException("The operation timed out.", "TimeoutError")), ms);
    return s;
  }

  // any returns a signal that aborts when the first of signals does.
  static any(signals) {
    const s = new AbortSignal(signalKey);
    for (const from of signals) {
      if (from.aborted) {
        abortSignal(s, from.reason);
        return s;
      }
    }
    for (const from of signals) from.addEventListener("abort", () => abortSignal(s, from.reason), { once: true });
    return s;
  }
}

class AbortController {
  #signal = new AbortSignal(signalKey);
  get signal() { return this.#signal; }
  abort(reason) { abortSignal(this.#signal, reason); }
}

// ---------------------------------------------------------------- crypto

const integerArrays = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array,
  Int32Array, Uint32Array, BigInt64Array, BigUint64Array];

// crypto has the Web Crypto API's getRandomValues and randomUUID, from
// WASI random_get (the host's crypto/rand); crypto.subtle is not there.
const crypto = Object.freeze({
  getRandomValues(array) {
    if (!integerArrays.some((T) => array instanceof T)) {
      throw new DOMException("crypto.getRandomValues: the argument must be an integer typed array", "TypeMismatchError");
    }
    if (array.byteLength > 65536) {
      throw new DOMException(`crypto.getRandomValues: ${array.byteLength} bytes asked for, at most 65536`, "QuotaExceededError");
    }
    native.random(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
    return array;
  },
  randomUUID() {
    const b = new Uint8Array(16);
    native.random(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = b.toHex();
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  },
});

// ------------------------------------------------ TextEncoder, TextDecoder

// bytesOf views a BufferSource as a Uint8Array, without copying.
function bytesOf(what, input) {
  if (input === undefined) return new Uint8Array(0);
  if (input instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && input instanceof SharedArrayBuffer)) {
    return new Uint8Array(input);
  }
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new TypeError(`${what}: the input must be an ArrayBuffer, a typed array or a DataView`);
}

class TextEncoder {
  get encoding() { return "utf-8"; }
  encode(input = "") {
    return native.encode(String(input).toWellFormed());
  }
  // encodeInto writes as many whole characters of source as fit into
  // destination (a Uint8Array).
  encodeInto(source, destination) {
    if (!(destination instanceof Uint8Array)) throw new TypeError("TextEncoder.encodeInto: the destination must be a Uint8Array");
    const s = String(source).toWellFormed();
    const all = native.encode(s);
    if (all.length <= destination.length) {
      destination.set(all);
      return { read: s.length, written: all.length };
    }
    let read = 0, written = 0;
    while (read < s.length) {
      const c = s.codePointAt(read);
      const n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      if (written + n > destination.length) break;
      written += n;
      read += c > 0xffff ? 2 : 1;
    }
    destination.set(all.subarray(0, written));
    return { read, written };
  }
}

const utf8Labels = new Set(["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"]);

// TextDecoder decodes UTF-8 only (the labels of UTF-8; another encoding
// is a RangeError), with fatal, ignoreBOM and decode's stream option.
class TextDecoder {
  #fatal;
  #ignoreBOM;
  #pending = null; // the bytes of an unfinished character, when streaming
  #started = false;

  constructor(label = "utf-8", options = {}) {
    const l = String(label).trim().toLowerCase();
    if (!utf8Labels.has(l)) throw new RangeError(`TextDecoder: the encoding ${JSON.stringify(String(label))} is not supported (only UTF-8 is)`);
    this.#fatal = Boolean(options?.fatal);
    this.#ignoreBOM = Boolean(options?.ignoreBOM);
  }
  get encoding() { return "utf-8"; }
  get fatal() { return this.#fatal; }
  get ignoreBOM() { return this.#ignoreBOM; }

  decode(input, options = {}) {
    let bytes = bytesOf("TextDecoder.decode", input);
    if (this.#pending !== null) {
      const b = new Uint8Array(this.#pending.length + bytes.length);
      b.set(this.#pending);
      b.set(bytes, this.#pending.length);
      bytes = b;
      this.#pending = null;
    }
    const stream = Boolean(options?.stream);
    let text;
    if (stream) {
      const [t, used] = native.decode(bytes, this.#fatal, true);
      if (used < bytes.length) this.#pending = bytes.slice(used);
      text = t;
    } else {
      text = native.decode(bytes, this.#fatal, false);
    }
    if (!this.#started && !this.#ignoreBOM && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    this.#started = stream && (this.#started || text.length > 0);
    return text;
  }
}

// --------------------------------------------------------- structuredClone

const cloneable = new Map([
  [Int8Array, "Int8Array"], [Uint8Array, "Uint8Array"], [Uint8ClampedArray, "Uint8ClampedArray"],
  [Int16Array, "Int16Array"], [Uint16Array, "Uint16Array"], [Int32Array, "Int32Array"],
  [Uint32Array, "Uint32Array"], [Float32Array, "Float32Array"], [Float64Array, "Float64Array"],
  [BigInt64Array, "BigInt64Array"], [BigUint64Array, "BigUint64Array"],
]);
if (typeof Float16Array === "function") cloneable.set(Float16Array, "Float16Array");

const errorTypes = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };

function dataCloneError(what) {
  return new DOMException(`structuredClone: ${what} could not be cloned`, "DataCloneError");
}

// structuredClone copies value deeply as the HTML structured clone does:
// primitives (not symbols), plain objects (own enumerable string keys),
// arrays, Date, RegExp, Map, Set, ArrayBuffer, typed arrays, DataView,
// errors, boxed primitives; cycles and shared references kept. A
// function, a symbol or another class's object (a WeakMap, a Promise) is
// a DataCloneError. options.transfer is not supported.
function structuredClone(value, options) {
  if (options?.transfer !== undefined && [...options.transfer].length > 0) {
    throw new DOMException("structuredClone: transfer is not supported", "DataCloneError");
  }
  const seen = new Map();
  const clone = (v) => {
    if (typeof v === "symbol") throw dataCloneError(`the symbol ${String(v)}`);
    if (typeof v === "function") throw dataCloneError(`the function ${v.name || "(anonymous)"}`);
    if (v === null || typeof v !== "object") return v;
    if (seen.has(v)) return seen.get(v);
    let out;
    const keep = (o) => (seen.set(v, o), o);
    if (Array.isArray(v)) {
      out = keep(new Array(v.length));
      for (const k of Object.keys(v)) out[k] = clone(v[k]);
      return out;
    }
    if (v instanceof Date) return keep(new Date(v.getTime()));
    if (v instanceof RegExp) return keep(new RegExp(v.source, v.flags));
    if (v instanceof ArrayBuffer) return keep(v.slice(0));
    if (v instanceof DataView) {
      const buf = clone(v.buffer);
      return keep(new DataView(buf, v.byteOffset, v.byteLength));
    }
    if (ArrayBuffer.isView(v)) {
      const name = cloneable.get(v.constructor) ?? [...cloneable].find(([T]) => v instanceof T)?.[1];
      const T = globalThis[name];
      const buf = clone(v.buffer);
      return keep(new T(buf, v.byteOffset, v.length));
    }
    if (v instanceof Map) {
      out = keep(new Map());
      for (const [k, x] of v) out.set(clone(k), clone(x));
      return out;
    }
    if (v instanceof Set) {
      out = keep(new Set());
      for (const x of v) out.add(clone(x));
      return out;
    }
    if (v instanceof Error) {
      const T = errorTypes[v.name] ?? Error;
      out = keep(Object.create(T.prototype));
      for (const k of ["message", "stack", "cause"]) {
        if (Object.hasOwn(v, k)) Object.defineProperty(out, k, { value: clone(v[k]), writable: true, configurable: true });
      }
      if (!Object.hasOwn(out, "message")) Object.defineProperty(out, "message", { value: "", writable: true, configurable: true });
      return out;
    }
    for (const [T, f] of [[Boolean, Boolean.prototype.valueOf], [Number, Number.prototype.valueOf],
      [String, String.prototype.valueOf], [BigInt, BigInt.prototype.valueOf]]) {
      if (v instanceof T) return keep(Object(f.call(v)));
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      throw dataCloneError(`an object of the class ${v.constructor?.name ?? "(unknown)"}`);
    }
    out = keep({});
    for (const k of Object.keys(v)) out[k] = clone(v[k]);
    return out;
  };
  if (arguments.length === 0) throw new TypeError("structuredClone: a value is required");
  return clone(value);
}

return {
  tick, timerFailure,
  globals: {
    setTimeout, clearTimeout, setInterval, clearInterval,
    Event, EventTarget, AbortController, AbortSignal, crypto,
    TextEncoder, TextDecoder, structuredClone,
  },
};
})
