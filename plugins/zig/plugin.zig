//! plugin.zig — mcphost's example plugin in Zig: Base64, both ways.
//!
//! It contributes one tool, `base64`: {"text": "...", "mode": "encode"|"decode"}.
//! Encoding gives the standard (RFC 4648 §4) alphabet with padding; decoding
//! accepts it with or without padding, ignoring ASCII whitespace (so wrapped
//! MIME-style text decodes), and fails as an isError result when the text is
//! not Base64 or decodes to bytes that are not UTF-8 text.
//!
//! There is no PDK: the Extism kernel (module "extism:host/env", abi/ABI.md §6)
//! and mcphost's input_read and output_write (module "extism:host/user",
//! ABI.md §7) are declared by hand below, the envelope is parsed with std.json into typed
//! structs, results are written with std.json.stringify, and the codec is
//! std.base64. No libc, no WASI: wasm32-freestanding.
//!
//! The input is untrusted: anything malformed is refused with the ABI's
//! {"code":-32602,...} error, never a trap. Nothing a call allocates outlives
//! it, so an instance serving many calls does not grow.
//!
//! Build: ./build.sh (zig 0.11.0 from npm; see README.md).

const std = @import("std");

// ---------------------------------------------------------------------------
// The Extism kernel. `extern "module"` makes a Wasm import from that module;
// u64 is a Wasm i64 and u8 a Wasm i32, so these are ABI.md §6's signatures.
// Offsets are into the kernel's memory, not ours. Only the error text goes
// through a kernel block (error_set takes one).

const kernel = struct {
    extern "extism:host/env" fn input_length() u64;
    extern "extism:host/env" fn alloc(n: u64) u64;
    extern "extism:host/env" fn store_u8(addr: u64, v: u8) void;
    extern "extism:host/env" fn store_u64(addr: u64, v: u64) void;
    extern "extism:host/env" fn error_set(off: u64) void;
};

// The input and the output in one host call each, to and from our own memory
// (ABI.md §7, "Moving input and output"; mcphost from ABI draft 7 on). A
// pointer is a Wasm i32, a u32 too, a u64 an i64. Out-of-range arguments
// trap. For an older host, read the input 8 bytes per call with
// input_load_u64 and write the output with alloc, store_u64 and output_set,
// as toKernel does for the error.
const host = struct {
    extern "extism:host/user" fn input_read(dst: [*]u8, off: u64, n: u32) void;
    extern "extism:host/user" fn output_write(src: [*]const u8, n: u32) void;
};

const invalid_params = -32602;
const internal_error = -32603;
const max_input = 4 << 20; // larger envelopes are refused (the tool's text is far smaller)

/// readInput copies the call's input into memory from allocator, in one host
/// call.
fn readInput(allocator: std.mem.Allocator) ![]u8 {
    const n = kernel.input_length();
    if (n > max_input) return error.InputTooLarge;
    const buf = try allocator.alloc(u8, @intCast(n));
    // An empty slice's pointer is undefined (0xffffffff): outside our
    // memory, where even 0 bytes trap.
    if (buf.len > 0) host.input_read(buf.ptr, 0, @intCast(buf.len));
    return buf;
}

/// toKernel copies bytes into a new kernel block and returns its offset
/// (0 when the kernel has no room). For the error text only.
fn toKernel(bytes: []const u8) u64 {
    const off = kernel.alloc(bytes.len);
    if (off == 0) return 0;
    var i: usize = 0;
    while (i + 8 <= bytes.len) : (i += 8) {
        kernel.store_u64(off + i, std.mem.readIntLittle(u64, bytes[i..][0..8]));
    }
    // The last n % 8 bytes as one word that ends at n, overlapping the one
    // before: a byte-wise kernel call costs about a microsecond.
    if (i < bytes.len and bytes.len >= 8) {
        kernel.store_u64(off + bytes.len - 8, std.mem.readIntLittle(u64, bytes[bytes.len - 8 ..][0..8]));
        i = bytes.len;
    }
    while (i < bytes.len) : (i += 1) kernel.store_u8(off + i, bytes[i]);
    return off;
}

