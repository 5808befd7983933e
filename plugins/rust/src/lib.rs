//! mcphost's Rust example plugin: two text tools with structured output,
//! written against the plugin ABI (abi/ABI.md) with no crate at all — the
//! Extism kernel is declared by hand in `extism.rs`, JSON is read and written
//! by `json.rs`, and SHA-256 is computed by `sha256.rs`.
//!
//! Build: ./build.sh (Debian's rustc, target wasm32-unknown-unknown).

mod extism;
mod json;
mod sha256;

use std::collections::BTreeMap;
use std::fmt::Write;

use json::{quote, Value};

/// The ABI major version this plugin is written for (abi/ABI.md §2).
#[no_mangle]
pub extern "C" fn mcphost_abi_version() -> i32 {
    1
}

/// The tools, exactly as tools/list shows them.
const TOOLS: &str = r#"{"tools":[
{"name":"word_stats","title":"Word statistics",
 "description":"Counts the lines, words, characters (Unicode scalar values) and bytes (UTF-8) of a text, and its most frequent words (case-folded, surrounding punctuation removed).",
 "inputSchema":{"type":"object","properties":{
   "text":{"type":"string","description":"The text to measure."},
   "top":{"type":"integer","minimum":0,"maximum":50,"default":5,"description":"How many of the most frequent words to list (default 5)."}},
  "required":["text"],"additionalProperties":false},
 "outputSchema":{"type":"object","properties":{
   "lines":{"type":"integer","description":"Lines, as Rust's str::lines counts them (a final line break does not start a new line)."},
   "words":{"type":"integer","description":"Runs of non-whitespace."},
   "characters":{"type":"integer","description":"Unicode scalar values."},
   "bytes":{"type":"integer","description":"UTF-8 bytes."},
   "unique_words":{"type":"integer","description":"Distinct words after case folding and trimming punctuation."},
   "top_words":{"type":"array","description":"Most frequent words, most frequent first, ties in alphabetical order.",
     "items":{"type":"object","properties":{"word":{"type":"string"},"count":{"type":"integer"}},"required":["word","count"]}}},
  "required":["lines","words","characters","bytes","unique_words","top_words"]},
 "annotations":{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}},
{"name":"sha256","title":"SHA-256",
 "description":"Computes the SHA-256 digest of a text (its UTF-8 bytes) or of bytes given in hexadecimal.",
 "inputSchema":{"type":"object","properties":{
   "text":{"type":"string","description":"The data to hash."},
   "encoding":{"type":"string","enum":["utf-8","hex"],"default":"utf-8","description":"How text gives the bytes: utf-8 (the text itself) or hex (hexadecimal digits, whitespace ignored)."}},
  "required":["text"],"additionalProperties":false},
 "outputSchema":{"type":"object","properties":{
   "sha256":{"type":"string","description":"The digest, 64 lower-case hex digits."},
   "bytes":{"type":"integer","description":"How many bytes were hashed."}},
  "required":["sha256","bytes"]},
 "annotations":{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}}
]}"#;

/// A JSON-RPC error the plugin reports with error_set (abi/ABI.md §4).
struct RpcError {
    code: i32,
    message: String,
}

const INVALID_PARAMS: i32 = -32602;
const INTERNAL_ERROR: i32 = -32603;

fn invalid(message: String) -> RpcError {
    RpcError { code: INVALID_PARAMS, message }
}

