//! The Extism kernel, declared by hand (no PDK crate is reachable offline).
//!
//! mcphost runs plugins with Extism's kernel: the plugin's input, output and
//! error live in the *kernel's* memory, not in this module's linear memory,
//! and are reached through the functions below, imported from the module
//! `extism:host/env` (abi/ABI.md §6). Offsets and lengths are i64 (`u64`
//! here); a byte travels as an i32 (`u8` here, which Rust passes as i32).
//!
//! Only the functions this plugin calls end up imported: the linker drops
//! the rest. The safe wrappers at the bottom are all the plugin uses.

#[link(wasm_import_module = "extism:host/env")]
extern "C" {
    /// Length in bytes of this call's input.
    fn input_length() -> u64;
    /// One byte of the input at `offset` (0 ≤ offset < input_length()).
    fn input_load_u8(offset: u64) -> u8;
    /// Eight bytes of the input at `offset`, little-endian.
    fn input_load_u64(offset: u64) -> u64;
    /// Allocates `n` bytes of kernel memory; returns the block's offset, 0 on failure.
    fn alloc(n: u64) -> u64;
    /// Writes one byte of kernel memory.
    fn store_u8(offset: u64, value: u8);
    /// Writes eight bytes of kernel memory, little-endian.
    fn store_u64(offset: u64, value: u64);
    /// Makes the `length` bytes at `offset` this call's output.
    fn output_set(offset: u64, length: u64);
    /// Makes the UTF-8 text of the block at `offset` this call's error.
    fn error_set(offset: u64);
}

/// Reads this call's input. None when it does not fit in memory (the host's
/// memory cap), so that the caller can answer with an error instead of
/// trapping in the allocator.
pub fn input() -> Option<Vec<u8>> {
    // SAFETY: the kernel functions only read the kernel's own memory, within
    // the bounds input_length() gives.
    unsafe {
        let n = input_length();
        let len = usize::try_from(n).ok()?;
        let mut buf: Vec<u8> = Vec::new();
        buf.try_reserve_exact(len).ok()?;
        let mut i: u64 = 0;
        while i + 8 <= n {
            buf.extend_from_slice(&input_load_u64(i).to_le_bytes());
            i += 8;
        }
        // The last n % 8 bytes as one word that ends at n, overlapping the
        // one before: a byte-wise kernel call costs about a microsecond.
        if i < n && n >= 8 {
            let w = input_load_u64(n - 8).to_le_bytes();
            buf.extend_from_slice(&w[(8 - (n - i) as usize)..]);
            i = n;
        }
        while i < n {
            buf.push(input_load_u8(i));
            i += 1;
        }
        Some(buf)
    }
}

/// Copies `bytes` into a new kernel block and returns its offset (0 when the
/// kernel could not allocate it).
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
            // the one before (see input).
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

/// Sets this call's output. False when the kernel had no memory for it.
pub fn set_output(bytes: &[u8]) -> bool {
    let off = to_kernel(bytes);
    if off == 0 && !bytes.is_empty() {
        return false;
    }
    // SAFETY: off..off+len is the block to_kernel filled.
    unsafe { output_set(off, bytes.len() as u64) };
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