/// output hands bytes to the host as the call's output, in one host call
/// (the host copies them at once): the export returns 0.
fn output(bytes: []const u8) i32 {
    host.output_write(bytes.ptr, @intCast(bytes.len));
    return 0;
}

/// fail sets the ABI's JSON error {"code", "message"} (ABI.md §4) and returns
/// the non-zero code the export returns with it.
fn fail(code: i32, message: []const u8) i32 {
    // A fixed buffer: failing must not need the heap (it may be out of memory).
    var buf: [1024]u8 = undefined;
    var fbs = std.io.fixedBufferStream(&buf);
    std.json.stringify(.{ .code = code, .message = message }, .{}, fbs.writer()) catch {
        fbs.reset();
        fbs.writer().writeAll("{\"code\":-32603,\"message\":\"error message too long\"}") catch unreachable;
    };
    const off = toKernel(fbs.getWritten());
    if (off != 0) kernel.error_set(off);
    return 1;
}

// ---------------------------------------------------------------------------
// The exports (ABI.md §2, §3). Each is a Wasm function () -> i32.

export fn mcphost_abi_version() i32 {
    return 1;
}

const tools_json =
    \\{"tools":[{"name":"base64","title":"Base64",
    \\"description":"Encodes UTF-8 text as Base64 (RFC 4648, standard alphabet, padded), or decodes Base64 back to text. Decoding ignores whitespace and accepts missing padding; it fails if the text is not Base64 or the bytes are not UTF-8.",
    \\"inputSchema":{"type":"object","properties":{
    \\"text":{"type":"string","description":"the text to encode, or the Base64 to decode"},
    \\"mode":{"type":"string","enum":["encode","decode"],"description":"encode (text to Base64) or decode (Base64 to text)"}},
    \\"required":["text","mode"],"additionalProperties":false},
    \\"annotations":{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}}]}
;

export fn list_tools() i32 {
    return output(tools_json);
}

/// The part of the envelope call_tool reads; other fields are ignored.
const Envelope = struct {
    request: ?struct {
        name: []const u8,
        arguments: ?struct {
            text: ?[]const u8 = null,
            mode: ?[]const u8 = null,
        } = null,
    } = null,
};

/// Buffers the size of the input (the input itself, Base64 in and out) come
/// straight from Wasm pages and are freed as soon as they are used; the rest
/// of a call (parsed JSON, messages) lives in an arena released when it
/// returns. An arena would keep every buffer of a call, grown by half again.
const heap = std.heap.page_allocator;

export fn call_tool() i32 {
    var arena = std.heap.ArenaAllocator.init(heap);
    defer arena.deinit();
    return callTool(arena.allocator()) catch |err| switch (err) {
        error.OutOfMemory => fail(internal_error, "out of memory"),
        error.InputTooLarge => fail(invalid_params, "call_tool: the input is larger than 4 MiB"),
    };
}

