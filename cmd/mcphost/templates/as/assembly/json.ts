// A small, strict JSON reader and writer for the plugin's envelopes.
//
// AssemblyScript has no JSON in its standard library, and the npm JSON
// packages for it need a compiler transform; the plugin only reads a few
// fields, so this hand-written reader is enough and has no dependency.
// It never aborts: AssemblyScript has no exceptions, so a malformed text,
// invalid UTF-8 or nesting deeper than MAX_DEPTH is reported through
// Parser.error instead.

const MAX_DEPTH = 64;

export const enum Kind {
  Null,
  Bool,
  Number,
  String,
  Array,
  Object,
}

const KIND_NAMES: string[] = ["null", "boolean", "number", "string", "array", "object"];

/** A parsed JSON value. Objects keep their members in order. */
export class Value {
  kind: Kind;
  bool: bool = false;
  num: f64 = 0;
  str: string = "";
  items: Value[] = [];
  keys: string[] = [];
  values: Value[] = [];

  constructor(kind: Kind) {
    this.kind = kind;
  }

  /** The member `key` of an object (its last occurrence, as in Go); null otherwise. */
  get(key: string): Value | null {
    if (this.kind != Kind.Object) return null;
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (this.keys[i] == key) return this.values[i];
    }
    return null;
  }

  isObject(): bool {
    return this.kind == Kind.Object;
  }

  isString(): bool {
    return this.kind == Kind.String;
  }

  /** The JSON type's name, for error messages. */
  kindName(): string {
    return KIND_NAMES[<i32>this.kind];
  }
}

/** Whether bytes are well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF). */
export function validUTF8(b: Uint8Array): bool {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = <u32>b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let need = 0;
    let min: u32 = 0;
    let cp: u32 = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
      min = 0x80;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      min = 0x800;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      min = 0x10000;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + need >= n) return false; // truncated sequence
    for (let k = 1; k <= need; k++) {
      const d = <u32>b[i + k];
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += need + 1;
  }
  return true;
}

/** Reads one JSON text. On failure it returns null and sets error. */
export class Parser {
  private s: string;
  private pos: i32 = 0;
  error: string = "";

  constructor(s: string) {
    this.s = s;
  }

  /** The value of the whole text, or null with the reason in error. */
  run(): Value | null {
    this.ws();
    const v = this.value(0);
    if (v === null) return null;
    this.ws();
    if (this.pos < this.s.length) return this.fail("unexpected data after the JSON value");
    return v;
  }

  private fail(what: string): Value | null {
    if (this.error.length == 0) this.error = "invalid JSON at offset " + this.pos.toString() + ": " + what;
    return null;
  }

  private peek(): i32 {
    return this.pos < this.s.length ? this.s.charCodeAt(this.pos) : -1;
  }

  private ws(): void {
    let c = this.peek();
    while (c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d) {
      this.pos++;
      c = this.peek();
    }
  }

  private eat(c: i32): bool {
    if (this.peek() == c) {
      this.pos++;
      return true;
    }
    return false;
  }

  private literal(word: string, v: Value): Value | null {
    if (this.s.substr(this.pos, word.length) != word) return this.fail("unknown literal");
    this.pos += word.length;
    return v;
  }

  private value(depth: i32): Value | null {
    const c = this.peek();
    if (c < 0) return this.fail("unexpected end of input");
    if (c == 0x6e) return this.literal("null", new Value(Kind.Null));
    if (c == 0x74) {
      const v = new Value(Kind.Bool);
      v.bool = true;
      return this.literal("true", v);
    }
    if (c == 0x66) return this.literal("false", new Value(Kind.Bool));
    if (c == 0x22) {
      const v = new Value(Kind.String);
      if (!this.string(v)) return null;
      return v;
    }
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (c == 0x5b || c == 0x7b) {
      if (depth >= MAX_DEPTH) return this.fail("nesting too deep");
      this.pos++;
      return c == 0x5b ? this.array(depth) : this.object(depth);
    }
    return this.fail("unexpected character");
  }

  private array(depth: i32): Value | null {
    const v = new Value(Kind.Array);
    this.ws();
    if (this.eat(0x5d)) return v;
    while (true) {
      this.ws();
      const item = this.value(depth + 1);
      if (item === null) return null;
      v.items.push(item);
      this.ws();
      if (this.eat(0x5d)) return v;
      if (!this.eat(0x2c)) return this.fail("expected ',' or ']'");
    }
    return null; // unreachable
  }

