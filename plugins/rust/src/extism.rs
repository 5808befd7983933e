//! The Extism kernel, declared by hand (no PDK crate is reachable offline).
//!
//! mcphost runs plugins with Extism's kernel: the error, and the blocks a
//! plugin hands the kernel, live in the *kernel's* memory, not in this
//! module's linear memory, and are reached through the functions below,
//! imported from the module `extism:host/env` (abi/ABI.md §6). Offsets and
//! lengths are i64 (`u64` here); a byte travels as an i32 (`u8` here, which
//! Rust passes as i32).
//!
//! The input and the output move in one host call each, between the host
//! and this module's own memory: `input_read` and `output_write`, from
//! `extism:host/user` (ABI.md §7, "Moving input and output"; mcphost from
//! ABI draft 7 on). For an older host, read the input with `input_load_u64`
//! and write the output with `alloc`, `store_u64` and `output_set`, 8 bytes
//! per call (ABI.md §6, "Cost"), as `to_kernel` does for the error.
//!
//! Only the functions this plugin calls end up imported: the linker drops
//! the rest. The safe wrappers at the bottom are all the plugin uses.

#[link(wasm_import_module = "extism:host/env")]
extern "C" {
    /// Length in bytes of this call's input.
    fn input_length() -> u64;
    /// Allocates `n` bytes of kernel memory; returns the block's offset, 0 on failure.
    fn alloc(n: u64) -> u64;
    /// Writes one byte of kernel memory.
    fn store_u8(offset: u64, value: u8);
    /// Writes eight bytes of kernel memory, little-endian.
    fn store_u64(offset: u64, value: u64);
    /// Makes the UTF-8 text of the block at `offset` this call's error.
    fn error_set(offset: u64);
}

#[link(wasm_import_module = "extism:host/user")]
extern "C" {
    /// Copies the input's bytes `[offset, offset + length)` to `dst` in this
    /// module's memory (i32, i64, i32). Traps when out of range.
    fn input_read(dst: *mut u8, offset: u64, length: u32);
    /// Makes the `length` bytes at `src` in this module's memory this
    /// call's output, copied at once (i32, i32). Traps when out of range.
    fn output_write(src: *const u8, length: u32);
}

/// Reads this call's input, in one host call. None when it does not fit in
/// memory (the host's memory cap), so that the caller can answer with an
/// error instead of trapping in the allocator.
pub fn input() -> Option<Vec<u8>> {
    // SAFETY: input_read writes exactly n bytes at buf's start, within the
    // capacity just reserved, and n is the input's length, so it is in range.
    unsafe {
        let n = input_length();
        let len = u32::try_from(n).ok()?;
        let mut buf: Vec<u8> = Vec::new();
        buf.try_reserve_exact(len as usize).ok()?;
        input_read(buf.as_mut_ptr(), 0, len);
        buf.set_len(len as usize);
        Some(buf)
    }
}

/// Copies `bytes` into a new kernel block and returns its offset (0 when the
/// kernel could not allocate it). Only the error text goes this way
/// (`error_set` takes a block).
fn to_kernel(bytes: &[u8]) -> u64 {
    // SAFETY: every store is inside the block just allocated.
    unsafe {
        let off = alloc(bytes.len() as u64);
        if off == 0 {
            return 0;
        }
        let mut chunks = bytes.chunks_exact(8);
        let mut at = off;
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            store_u64(at, u64::from_le_bytes(word));
            at += 8;
        }
        let rest = chunks.remainder();
        if !rest.is_empty() && bytes.len() >= 8 {
            // The tail as one word that ends at the block's end, overlapping
            // the one before: a byte-wise kernel call costs about a microsecond.
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[bytes.len() - 8..]);
            store_u64(off + bytes.len() as u64 - 8, u64::from_le_bytes(word));
        } else {
            for &b in rest {
                store_u8(at, b);
                at += 1;
            }
        }
        off
    }
}

/// Sets this call's output, in one host call. False when it is longer
/// than a 32-bit memory can hold (it cannot be).
pub fn set_output(bytes: &[u8]) -> bool {
    let len = match u32::try_from(bytes.len()) {
        Ok(len) => len,
        Err(_) => return false,
    };
    // SAFETY: bytes is len bytes of this module's memory; the host copies
    // them before returning.
    unsafe { output_write(bytes.as_ptr(), len) };
    true
}

/// Sets this call's error text (for mcphost, the ABI's JSON error object).
pub fn set_error(text: &str) {
    let off = to_kernel(text.as_bytes());
    if off != 0 {
        // SAFETY: off is a block holding the text.
        unsafe { error_set(off) };
    }
}
