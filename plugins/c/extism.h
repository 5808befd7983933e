/*
 * extism.h — the Extism kernel functions, declared by hand for C.
 *
 * There is no Extism C PDK here, and none is needed: a plugin talks to the
 * host through a handful of functions imported from the Wasm module
 * "extism:host/env" (abi/ABI.md §6). clang turns each declaration below into
 * a Wasm import; only the functions a plugin actually calls end up in the
 * .wasm file.
 *
 * Memory model: the kernel keeps input, output, errors and other blocks in
 * its own memory, not in the plugin's linear memory. A block is named by an
 * i64 offset into that memory (ExtismPointer). To hand bytes to the host,
 * allocate a block with extism_alloc, copy the bytes into it with
 * extism_store_u64 / extism_store_u8, then pass its offset (output_set,
 * error_set, config_get, log_*). Input is read with the input_* functions,
 * whose offsets count from the start of the input.
 *
 * Input and output need no kernel block: mcphost_input_read copies the input
 * into the plugin's own memory, and mcphost_output_write sets the output from
 * it, one host call each (ABI.md §7, "Moving input and output"; hosts from
 * ABI draft 7 on). A plugin for an older host reads the input with
 * extism_input_load_u64 and writes the output with extism_alloc,
 * extism_store_u64 and extism_output_set instead, 8 bytes per call.
 *
 * In C on wasm32, uint64_t is lowered to a Wasm i64 and uint8_t/int32_t to a
 * Wasm i32, so these prototypes give exactly the signatures of ABI.md §6.
 */
#ifndef MCPHOST_EXTISM_H
#define MCPHOST_EXTISM_H

#include <stdint.h>

/* An offset into the kernel's memory; 0 means "no block". */
typedef uint64_t ExtismPointer;

#define EXTISM_IMPORT(name) \
	__attribute__((import_module("extism:host/env"), import_name(name)))

/* Input: the JSON envelope of the current call (ABI.md §3). */
EXTISM_IMPORT("input_length") uint64_t extism_input_length(void);            /* () -> i64 */
EXTISM_IMPORT("input_load_u8") uint8_t extism_input_load_u8(uint64_t off);   /* (i64) -> i32: input byte at off */
EXTISM_IMPORT("input_load_u64") uint64_t extism_input_load_u64(uint64_t off); /* (i64) -> i64: 8 bytes at off, little-endian */

/* Blocks of kernel memory. */
EXTISM_IMPORT("alloc") ExtismPointer extism_alloc(uint64_t n);              /* (i64) -> i64: new block of n bytes, 0 if none */
EXTISM_IMPORT("free") void extism_free(ExtismPointer p);                    /* (i64) */
EXTISM_IMPORT("length") uint64_t extism_length(ExtismPointer p);            /* (i64) -> i64: a block's length */
EXTISM_IMPORT("store_u8") void extism_store_u8(uint64_t addr, uint8_t v);   /* (i64, i32) */
EXTISM_IMPORT("store_u64") void extism_store_u64(uint64_t addr, uint64_t v); /* (i64, i64), little-endian */
EXTISM_IMPORT("load_u8") uint8_t extism_load_u8(uint64_t addr);             /* (i64) -> i32 */
EXTISM_IMPORT("load_u64") uint64_t extism_load_u64(uint64_t addr);          /* (i64) -> i64 */

/* Result of the call: exactly one of them before the export returns. */
EXTISM_IMPORT("output_set") void extism_output_set(ExtismPointer p, uint64_t n); /* (i64, i64): output = n bytes of block p */
EXTISM_IMPORT("error_set") void extism_error_set(ExtismPointer p);               /* (i64): error = the text in block p */

/* Plugin config (mcphost.toml `config = {…}`) and per-instance variables.
 * Keys and values are blocks; config_get returns 0 when the key is absent. */
EXTISM_IMPORT("config_get") ExtismPointer extism_config_get(ExtismPointer key);
EXTISM_IMPORT("var_get") ExtismPointer extism_var_get(ExtismPointer key);
EXTISM_IMPORT("var_set") void extism_var_set(ExtismPointer key, ExtismPointer value);

/* A line (a block of UTF-8 text) to the host's log, tagged with the plugin. */
EXTISM_IMPORT("log_info") void extism_log_info(ExtismPointer text);
EXTISM_IMPORT("log_debug") void extism_log_debug(ExtismPointer text);
EXTISM_IMPORT("log_warn") void extism_log_warn(ExtismPointer text);
EXTISM_IMPORT("log_error") void extism_log_error(ExtismPointer text);
EXTISM_IMPORT("log_trace") void extism_log_trace(ExtismPointer text);

/*
 * mcphost's host functions (ABI.md §7), module "extism:host/user". A payload
 * is a block of UTF-8 JSON; free it after the call.
 */
#define MCPHOST_IMPORT(name) \
	__attribute__((import_module("extism:host/user"), import_name(name)))

MCPHOST_IMPORT("notify_logging_message") void mcphost_notify_logging_message(ExtismPointer json); /* {"level","logger","data"} */
MCPHOST_IMPORT("notify_progress") void mcphost_notify_progress(ExtismPointer json);               /* {"progress","total","message"} */
MCPHOST_IMPORT("notify_resource_updated") void mcphost_notify_resource_updated(ExtismPointer json); /* {"uri"} */
MCPHOST_IMPORT("notify_tool_list_changed") void mcphost_notify_tool_list_changed(void);
MCPHOST_IMPORT("notify_resource_list_changed") void mcphost_notify_resource_list_changed(void);
MCPHOST_IMPORT("notify_prompt_list_changed") void mcphost_notify_prompt_list_changed(void);
MCPHOST_IMPORT("close_sse_stream") void mcphost_close_sse_stream(ExtismPointer json);             /* {"retryAfterMs"} */

/* Input and output in one host call each, to and from the plugin's own memory
 * (pointers and lengths are i32 here, the offset i64). Out-of-range
 * arguments trap: read at most extism_input_length() bytes. */
MCPHOST_IMPORT("input_read") void mcphost_input_read(void *dst, uint64_t offset, uint32_t n); /* (i32, i64, i32): input [offset, offset+n) to dst */
MCPHOST_IMPORT("output_write") void mcphost_output_write(const void *src, uint32_t n);       /* (i32, i32): output = n bytes at src, copied now */

/* An export the host calls: a Wasm function () -> i32, named `name`. */
#define MCPHOST_EXPORT(name) __attribute__((export_name(name)))

#endif