  private object(depth: i32): Value | null {
    const v = new Value(Kind.Object);
    this.ws();
    if (this.eat(0x7d)) return v;
    while (true) {
      this.ws();
      if (this.peek() != 0x22) return this.fail("expected a member name");
      const key = new Value(Kind.String);
      if (!this.string(key)) return null;
      this.ws();
      if (!this.eat(0x3a)) return this.fail("expected ':'");
      this.ws();
      const member = this.value(depth + 1);
      if (member === null) return null;
      v.keys.push(key.str);
      v.values.push(member);
      this.ws();
      if (this.eat(0x7d)) return v;
      if (!this.eat(0x2c)) return this.fail("expected ',' or '}'");
    }
    return null; // unreachable
  }

  private digits(): i32 {
    const start = this.pos;
    let c = this.peek();
    while (c >= 0x30 && c <= 0x39) {
      this.pos++;
      c = this.peek();
    }
    return this.pos - start;
  }

  private number(): Value | null {
    const start = this.pos;
    this.eat(0x2d);
    if (!this.eat(0x30) && this.digits() == 0) return this.fail("expected a digit");
    if (this.eat(0x2e) && this.digits() == 0) return this.fail("expected a digit after '.'");
    if (this.eat(0x65) || this.eat(0x45)) {
      if (!this.eat(0x2b)) this.eat(0x2d);
      if (this.digits() == 0) return this.fail("expected a digit in the exponent");
    }
    const v = new Value(Kind.Number);
    v.num = parseFloat(this.s.substring(start, this.pos));
    if (!isFinite(v.num)) return this.fail("number out of range");
    return v;
  }

  private hex4(): i32 {
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.peek();
      let d: i32;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      else return -1;
      v = v * 16 + d;
      this.pos++;
    }
    return v;
  }

  /** Reads a string into v.str; this.pos is at its opening quote. */
  private string(v: Value): bool {
    this.pos++;
    const parts: string[] = [];
    while (true) {
      // The run of plain characters up to a quote, backslash or control character.
      const start = this.pos;
      let c = this.peek();
      while (c >= 0x20 && c != 0x22 && c != 0x5c) {
        this.pos++;
        c = this.peek();
      }
      if (this.pos > start) parts.push(this.s.substring(start, this.pos));
      if (c < 0) {
        this.fail("unterminated string");
        return false;
      }
      if (c == 0x22) {
        this.pos++;
        v.str = parts.join("");
        return true;
      }
      if (c != 0x5c) {
        this.fail("control character in string");
        return false;
      }
      this.pos++;
      const e = this.peek();
      this.pos++;
      if (e == 0x22) parts.push('"');
      else if (e == 0x5c) parts.push("\\");
      else if (e == 0x2f) parts.push("/");
      else if (e == 0x62) parts.push("\b");
      else if (e == 0x66) parts.push("\f");
      else if (e == 0x6e) parts.push("\n");
      else if (e == 0x72) parts.push("\r");
      else if (e == 0x74) parts.push("\t");
      else if (e == 0x75) {
        const u = this.hex4();
        if (u < 0) {
          this.fail("expected four hex digits after \\u");
          return false;
        }
        // UTF-16 is AssemblyScript's string encoding: a surrogate pair given
        // as two escapes is rejoined as it stands; a lone one is sanitized
        // when the string is written back (see quote).
        parts.push(String.fromCharCode(u));
      } else {
        this.pos--;
        this.fail(e < 0 ? "unterminated string" : "invalid escape");
        return false;
      }
    }
    return false; // unreachable
  }
}

const HEX = "0123456789abcdef";

/** s as a JSON string literal. A lone surrogate becomes U+FFFD, so the output is valid UTF-8. */
export function quote(s: string): string {
  const parts: string[] = ['"'];
  let start = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    let rep: string | null = null;
    if (c == 0x22) rep = '\\"';
    else if (c == 0x5c) rep = "\\\\";
    else if (c == 0x0a) rep = "\\n";
    else if (c == 0x0d) rep = "\\r";
    else if (c == 0x09) rep = "\\t";
    else if (c < 0x20) rep = "\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++; // a valid pair: keep both
        continue;
      }
      rep = "\ufffd";
    } else if (c >= 0xdc00 && c <= 0xdfff) rep = "\ufffd";
    if (rep !== null) {
      if (i > start) parts.push(s.substring(start, i));
      parts.push(rep);
      start = i + 1;
    }
  }
  if (n > start) parts.push(s.substring(start, n));
  parts.push('"');
  return parts.join("");
}
