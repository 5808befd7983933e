// url.js: URL and URLSearchParams, the URL Standard's, for JavaScript
// plugins. Like web.js (see there), evaluated at the first use of either
// global; its value is a function of the prelude's helpers { encode,
// decode } (web.js says what they do).
(function url(native) {
"use strict";

// ------------------------------------------------------- URLSearchParams

// The percent-encode sets of the URL Standard, as predicates on a code
// point below 0x80 (every code point above 0x7E is encoded).
const C0 = (c) => c < 0x20;
const FRAGMENT = (c) => C0(c) || c === 0x20 || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x60;
const QUERY = (c) => C0(c) || c === 0x20 || c === 0x22 || c === 0x23 || c === 0x3c || c === 0x3e;
const SPECIAL_QUERY = (c) => QUERY(c) || c === 0x27;
const PATH = (c) => QUERY(c) || c === 0x3f || c === 0x5e || c === 0x60 || c === 0x7b || c === 0x7d;
const USERINFO = (c) => PATH(c) || c === 0x2f || c === 0x3a || c === 0x3b || c === 0x3d || c === 0x40 ||
  (c >= 0x5b && c <= 0x5d) || c === 0x7c;
const COMPONENT = (c) => USERINFO(c) || (c >= 0x24 && c <= 0x26) || c === 0x2b || c === 0x2c;
const FORM = (c) => COMPONENT(c) || c === 0x21 || (c >= 0x27 && c <= 0x29) || c === 0x7e;

const hex = "0123456789ABCDEF";

// percentEncode encodes the characters of s (well-formed) in set, and
// every one above 0x7E, as %XX of their UTF-8 bytes.
function percentEncode(s, set, spaceAsPlus = false) {
  let out = "";
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x7f && !set(c)) continue;
    out += s.slice(from, i);
    if (spaceAsPlus && c === 0x20) {
      out += "+";
    } else if (c < 0x80) {
      out += "%" + hex[c >> 4] + hex[c & 15];
    } else {
      const n = c >= 0xd800 && c <= 0xdbff ? 2 : 1;
      for (const b of native.encode(s.slice(i, i + n))) out += "%" + hex[b >> 4] + hex[b & 15];
      i += n - 1;
    }
    from = i + 1;
  }
  return from === 0 ? s : out + s.slice(from);
}

const isHex = (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

// percentDecode decodes %XX in s and returns the bytes' UTF-8 text
// (invalid sequences as U+FFFD).
function percentDecode(s) {
  if (!s.includes("%")) return s;
  const b = native.encode(s);
  const out = new Uint8Array(b.length);
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    if (b[i] === 0x25 && i + 2 < b.length && isHex(b[i + 1]) && isHex(b[i + 2])) {
      out[n++] = parseInt(String.fromCharCode(b[i + 1], b[i + 2]), 16);
      i += 2;
    } else {
      out[n++] = b[i];
    }
  }
  return native.decode(out.subarray(0, n), false, false);
}

function parseForm(s) {
  const list = [];
  for (const part of s.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? "" : part.slice(eq + 1);
    list.push([percentDecode(name.replaceAll("+", " ")), percentDecode(value.replaceAll("+", " "))]);
  }
  return list;
}

const usv = (v) => String(v).toWellFormed();
let paramsOf; // paramsOf(list, url): a URLSearchParams bound to url
let setParams; // setParams(params, query): the URL's query changed

class URLSearchParams {
  #list = [];
  #url = null;

  constructor(init = "") {
    if (init instanceof URLSearchParams) {
      this.#list = init.#list.map(([k, v]) => [k, v]);
    } else if (typeof init === "object" && init !== null) {
      if (typeof init[Symbol.iterator] === "function") {
        for (const pair of init) {
          const p = [...pair];
          if (p.length !== 2) throw new TypeError("URLSearchParams: each pair must have two items (a name and a value)");
          this.#list.push([usv(p[0]), usv(p[1])]);
        }
      } else {
        for (const k of Reflect.ownKeys(init)) {
          if (typeof k === "string" && Object.prototype.propertyIsEnumerable.call(init, k)) this.#list.push([usv(k), usv(init[k])]);
        }
      }
    } else {
      const s = usv(init);
      this.#list = parseForm(s.startsWith("?") ? s.slice(1) : s);
    }
  }