/// Runs an export: reads and parses the input envelope, calls `f` with it,
/// and sets the output or the error. Returns the export's result code.
fn run(export: &str, f: impl FnOnce(&Value) -> Result<String, RpcError>) -> i32 {
    let result = match extism::input() {
        None => Err(RpcError { code: INTERNAL_ERROR, message: format!("{}: input too large for the plugin's memory", export) }),
        Some(bytes) => match json::parse(&bytes) {
            Err(e) => Err(invalid(format!("{}: {}", export, e))),
            Ok(env) if !env.is_object() => Err(invalid(format!("{}: input is a JSON {}, not an object", export, env.kind()))),
            Ok(env) => f(&env),
        },
    };
    match result {
        Ok(out) => {
            if extism::set_output(out.as_bytes()) {
                0
            } else {
                1 // an output a 32-bit memory cannot hold: a plugin failure (kind 3)
            }
        }
        Err(e) => {
            extism::set_error(&format!(r#"{{"code":{},"message":{}}}"#, e.code, quote(&e.message)));
            1
        }
    }
}

#[no_mangle]
pub extern "C" fn list_tools() -> i32 {
    // List calls get an envelope without a request; it is not needed here.
    run("list_tools", |_| Ok(TOOLS.to_string()))
}

#[no_mangle]
pub extern "C" fn call_tool() -> i32 {
    run("call_tool", |env| {
        let req = match env.get("request") {
            Some(r) if r.is_object() => r,
            _ => return Err(invalid("call_tool: request is missing or not an object".to_string())),
        };
        let name = req.get("name").and_then(Value::as_str).ok_or_else(|| invalid("call_tool: request.name is missing".to_string()))?;
        let empty = Value::Object(Vec::new());
        let args = match req.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(a) if a.is_object() => a,
            Some(a) => return Err(invalid(format!("{}: arguments is a JSON {}, not an object", name, a.kind()))),
        };
        match name {
            "word_stats" => word_stats(args),
            "sha256" => sha256_tool(args),
            _ => Err(invalid(format!("unknown tool {}", quote(name)))),
        }
    })
}

/// The string argument `key`, required.
fn text_arg<'a>(tool: &str, args: &'a Value, key: &str) -> Result<&'a str, RpcError> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(invalid(format!("{}: argument {} is a JSON {}, not a string", tool, quote(key), v.kind()))),
        None => Err(invalid(format!("{}: argument {} is missing", tool, quote(key)))),
    }
}

/// A successful result whose structured content is `json`, repeated as text.
fn structured(json: &str) -> String {
    format!(r#"{{"content":[{{"type":"text","text":{}}}],"structuredContent":{}}}"#, quote(json), json)
}

/// A tool failure (isError) the model can read and act on.
fn tool_error(message: &str) -> String {
    format!(r#"{{"content":[{{"type":"text","text":{}}}],"isError":true}}"#, quote(message))
}

fn word_stats(args: &Value) -> Result<String, RpcError> {
    let text = text_arg("word_stats", args, "text")?;
    let top = match args.get("top") {
        None | Some(Value::Null) => 5,
        Some(v) => match v.as_f64() {
            Some(n) if n.fract() == 0.0 && (0.0..=50.0).contains(&n) => n as usize,
            _ => return Err(invalid("word_stats: argument \"top\" must be an integer from 0 to 50".to_string())),
        },
    };

    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut words = 0u64;
    for w in text.split_whitespace() {
        words += 1;
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        if !w.is_empty() {
            *counts.entry(w.to_lowercase()).or_insert(0) += 1;
        }
    }
    let unique = counts.len();
    let mut ranked: Vec<(String, u64)> = counts.into_iter().collect();
    // BTreeMap gave alphabetical order; a stable sort by count keeps it for ties.
    ranked.sort_by(|a, b| b.1.cmp(&a.1));
    ranked.truncate(top);

    let mut out = String::new();
    let _ = write!(
        out,
        r#"{{"lines":{},"words":{},"characters":{},"bytes":{},"unique_words":{},"top_words":["#,
        text.lines().count(),
        words,
        text.chars().count(),
        text.len(),
        unique
    );
    for (i, (word, count)) in ranked.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, r#"{{"word":{},"count":{}}}"#, quote(word), count);
    }
    out.push_str("]}");
    Ok(structured(&out))
}

fn sha256_tool(args: &Value) -> Result<String, RpcError> {
    let text = text_arg("sha256", args, "text")?;
    let encoding = match args.get("encoding") {
        None | Some(Value::Null) => "utf-8",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => return Err(invalid(format!("sha256: argument \"encoding\" is a JSON {}, not a string", v.kind()))),
    };
    let decoded;
    let data: &[u8] = match encoding {
        "utf-8" => text.as_bytes(),
        "hex" => match sha256::unhex(text) {
            Ok(b) => {
                decoded = b;
                &decoded
            }
            // The arguments are well-formed but the data is not: a tool
            // failure the model can correct, not a protocol error.
            Err(e) => return Ok(tool_error(&format!("sha256: text is not hexadecimal: {}", e))),
        },
        other => return Err(invalid(format!("sha256: unknown encoding {} (want \"utf-8\" or \"hex\")", quote(other)))),
    };
    let digest = sha256::hex(&sha256::digest(data));
    Ok(structured(&format!(r#"{{"sha256":"{}","bytes":{}}}"#, digest, data.len())))
}