fn callTool(allocator: std.mem.Allocator) error{ OutOfMemory, InputTooLarge }!i32 {
    const input = try readInput(heap);
    defer heap.free(input);
    const env = std.json.parseFromSliceLeaky(Envelope, allocator, input, .{
        .ignore_unknown_fields = true,
    }) catch |err| {
        if (err == error.OutOfMemory) return error.OutOfMemory;
        return fail(invalid_params, try std.fmt.allocPrint(allocator, "call_tool: the input is not a valid envelope ({s})", .{@errorName(err)}));
    };
    const req = env.request orelse return fail(invalid_params, "call_tool: the input has no request");
    if (!std.mem.eql(u8, req.name, "base64")) {
        return fail(invalid_params, try std.fmt.allocPrint(allocator, "unknown tool \"{s}\"", .{req.name}));
    }
    // The host has validated the arguments against the schema; a direct
    // caller may not have.
    const args = req.arguments orelse return fail(invalid_params, "base64: arguments text and mode are required");
    const text = args.text orelse return fail(invalid_params, "base64: argument \"text\" is required");
    const mode = args.mode orelse return fail(invalid_params, "base64: argument \"mode\" is required");

    if (std.mem.eql(u8, mode, "encode")) {
        // Base64 needs no JSON escapes: it is encoded straight into the
        // output, between the text result's JSON before and after it, so
        // that a large result is held once.
        const encoder = std.base64.standard.Encoder;
        const before = "{\"content\":[{\"type\":\"text\",\"text\":\"";
        const after = "\"}],\"isError\":false}";
        const out = try heap.alloc(u8, before.len + encoder.calcSize(text.len) + after.len);
        defer heap.free(out);
        @memcpy(out[0..before.len], before);
        _ = encoder.encode(out[before.len .. out.len - after.len], text);
        @memcpy(out[out.len - after.len ..], after);
        return output(out);
    }
    if (std.mem.eql(u8, mode, "decode")) return decode(allocator, text);
    return fail(invalid_params, try std.fmt.allocPrint(allocator, "base64: mode must be \"encode\" or \"decode\", got \"{s}\"", .{mode}));
}

/// decode outputs the result of decoding Base64 text, ignoring ASCII
/// whitespace, with or without padding: the text, or an isError result
/// telling the model why it is not Base64 or not text.
fn decode(allocator: std.mem.Allocator, text: []const u8) !i32 {
    const compact = try heap.alloc(u8, text.len);
    defer heap.free(compact);
    var n: usize = 0;
    for (text) |c| switch (c) {
        ' ', '\t', '\r', '\n' => {},
        else => {
            compact[n] = c;
            n += 1;
        },
    };
    const b64 = compact[0..n];
    // Unpadded input is decoded as such; padded input must be padded right.
    const codecs = if (n % 4 != 0 and std.mem.indexOfScalar(u8, b64, '=') == null)
        std.base64.standard_no_pad
    else
        std.base64.standard;
    const size = codecs.Decoder.calcSizeForSlice(b64) catch |err| return invalid(allocator, err);
    const dest = try heap.alloc(u8, size);
    defer heap.free(dest);
    codecs.Decoder.decode(dest, b64) catch |err| return invalid(allocator, err);
    if (!std.unicode.utf8ValidateSlice(dest)) {
        return result(try std.fmt.allocPrint(allocator, "the {d} decoded bytes are not UTF-8 text", .{dest.len}), true);
    }
    return result(dest, false);
}

fn invalid(allocator: std.mem.Allocator, err: std.base64.Error) !i32 {
    const why = switch (err) {
        error.InvalidCharacter => "a character outside the Base64 alphabet (A-Z a-z 0-9 + /)",
        error.InvalidPadding => "wrong padding or length",
        error.NoSpaceLeft => "too long",
    };
    return result(try std.fmt.allocPrint(allocator, "the text is not Base64: {s}", .{why}), true);
}

/// result outputs a CallToolResult with one text content.
fn result(text: []const u8, is_error: bool) i32 {
    const Content = struct { type: []const u8 = "text", text: []const u8 };
    const value = .{ .content = [_]Content{.{ .text = text }}, .isError = is_error };
    return outputJson(value);
}

/// outputJson hands value, as JSON, to the host as the call's output. It is
/// written twice: once to count its bytes, then into a buffer of that size,
/// which one output_write hands over.
fn outputJson(value: anytype) i32 {
    var counter = std.io.countingWriter(std.io.null_writer);
    std.json.stringify(value, .{}, counter.writer()) catch unreachable; // the null writer never fails
    const buf = heap.alloc(u8, @intCast(counter.bytes_written)) catch return fail(internal_error, "out of memory");
    defer heap.free(buf);
    var fbs = std.io.fixedBufferStream(buf);
    std.json.stringify(value, .{}, fbs.writer()) catch return fail(internal_error, "the output changed size");
    if (fbs.pos != buf.len) return fail(internal_error, "the output changed size");
    return output(buf);
}