  static {
    paramsOf = (query, url) => {
      const p = new URLSearchParams();
      p.#list = query === null ? [] : parseForm(query);
      p.#url = url;
      return p;
    };
    setParams = (p, query) => {
      p.#list = query === null ? [] : parseForm(query);
    };
  }

  #update() {
    if (this.#url === null) return;
    const s = this.toString();
    urlSetQuery(this.#url, s === "" ? null : s);
  }

  get size() { return this.#list.length; }
  append(name, value) {
    this.#list.push([usv(name), usv(value)]);
    this.#update();
  }
  delete(name, value) {
    const n = usv(name);
    const v = value === undefined ? undefined : usv(value);
    this.#list = this.#list.filter(([k, x]) => k !== n || (v !== undefined && x !== v));
    this.#update();
  }
  get(name) {
    const n = usv(name);
    return this.#list.find(([k]) => k === n)?.[1] ?? null;
  }
  getAll(name) {
    const n = usv(name);
    return this.#list.filter(([k]) => k === n).map(([, v]) => v);
  }
  has(name, value) {
    const n = usv(name);
    const v = value === undefined ? undefined : usv(value);
    return this.#list.some(([k, x]) => k === n && (v === undefined || x === v));
  }
  set(name, value) {
    const n = usv(name), v = usv(value);
    const i = this.#list.findIndex(([k]) => k === n);
    if (i < 0) {
      this.#list.push([n, v]);
    } else {
      this.#list[i][1] = v;
      this.#list = this.#list.filter(([k], j) => j <= i || k !== n);
    }
    this.#update();
  }
  // sort orders the pairs by name, by UTF-16 code units, keeping the order
  // of equal names.
  sort() {
    this.#list = this.#list.map((p, i) => [p, i]).sort(([[a], i], [[b], j]) => (a < b ? -1 : a > b ? 1 : i - j)).map(([p]) => p);
    this.#update();
  }
  forEach(fn, thisArg) {
    for (let i = 0; i < this.#list.length; i++) fn.call(thisArg, this.#list[i][1], this.#list[i][0], this);
  }
  *entries() { for (const [k, v] of this.#list) yield [k, v]; }
  *keys() { for (const [k] of this.#list) yield k; }
  *values() { for (const [, v] of this.#list) yield v; }
  [Symbol.iterator]() { return this.entries(); }
  toString() {
    return this.#list.map(([k, v]) => percentEncode(k, FORM, true) + "=" + percentEncode(v, FORM, true)).join("&");
  }
  get [Symbol.toStringTag]() { return "URLSearchParams"; }
}

// -------------------------------------------------------------------- URL
//
// The URL Standard's basic URL parser and serializer. What is left out:
// IDNA beyond lower-casing and Punycode (no UTS #46 mapping of non-ASCII
// host names: they are lower-cased and encoded label by label), and
// blob: URLs' origins.

const specialPorts = { "ftp:": 21, "file:": null, "http:": 80, "https:": 443, "ws:": 80, "wss:": 443 };
const isSpecial = (scheme) => Object.hasOwn(specialPorts, scheme + ":");
const defaultPort = (scheme) => specialPorts[scheme + ":"] ?? null;

const isAlpha = (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isDigit = (c) => c >= 0x30 && c <= 0x39;

// forbiddenHost: the forbidden host code points; forbiddenDomain adds C0
// controls, % and DEL.
const forbiddenHost = /[\u0000\t\n\r #/:<>?@[\\\]^|]/;
const forbiddenDomain = /[\u0000-\u001f #%/:<>?@[\\\]^|\u007f]/;

function isWindowsDriveLetter(s, normalizedOnly) {
  return s.length === 2 && isAlpha(s.charCodeAt(0)) && (s[1] === ":" || (!normalizedOnly && s[1] === "|"));
}

function startsWithDriveLetter(s, i) {
  return i + 1 < s.length && isAlpha(s.charCodeAt(i)) && (s[i + 1] === ":" || s[i + 1] === "|") &&
    (i + 2 === s.length || "/\\?#".includes(s[i + 2]));
}

function isSingleDot(s) {
  return s === "." || s.toLowerCase() === "%2e";
}

function isDoubleDot(s) {
  const l = s.toLowerCase();
  return l === ".." || l === ".%2e" || l === "%2e." || l === "%2e%2e";
}

function shortenPath(url) {
  const p = url.path;
  if (url.scheme === "file" && p.length === 1 && isWindowsDriveLetter(p[0], true)) return;
  p.pop();
}

// ---- hosts

function parseIPv4Number(s) {
  if (s === "") return NaN;
  let radix = 10;
  if (s.length >= 2 && (s.startsWith("0x") || s.startsWith("0X"))) {
    s = s.slice(2);
    radix = 16;
  } else if (s.length >= 2 && s[0] === "0") {
    s = s.slice(1);
    radix = 8;
  }
  if (s === "") return 0;
  const re = radix === 10 ? /^[0-9]+$/ : radix === 16 ? /^[0-9a-fA-F]+$/ : /^[0-7]+$/;
  return re.test(s) ? parseInt(s, radix) : NaN;
}

function endsInANumber(s) {
  const parts = s.split(".");
  if (parts[parts.length - 1] === "") {
    if (parts.length === 1) return false;
    parts.pop();
  }
  const last = parts[parts.length - 1];
  return /^[0-9]+$/.test(last) || !Number.isNaN(parseIPv4Number(last));
}

// parseIPv4 returns the address as a number, or null (failure).
function parseIPv4(s) {
  const parts = s.split(".");
  if (parts[parts.length - 1] === "" && parts.length > 1) parts.pop();
  if (parts.length > 4) return null;
  const nums = parts.map(parseIPv4Number);
  if (nums.some(Number.isNaN)) return null;
  for (let i = 0; i < nums.length - 1; i++) if (nums[i] > 255) return null;
  if (nums[nums.length - 1] >= 256 ** (5 - nums.length)) return null;
  let ipv4 = nums[nums.length - 1];
  for (let i = 0; i < nums.length - 1; i++) ipv4 += nums[i] * 256 ** (3 - i);
  return ipv4;
}

// parseIPv6 returns the eight pieces, or null (failure).
function parseIPv6(s) {
  const a = [0, 0, 0, 0, 0, 0, 0, 0];
  let piece = 0, compress = null, i = 0;
  const at = (k) => s.charCodeAt(k);
  if (s[0] === ":") {
    if (s[1] !== ":") return null;
    i += 2;
    compress = ++piece;
  }
  while (i < s.length) {
    if (piece === 8) return null;
    if (s[i] === ":") {
      if (compress !== null) return null;
      i++;
      compress = ++piece;
      continue;
    }
    let value = 0, length = 0;
    while (length < 4 && i < s.length && isHex(at(i))) {
      value = value * 16 + parseInt(s[i], 16);
      i++, length++;
    }
    if (s[i] === ".") {
      if (length === 0) return null;
      i -= length;
      if (piece > 6) return null;
      let seen = 0;
      while (i < s.length) {
        let v4 = null;
        if (seen > 0) {
          if (s[i] === "." && seen < 4) i++;
          else return null;
        }
        if (!isDigit(at(i))) return null;
        while (isDigit(at(i))) {
          const n = at(i) - 0x30;
          if (v4 === null) v4 = n;
          else if (v4 === 0) return null;
          else v4 = v4 * 10 + n;
          if (v4 > 255) return null;
          i++;
        }
        a[piece] = a[piece] * 256 + v4;
        seen++;
        if (seen === 2 || seen === 4) piece++;
      }
      if (seen !== 4) return null;
      break;
    } else if (s[i] === ":") {
      i++;
      if (i === s.length) return null;
    } else if (i < s.length) {
      return null;
    }
    a[piece++] = value;
  }
  if (compress !== null) {
    let swaps = piece - compress;
    piece = 7;
    while (piece !== 0 && swaps > 0) {
      const t = a[compress + swaps - 1];
      a[compress + swaps - 1] = a[piece];
      a[piece] = t;
      piece--, swaps--;
    }
  } else if (piece !== 8) {
    return null;
  }
  return a;
}

function serializeIPv6(a) {
  // the first longest run of two or more zero pieces is compressed
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    if (a[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && a[j] === 0) j++;
    if (j - i > bestLen) best = i, bestLen = j - i;
    i = j;
  }
  let out = "";
  for (let i = 0; i < 8; i++) {
    if (i === best) {
      out += i === 0 ? "::" : ":";
      i += bestLen - 1;
      continue;
    }
    out += a[i].toString(16) + (i < 7 ? ":" : "");
  }
  return "[" + out + "]";
}

// punycode encodes one label (RFC 3492).
function punycode(label) {
  const cps = Array.from(label, (ch) => ch.codePointAt(0));
  let out = cps.filter((c) => c < 0x80).map((c) => String.fromCharCode(c)).join("");
  const basic = out.length;
  let h = basic;
  if (basic > 0) out += "-";
  let n = 128, delta = 0, bias = 72;
  const digit = (d) => String.fromCharCode(d < 26 ? d + 97 : d + 22);
  const adapt = (d, points, first) => {
    d = first ? Math.floor(d / 700) : d >> 1;
    d += Math.floor(d / points);
    let k = 0;
    while (d > 455) d = Math.floor(d / 35), k += 36;
    return k + Math.floor((36 * d) / (d + 38));
  };
  while (h < cps.length) {
    const m = Math.min(...cps.filter((c) => c >= n));
    delta += (m - n) * (h + 1);
    n = m;
    for (const c of cps) {
      if (c < n) delta++;
      if (c !== n) continue;
      let q = delta;
      for (let k = 36; ; k += 36) {
        const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
        if (q < t) break;
        out += digit(t + ((q - t) % (36 - t)));
        q = Math.floor((q - t) / (36 - t));
      }
      out += digit(q);
      bias = adapt(delta, h + 1, h === basic);
      delta = 0;
      h++;
    }
    delta++, n++;
  }
  return "xn--" + out;
}

function domainToASCII(domain) {
  const lower = domain.toLowerCase();
  // eslint-disable-next-line no-control-regex
  if (/^[\u0000-\u007f]*$/.test(lower)) return lower;
  return lower.normalize("NFC").split(/[.\u3002\uff0e\uff61]/).map((l) => (/^[\u0000-\u007f]*$/.test(l) ? l : punycode(l))).join(".");
}

// parseHost returns the serialized host, or null (failure).
function parseHost(input, special) {
  if (input.startsWith("[")) {
    if (!input.endsWith("]")) return null;
    const a = parseIPv6(input.slice(1, -1));
    return a === null ? null : serializeIPv6(a);
  }
  if (!special) {
    if (forbiddenHost.test(input)) return null;
    return percentEncode(input, C0);
  }
  const ascii = domainToASCII(percentDecode(input));
  if (ascii === "" || forbiddenDomain.test(ascii)) return null;
  if (endsInANumber(ascii)) {
    const v4 = parseIPv4(ascii);
    if (v4 === null) return null;
    return [v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255].join(".");
  }
  return ascii;
}

// ---- the parser

const EOF = undefined;

// parse runs the basic URL parser on input, with base (a record) and, for
// the setters, url and a state override. It returns the record, or null
// on failure (and, with an override, false when it changes nothing).
function parse(input, base, url, override) {
  if (url === undefined) {
    url = { scheme: "", username: "", password: "", host: null, port: null, path: [], query: null, fragment: null };
    // eslint-disable-next-line no-control-regex
    input = input.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
  }
  input = input.replace(/[\t\n\r]/g, "");
  let state = override ?? "scheme start";
  let buffer = "";
  let atSign = false, insideBrackets = false, passwordToken = false;
  const cps = Array.from(input);
  for (let p = 0; p <= cps.length; p++) {
    const c = cps[p];
    const code = c === EOF ? -1 : c.codePointAt(0);
    const special = isSpecial(url.scheme);
    switch (state) {
    case "scheme start":
      if (c !== EOF && isAlpha(code)) {
        buffer += c.toLowerCase();
        state = "scheme";
      } else if (override === undefined) {
        state = "no scheme";
        p--;
      } else {
        return null;
      }
      break;
    case "scheme":
      if (c !== EOF && (isAlpha(code) || isDigit(code) || c === "+" || c === "-" || c === ".")) {
        buffer += c.toLowerCase();
      } else if (c === ":") {
        if (override !== undefined) {
          if (isSpecial(url.scheme) !== isSpecial(buffer)) return false;
          if ((url.username !== "" || url.password !== "" || url.port !== null) && buffer === "file") return false;
          if (url.scheme === "file" && url.host === "") return false;
        }
        url.scheme = buffer;
        if (override !== undefined) {
          if (url.port === defaultPort(url.scheme)) url.port = null;
          return url;
        }
        buffer = "";
        if (url.scheme === "file") {
          state = "file";
        } else if (isSpecial(url.scheme) && base && base.scheme === url.scheme) {
          state = "special relative or authority";
        } else if (isSpecial(url.scheme)) {
          state = "special authority slashes";
        } else if (cps[p + 1] === "/") {
          state = "path or authority";
          p++;
        } else {
          url.path = "";
          state = "opaque path";
        }
      } else if (override === undefined) {
        buffer = "";
        state = "no scheme";
        p = -1;
      } else {
        return null;
      }
      break;
    case "no scheme":
      if (!base || (typeof base.path === "string" && c !== "#")) return null;
      if (typeof base.path === "string" && c === "#") {
        url.scheme = base.scheme;
        url.path = base.path;
        url.query = base.query;
        url.fragment = "";
        state = "fragment";
      } else if (base.scheme !== "file") {
        state = "relative";
        p--;
      } else {
        state = "file";
        p--;
      }
      break;
    case "special relative or authority":
      if (c === "/" && cps[p + 1] === "/") {
        state = "special authority ignore slashes";
        p++;
      } else {
        state = "relative";
        p--;
      }
      break;
    case "path or authority":
      if (c === "/") {
        state = "authority";
      } else {
        state = "path";
        p--;
      }
      break;
    case "relative":
      url.scheme = base.scheme;
      if (c === "/") {
        state = "relative slash";
      } else if (isSpecial(url.scheme) && c === "\\") {
        state = "relative slash";
      } else {
        url.username = base.username;
        url.password = base.password;
        url.host = base.host;
        url.port = base.port;
        url.path = base.path.slice();
        url.query = base.query;
        if (c === "?") {
          url.query = "";
          state = "query";
        } else if (c === "#") {
          url.fragment = "";
          state = "fragment";
        } else if (c !== EOF) {
          url.query = null;
          shortenPath(url);
          state = "path";
          p--;
        }
      }
      break;
    case "relative slash":
      if (special && (c === "/" || c === "\\")) {
        state = "special authority ignore slashes";
      } else if (c === "/") {
        state = "authority";
      } else {
        url.username = base.username;
        url.password = base.password;
        url.host = base.host;
        url.port = base.port;
        state = "path";
        p--;
      }
      break;
    case "special authority slashes":
      if (c === "/" && cps[p + 1] === "/") {
        state = "special authority ignore slashes";
        p++;
      } else {
        state = "special authority ignore slashes";
        p--;
      }
      break;
    case "special authority ignore slashes":
      if (c !== "/" && c !== "\\") {
        state = "authority";
        p--;
      }
      break;
    case "authority":
      if (c === "@") {
        if (atSign) buffer = "%40" + buffer;
        atSign = true;
        for (const ch of buffer) {
          if (ch === ":" && !passwordToken) {
            passwordToken = true;
            continue;
          }
          const enc = percentEncode(ch, USERINFO);
          if (passwordToken) url.password += enc;
          else url.username += enc;
        }
        buffer = "";
      } else if (c === EOF || c === "/" || c === "?" || c === "#" || (special && c === "\\")) {
        if (atSign && buffer === "") return null;
        p -= Array.from(buffer).length + 1;
        buffer = "";
        state = "host";
      } else {
        buffer += c;
      }
      break;
    case "host":
    case "hostname":
      if (override !== undefined && url.scheme === "file") {
        p--;
        state = "file host";
      } else if (c === ":" && !insideBrackets) {
        if (buffer === "") return null;
        if (override === "hostname") return false;
        const host = parseHost(buffer, special);
        if (host === null) return null;
        url.host = host;
        buffer = "";
        state = "port";
      } else if (c === EOF || c === "/" || c === "?" || c === "#" || (special && c === "\\")) {
        p--;
        if (special && buffer === "") return null;
        if (override !== undefined && buffer === "" && (url.username !== "" || url.password !== "" || url.port !== null)) return false;
        const host = parseHost(buffer, special);
        if (host === null) return null;
        url.host = host;
        buffer = "";
        state = "path start";
        if (override !== undefined) return url;
      } else {
        if (c === "[") insideBrackets = true;
        if (c === "]") insideBrackets = false;
        buffer += c;
      }
      break;
    case "port":
      if (c !== EOF && isDigit(code)) {
        buffer += c;
      } else if (c === EOF || c === "/" || c === "?" || c === "#" || (special && c === "\\") || override !== undefined) {
        if (buffer !== "") {
          const port = parseInt(buffer, 10);
          if (port > 65535) return null;
          url.port = port === defaultPort(url.scheme) ? null : port;
          buffer = "";
        } else if (override !== undefined) {
          return false;
        }
        if (override !== undefined) return url;
        state = "path start";
        p--;
      } else {
        return null;
      }
      break;
    case "file":
      url.scheme = "file";
      url.host = "";
      if (c === "/" || c === "\\") {
        state = "file slash";
      } else if (base && base.scheme === "file") {
        url.host = base.host;
        url.path = base.path.slice();
        url.query = base.query;
        if (c === "?") {
          url.query = "";
          state = "query";
        } else if (c === "#") {
          url.fragment = "";
          state = "fragment";
        } else if (c !== EOF) {
          url.query = null;
          if (!startsWithDriveLetter(cps.slice(p).join(""), 0)) shortenPath(url);
          else url.path = [];
          state = "path";
          p--;
        }
      } else {
        state = "path";
        p--;
      }
      break;
    case "file slash":
      if (c === "/" || c === "\\") {
        state = "file host";
      } else {
        if (base && base.scheme === "file") {
          url.host = base.host;
          if (!startsWithDriveLetter(cps.slice(p).join(""), 0) && Array.isArray(base.path) && base.path.length > 0 &&
            isWindowsDriveLetter(base.path[0], true)) url.path.push(base.path[0]);
        }
        state = "path";
        p--;
      }
      break;
    case "file host":
      if (c === EOF || c === "/" || c === "\\" || c === "?" || c === "#") {
        p--;
        if (override === undefined && isWindowsDriveLetter(buffer, false)) {
          state = "path";
        } else if (buffer === "") {
          url.host = "";
          if (override !== undefined) return url;
          state = "path start";
        } else {
          let host = parseHost(buffer, true);
          if (host === null) return null;
          if (host === "localhost") host = "";
          url.host = host;
          if (override !== undefined) return url;
          buffer = "";
          state = "path start";
        }
      } else {
        buffer += c;
      }
      break;
    case "path start":
      if (special) {
        state = "path";
        if (c !== "/" && c !== "\\") p--;
      } else if (override === undefined && c === "?") {
        url.query = "";
        state = "query";
      } else if (override === undefined && c === "#") {
        url.fragment = "";
        state = "fragment";
      } else if (c !== EOF) {
        state = "path";
        if (c !== "/") p--;
      } else if (override !== undefined && url.host === null) {
        url.path.push("");
      }
      break;
    case "path":
      if (c === EOF || c === "/" || (special && c === "\\") || (override === undefined && (c === "?" || c === "#"))) {
        if (isDoubleDot(buffer)) {
          shortenPath(url);
          if (c !== "/" && !(special && c === "\\")) url.path.push("");
        } else if (isSingleDot(buffer) && c !== "/" && !(special && c === "\\")) {
          url.path.push("");
        } else if (!isSingleDot(buffer)) {
          if (url.scheme === "file" && url.path.length === 0 && isWindowsDriveLetter(buffer, false)) buffer = buffer[0] + ":";
          url.path.push(buffer);
        }
        buffer = "";
        if (c === "?") {
          url.query = "";
          state = "query";
        } else if (c === "#") {
          url.fragment = "";
          state = "fragment";
        }
      } else {
        buffer += percentEncode(c, PATH);
      }
      break;
    case "opaque path":
      if (c === "?") {
        url.query = "";
        state = "query";
      } else if (c === "#") {
        url.fragment = "";
        state = "fragment";
      } else if (c === " " && (cps[p + 1] === "?" || cps[p + 1] === "#")) {
        url.path += "%20";
      } else if (c !== EOF) {
        url.path += percentEncode(c, C0);
      }
      break;
    case "query":
      if ((override === undefined && c === "#") || c === EOF) {
        url.query += percentEncode(buffer, special ? SPECIAL_QUERY : QUERY);
        buffer = "";
        if (c === "#") {
          url.fragment = "";
          state = "fragment";
        }
      } else {
        buffer += c;
      }
      break;
    case "fragment":
      if (c !== EOF) url.fragment += percentEncode(c, FRAGMENT);
      break;
    }
  }
  return url;
}

function serializePath(url) {
  if (typeof url.path === "string") return url.path;
  let out = "";
  for (const seg of url.path) out += "/" + seg;
  return out;
}

function serialize(url, noFragment) {
  let out = url.scheme + ":";
  if (url.host !== null) {
    out += "//";
    if (url.username !== "" || url.password !== "") {
      out += url.username;
      if (url.password !== "") out += ":" + url.password;
      out += "@";
    }
    out += url.host;
    if (url.port !== null) out += ":" + url.port;
  } else if (Array.isArray(url.path) && url.path.length > 1 && url.path[0] === "") {
    out += "/.";
  }
  out += serializePath(url);
  if (url.query !== null) out += "?" + url.query;
  if (!noFragment && url.fragment !== null) out += "#" + url.fragment;
  return out;
}

let recordOf; // recordOf(url): a URL's record
let urlSetQuery; // urlSetQuery(url, query): URLSearchParams changed the query

function cannotHaveCredentials(u) {
  return u.host === null || u.host === "" || u.scheme === "file";
}

// URL is the URL Standard's URL: parse with an optional base, the
// components' getters and setters, searchParams live with the URL, and
// URL.canParse and URL.parse.
class URL {
  #url;
  #params = null;

  constructor(input, base) {
    let b = null;
    if (base !== undefined) {
      b = parse(usv(base));
      if (b === null) throw new TypeError(`Invalid base URL: ${usv(base)}`);
    }
    const u = parse(usv(input), b);
    if (u === null) throw new TypeError(`Invalid URL: ${usv(input)}${base === undefined ? "" : ` (base ${usv(base)})`}`);
    this.#url = u;
  }

  static {
    recordOf = (url) => url.#url;
    urlSetQuery = (url, query) => {
      url.#url.query = query;
    };
  }

  static canParse(input, base) {
    try {
      new URL(input, base);
      return true;
    } catch {
      return false;
    }
  }

  static parse(input, base) {
    try {
      return new URL(input, base);
    } catch {
      return null;
    }
  }

  get href() { return serialize(this.#url); }
  set href(v) {
    const u = parse(usv(v));
    if (u === null) throw new TypeError(`Invalid URL: ${usv(v)}`);
    this.#url = u;
    if (this.#params !== null) setParams(this.#params, u.query);
  }
  toString() { return this.href; }
  toJSON() { return this.href; }

  get origin() {
    const u = this.#url;
    if (u.scheme === "blob") {
      try {
        const inner = new URL(serializePath(u));
        if (inner.protocol === "http:" || inner.protocol === "https:") return inner.origin;
      } catch {
        // an opaque origin
      }
      return "null";
    }
    if (!["ftp", "http", "https", "ws", "wss"].includes(u.scheme)) return "null";
    return `${u.scheme}://${u.host}${u.port === null ? "" : ":" + u.port}`;
  }

  get protocol() { return this.#url.scheme + ":"; }
  set protocol(v) { parse(usv(v) + ":", null, this.#url, "scheme start"); }

  get username() { return this.#url.username; }
  set username(v) {
    if (cannotHaveCredentials(this.#url)) return;
    this.#url.username = percentEncode(usv(v), USERINFO);
  }

  get password() { return this.#url.password; }
  set password(v) {
    if (cannotHaveCredentials(this.#url)) return;
    this.#url.password = percentEncode(usv(v), USERINFO);
  }

  get host() {
    const u = this.#url;
    if (u.host === null) return "";
    return u.port === null ? u.host : `${u.host}:${u.port}`;
  }
  set host(v) {
    if (typeof this.#url.path === "string") return;
    this.#edit(usv(v), "host");
  }

  get hostname() { return this.#url.host ?? ""; }
  set hostname(v) {
    if (typeof this.#url.path === "string") return;
    this.#edit(usv(v), "hostname");
  }

  get port() { return this.#url.port === null ? "" : String(this.#url.port); }
  set port(v) {
    const u = this.#url;
    if (cannotHaveCredentials(u)) return;
    const s = usv(v);
    if (s === "") u.port = null;
    else this.#edit(s, "port");
  }

  get pathname() { return serializePath(this.#url); }
  set pathname(v) {
    if (typeof this.#url.path === "string") return;
    const copy = { ...this.#url, path: [] };
    if (parse(usv(v), null, copy, "path start")) this.#url.path = copy.path;
  }

  get search() {
    const q = this.#url.query;
    return q === null || q === "" ? "" : "?" + q;
  }
  set search(v) {
    let s = usv(v);
    if (s === "") {
      this.#url.query = null;
    } else {
      if (s.startsWith("?")) s = s.slice(1);
      this.#url.query = "";
      parse(s, null, this.#url, "query");
    }
    if (this.#params !== null) setParams(this.#params, this.#url.query);
  }

  get searchParams() {
    this.#params ??= paramsOf(this.#url.query, this);
    return this.#params;
  }

  get hash() {
    const f = this.#url.fragment;
    return f === null || f === "" ? "" : "#" + f;
  }
  set hash(v) {
    let s = usv(v);
    if (s === "") {
      this.#url.fragment = null;
      return;
    }
    if (s.startsWith("#")) s = s.slice(1);
    this.#url.fragment = "";
    parse(s, null, this.#url, "fragment");
  }

  // #edit runs the parser on a copy of the URL's record with a state
  // override, and keeps the copy unless that failed.
  #edit(s, state) {
    const copy = { ...this.#url, path: Array.isArray(this.#url.path) ? this.#url.path.slice() : this.#url.path };
    const r = parse(s, null, copy, state);
    if (r) this.#url = copy;
  }

  get [Symbol.toStringTag]() { return "URL"; }
}

return { globals: { URL, URLSearchParams } };
})
