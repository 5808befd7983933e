;; wat.wat — an mcphost plugin written by hand in WebAssembly text.
;;
;; Read this first if you are bringing a new language to mcphost: it is the
;; whole contract (abi/ABI.md) with nothing hidden by a PDK. It grows the
;; ping plugin of ABI.md §11 into one that reads its input:
;;
;;   tool ping      answers "pong" (ABI.md §11, unchanged)
;;   tool envelope  answers with the JSON envelope the call received, as text:
;;                  what every export of every plugin gets to read
;;   any other name the ABI's JSON error, {"code":-32602,"message":…}
;;
;; Every export the host calls has the type () -> i32: it reads its input
;; through the kernel, sets an output (or an error), and returns 0 (or not).
;;
;; Build: ./build.sh  (wat2wasm from wabt; see README.md)

(module
  ;; ---------------------------------------------------------------------
  ;; Imports: the Extism kernel (ABI.md §6), module "extism:host/env".
  ;;
  ;; The kernel keeps the input, the output and the error in its OWN memory,
  ;; not in ours. Its blocks are named by i64 offsets. To hand the host some
  ;; bytes: $alloc a block, copy the bytes in with $store_u64/$store_u8,
  ;; then pass the block's offset to $output_set or $error_set.
  ;; ---------------------------------------------------------------------
  (import "extism:host/env" "input_length"   (func $input_length   (result i64)))           ;; bytes of input
  (import "extism:host/env" "input_load_u8"  (func $input_load_u8  (param i64) (result i32))) ;; input byte at offset
  (import "extism:host/env" "input_load_u64" (func $input_load_u64 (param i64) (result i64))) ;; 8 input bytes, little-endian
  (import "extism:host/env" "alloc"          (func $alloc          (param i64) (result i64))) ;; new block of n bytes
  (import "extism:host/env" "store_u8"       (func $store_u8       (param i64 i32)))         ;; write a byte into a block
  (import "extism:host/env" "store_u64"      (func $store_u64      (param i64 i64)))         ;; write 8 bytes into a block
  (import "extism:host/env" "output_set"     (func $output_set     (param i64 i64)))         ;; output = (block, length)
  (import "extism:host/env" "error_set"      (func $error_set      (param i64)))             ;; error = the text in block

  ;; ---------------------------------------------------------------------
  ;; Our memory. Exported as "memory", as Wasm toolchains do.
  ;;
  ;;      0 .. 1023   the constant texts below (data segments)
  ;;   1024 ..        the input, copied out of the kernel by $load_input
  ;;   after it       the output being built by the envelope tool
  ;;
  ;; One 64 KiB page to start; $load_input grows it to fit a large input
  ;; (the host's memory_mb caps how far).
  ;; ---------------------------------------------------------------------
  (memory (export "memory") 1)

  (global $INPUT i32 (i32.const 1024))   ;; where the input is copied
  (global $input_end (mut i32) (i32.const 1024)) ;; one past its last byte

  ;; The constant texts, each a pointer and a length. A Wasm module has no
  ;; string type: a "string" is bytes in memory plus a length.

  ;; list_tools' output: an MCP ListToolsResult.
  (global $TOOLS i32 (i32.const 0)) (global $TOOLS_LEN i32 (i32.const 419))
  (data (i32.const 0)
    "{\"tools\":["
      "{\"name\":\"ping\",\"description\":\"Answers pong.\","
       "\"inputSchema\":{\"type\":\"object\",\"additionalProperties\":false}},"
      "{\"name\":\"envelope\",\"description\":\"Returns the JSON envelope this call received "
       "from the host, as text: what a plugin reads with input_length and input_load_u8/u64. "
       "Any arguments are accepted and appear in it.\","
       "\"inputSchema\":{\"type\":\"object\"},"
       "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}}"
    "]}")

  ;; ping's output: an MCP CallToolResult with one text content.
  (global $PONG i32 (i32.const 432)) (global $PONG_LEN i32 (i32.const 43))
  (data (i32.const 432) "{\"content\":[{\"type\":\"text\",\"text\":\"pong\"}]}")

  ;; envelope's output is OPEN + the input as a JSON string's inside + CLOSE.
  (global $OPEN i32 (i32.const 480)) (global $OPEN_LEN i32 (i32.const 35))
  (data (i32.const 480) "{\"content\":[{\"type\":\"text\",\"text\":\"")
  (global $CLOSE i32 (i32.const 516)) (global $CLOSE_LEN i32 (i32.const 4))
  (data (i32.const 516) "\"}]}")

  ;; The keys we look up, and the tool names as they appear in JSON (quotes
  ;; included, so "ping" does not match "pingpong").
  (global $KEY_REQUEST i32 (i32.const 520)) (global $KEY_REQUEST_LEN i32 (i32.const 7))
  (data (i32.const 520) "request")
  (global $KEY_NAME i32 (i32.const 528)) (global $KEY_NAME_LEN i32 (i32.const 4))
  (data (i32.const 528) "name")
  (global $PING i32 (i32.const 536)) (global $PING_LEN i32 (i32.const 6))
  (data (i32.const 536) "\"ping\"")
  (global $ENVELOPE i32 (i32.const 544)) (global $ENVELOPE_LEN i32 (i32.const 10))
  (data (i32.const 544) "\"envelope\"")

  ;; Errors (ABI.md §4): error_set with this JSON makes the client get a
  ;; JSON-RPC error with this code and message. The unknown tool's error is
  ;; ERR_UNKNOWN + the name (escaped) + ERR_END.
  (global $ERR_UNKNOWN i32 (i32.const 560)) (global $ERR_UNKNOWN_LEN i32 (i32.const 39))
  (data (i32.const 560) "{\"code\":-32602,\"message\":\"unknown tool ")
  (global $ERR_END i32 (i32.const 600)) (global $ERR_END_LEN i32 (i32.const 2))
  (data (i32.const 600) "\"}")
  (global $ERR_NO_NAME i32 (i32.const 608)) (global $ERR_NO_NAME_LEN i32 (i32.const 68))
  (data (i32.const 608) "{\"code\":-32602,\"message\":\"call_tool: the input has no request.name\"}")
  (global $ERR_TOO_BIG i32 (i32.const 680)) (global $ERR_TOO_BIG_LEN i32 (i32.const 59))
  (data (i32.const 680) "{\"code\":-32603,\"message\":\"input too large for this plugin\"}")

  (global $HEX i32 (i32.const 744))
  (data (i32.const 744) "0123456789abcdef")

  ;; =====================================================================
  ;; Talking to the kernel
  ;; =====================================================================

  ;; $to_kernel copies $n bytes at $ptr (our memory) into a new kernel block
  ;; and returns the block's offset, 8 bytes at a time.
  (func $to_kernel (param $ptr i32) (param $n i32) (result i64)
    (local $block i64) (local $i i32)
    (local.set $block (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done
      (loop $words
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $n)))
        (call $store_u64
          (i64.add (local.get $block) (i64.extend_i32_u (local.get $i)))
          (i64.load (i32.add (local.get $ptr) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $words)))
    ;; The last n mod 8 bytes go as one more word, the one that ends at n
    ;; (it overlaps the previous one): each kernel call costs about a
    ;; microsecond, and byte by byte would be up to 7 of them. Only a block
    ;; under 8 bytes is written byte by byte.
    (if (i32.and (i32.ge_u (local.get $n) (i32.const 8)) (i32.lt_u (local.get $i) (local.get $n)))
      (then
        (call $store_u64
          (i64.add (local.get $block) (i64.extend_i32_u (i32.sub (local.get $n) (i32.const 8))))
          (i64.load (i32.add (local.get $ptr) (i32.sub (local.get $n) (i32.const 8)))))
        (local.set $i (local.get $n))))
    (block $done
      (loop $bytes
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (call $store_u8
          (i64.add (local.get $block) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bytes)))
    (local.get $block))

  ;; $output sets the call's output to $n bytes at $ptr; returns 0, the
  ;; export's success code.
  (func $output (param $ptr i32) (param $n i32) (result i32)
    (call $output_set (call $to_kernel (local.get $ptr) (local.get $n))
                      (i64.extend_i32_u (local.get $n)))
    (i32.const 0))

  ;; $error sets the call's error to the $n bytes at $ptr (the ABI's JSON);
  ;; returns 1, a failure code. The host reads the error only when the
  ;; export returns non-zero.
  (func $error (param $ptr i32) (param $n i32) (result i32)
    (call $error_set (call $to_kernel (local.get $ptr) (local.get $n)))
    (i32.const 1))

  ;; $load_input copies the input into our memory at $INPUT and sets
  ;; $input_end. It makes room for the input and for up to 6 bytes of output
  ;; per input byte (the worst case of $escape). Returns 0 if memory could
  ;; not be had.
  (func $load_input (result i32)
    (local $len i64) (local $i i32) (local $n i32) (local $need i32)
    (local.set $len (call $input_length))
    ;; 16 MiB is plenty for an envelope, and keeps the arithmetic in i32.
    (if (i64.gt_u (local.get $len) (i64.const 0x1000000)) (then (return (i32.const 0))))
    (local.set $n (i32.wrap_i64 (local.get $len)))
    ;; pages needed = ceil((INPUT + 7n + 1024) / 65536)
    (local.set $need
      (i32.shr_u
        (i32.add (i32.add (global.get $INPUT) (i32.mul (local.get $n) (i32.const 7)))
                 (i32.const 66559))   ;; 1024 of slack + 65535 to round up
        (i32.const 16)))
    (if (i32.gt_u (local.get $need) (memory.size))
      (then
        ;; memory.grow returns the old size in pages, or -1 if it cannot.
        (if (i32.eq (memory.grow (i32.sub (local.get $need) (memory.size))) (i32.const -1))
          (then (return (i32.const 0))))))
    ;; Input offsets count from the start of the input (0 .. len-1).
    (block $done
      (loop $words
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $n)))
        (i64.store (i32.add (global.get $INPUT) (local.get $i))
                   (call $input_load_u64 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $words)))
    ;; The tail as one overlapping word, as in $to_kernel.
    (if (i32.and (i32.ge_u (local.get $n) (i32.const 8)) (i32.lt_u (local.get $i) (local.get $n)))
      (then
        (i64.store (i32.add (global.get $INPUT) (i32.sub (local.get $n) (i32.const 8)))
                   (call $input_load_u64 (i64.extend_i32_u (i32.sub (local.get $n) (i32.const 8)))))
        (local.set $i (local.get $n))))
    (block $done
      (loop $bytes
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.add (global.get $INPUT) (local.get $i))
                    (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bytes)))
    (global.set $input_end (i32.add (global.get $INPUT) (local.get $n)))
    (i32.const 1))

  ;; =====================================================================
  ;; Finding request.name in the envelope
  ;;
  ;; The envelope is {"request": {"name": "ping", "arguments": {…}, …},
  ;; "context": {…}}. We need one value from it, so instead of a JSON parser
  ;; this is a scanner that can skip over any value. Positions are addresses
  ;; in our memory; -1 means "not found / malformed", and every function
  ;; passes -1 on, so a bad input ends in the unknown-name error, never in a
  ;; read past the input.
  ;; =====================================================================

  ;; $byte is the input byte at $p, or -1 past the end (or for $p = -1).
  (func $byte (param $p i32) (result i32)
    (if (result i32)
        (i32.or (i32.lt_s (local.get $p) (global.get $INPUT))
                (i32.ge_s (local.get $p) (global.get $input_end)))
      (then (i32.const -1))
      (else (i32.load8_u (local.get $p)))))

  ;; $skip_ws skips JSON whitespace (space, tab, newline, return).
  (func $skip_ws (param $p i32) (result i32)
    (local $c i32)
    (loop $more
      (local.set $c (call $byte (local.get $p)))
      (if (i32.or (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x09)))
                  (i32.or (i32.eq (local.get $c) (i32.const 0x0a)) (i32.eq (local.get $c) (i32.const 0x0d))))
        (then (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $more))))
    (local.get $p))

  ;; $skip_string: $p is at a string's opening quote; returns the position
  ;; after its closing quote. A backslash escapes the next byte (\" \\ \n …;
  ;; \uXXXX needs nothing more: its hex digits are plain bytes).
  (func $skip_string (param $p i32) (result i32)
    (local $c i32)
    (if (i32.ne (call $byte (local.get $p)) (i32.const 0x22)) (then (return (i32.const -1))))
    (loop $more
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (local.set $c (call $byte (local.get $p)))
      (if (i32.eq (local.get $c) (i32.const -1)) (then (return (i32.const -1))))        ;; unterminated
      (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (i32.add (local.get $p) (i32.const 1))))) ;; "
      (if (i32.eq (local.get $c) (i32.const 0x5c)) (then (local.set $p (i32.add (local.get $p) (i32.const 1))))) ;; \
      (br $more))
    (unreachable))

  ;; $skip_value: $p is at a value; returns the position after it.
  ;; Objects and arrays are skipped by counting brackets outside strings, so
  ;; deep nesting costs no stack.
  (func $skip_value (param $p i32) (result i32)
    (local $c i32) (local $depth i32) (local $start i32)
    (local.set $c (call $byte (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const -1)) (then (return (i32.const -1))))
    (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (call $skip_string (local.get $p)))))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0x7b)) (i32.eq (local.get $c) (i32.const 0x5b))) ;; { [
      (then
        (loop $more
          (local.set $c (call $byte (local.get $p)))
          (if (i32.eq (local.get $c) (i32.const -1)) (then (return (i32.const -1))))
          (if (i32.eq (local.get $c) (i32.const 0x22))
            (then
              (local.set $p (call $skip_string (local.get $p)))
              (br $more)))
          (if (i32.or (i32.eq (local.get $c) (i32.const 0x7b)) (i32.eq (local.get $c) (i32.const 0x5b)))
            (then (local.set $depth (i32.add (local.get $depth) (i32.const 1)))))
          (if (i32.or (i32.eq (local.get $c) (i32.const 0x7d)) (i32.eq (local.get $c) (i32.const 0x5d))) ;; } ]
            (then
              (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
              (if (i32.eqz (local.get $depth)) (then (return (i32.add (local.get $p) (i32.const 1)))))))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (br $more))))
    ;; A number, true, false or null: up to the next delimiter.
    (local.set $start (local.get $p))
    (block $end
      (loop $more
        (local.set $c (call $byte (local.get $p)))
        (br_if $end (i32.eq (local.get $c) (i32.const -1)))
        (br_if $end (i32.eq (local.get $c) (i32.const 0x2c)))   ;; ,
        (br_if $end (i32.eq (local.get $c) (i32.const 0x7d)))   ;; }
        (br_if $end (i32.eq (local.get $c) (i32.const 0x5d)))   ;; ]
        (br_if $end (i32.ne (call $skip_ws (local.get $p)) (local.get $p))) ;; whitespace
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $more)))
    (if (result i32) (i32.eq (local.get $p) (local.get $start))
      (then (i32.const -1))
      (else (local.get $p))))

  ;; $equal compares $n bytes at $a and at $b.
  (func $equal (param $a i32) (param $b i32) (param $n i32) (result i32)
    (block $differ
      (loop $more
        (if (i32.eqz (local.get $n)) (then (return (i32.const 1))))
        (br_if $differ (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $b))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $more)))
    (i32.const 0))

  ;; $member: $obj is at an object's "{"; returns the position of the value
  ;; of its member named by the $klen bytes at $key, or -1.
  (func $member (param $obj i32) (param $key i32) (param $klen i32) (result i32)
    (local $p i32) (local $k i32) (local $match i32)
    (if (i32.ne (call $byte (local.get $obj)) (i32.const 0x7b)) (then (return (i32.const -1))))
    (local.set $p (call $skip_ws (i32.add (local.get $obj) (i32.const 1))))
    (loop $members
      ;; "key"
      (local.set $k (i32.add (local.get $p) (i32.const 1)))          ;; first byte of the key
      (local.set $p (call $skip_string (local.get $p)))              ;; -1 also for "}"
      (if (i32.eq (local.get $p) (i32.const -1)) (then (return (i32.const -1))))
      (local.set $match
        (i32.and
          (i32.eq (i32.sub (i32.sub (local.get $p) (i32.const 1)) (local.get $k)) (local.get $klen))
          (call $equal (local.get $k) (local.get $key) (local.get $klen))))
      ;; :
      (local.set $p (call $skip_ws (local.get $p)))
      (if (i32.ne (call $byte (local.get $p)) (i32.const 0x3a)) (then (return (i32.const -1))))
      (local.set $p (call $skip_ws (i32.add (local.get $p) (i32.const 1))))
      (if (local.get $match) (then (return (local.get $p))))
      ;; value, then "," and the next member, or the end
      (local.set $p (call $skip_ws (call $skip_value (local.get $p))))
      (if (i32.eq (call $byte (local.get $p)) (i32.const 0x2c))
        (then
          (local.set $p (call $skip_ws (i32.add (local.get $p) (i32.const 1))))
          (br $members))))
    (i32.const -1))

  ;; $is_token: is the value at $p exactly the $n bytes at $lit?
  (func $is_token (param $p i32) (param $lit i32) (param $n i32) (result i32)
    (if (result i32)
        (i32.or (i32.lt_s (local.get $p) (i32.const 0))
                (i32.gt_s (i32.add (local.get $p) (local.get $n)) (global.get $input_end)))
      (then (i32.const 0))
      (else (call $equal (local.get $p) (local.get $lit) (local.get $n)))))

  ;; =====================================================================
  ;; Writing JSON
  ;; =====================================================================

  ;; $copy copies $n bytes from $src to $dst; returns $dst + $n.
  (func $copy (param $dst i32) (param $src i32) (param $n i32) (result i32)
    (block $done
      (loop $more
        (br_if $done (i32.eqz (local.get $n)))
        (i32.store8 (local.get $dst) (i32.load8_u (local.get $src)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 1)))
        (local.set $src (i32.add (local.get $src) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $more)))
    (local.get $dst))

  ;; $escape writes the $n bytes at $src to $dst as the inside of a JSON
  ;; string: " and \ get a backslash, control bytes become \u00XX, the rest
  ;; (UTF-8 included) is copied. Returns the end of what it wrote.
  (func $escape (param $dst i32) (param $src i32) (param $n i32) (result i32)
    (local $c i32)
    (block $done
      (loop $more
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $c (i32.load8_u (local.get $src)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x22)) (i32.eq (local.get $c) (i32.const 0x5c)))
          (then ;; \" or \\
            (i32.store8 (local.get $dst) (i32.const 0x5c))
            (i32.store8 offset=1 (local.get $dst) (local.get $c))
            (local.set $dst (i32.add (local.get $dst) (i32.const 2))))
          (else (if (i32.lt_u (local.get $c) (i32.const 0x20))
            (then ;; \u00XX
              (i32.store (local.get $dst) (i32.const 0x3030755c)) ;; the bytes \ u 0 0, little-endian
              (i32.store8 offset=4 (local.get $dst) (i32.load8_u (i32.add (global.get $HEX) (i32.shr_u (local.get $c) (i32.const 4)))))
              (i32.store8 offset=5 (local.get $dst) (i32.load8_u (i32.add (global.get $HEX) (i32.and (local.get $c) (i32.const 15)))))
              (local.set $dst (i32.add (local.get $dst) (i32.const 6))))
            (else
              (i32.store8 (local.get $dst) (local.get $c))
              (local.set $dst (i32.add (local.get $dst) (i32.const 1)))))))
        (local.set $src (i32.add (local.get $src) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $more)))
    (local.get $dst))

  ;; =====================================================================
  ;; Exports
  ;; =====================================================================

  ;; ABI.md §2: the ABI version this plugin was written for.
  (func (export "mcphost_abi_version") (result i32) (i32.const 1))

  ;; tools/list. List exports need no input (it holds only "context").
  (func (export "list_tools") (result i32)
    (call $output (global.get $TOOLS) (global.get $TOOLS_LEN)))

  ;; tools/call. Input: {"request": {"name": …, "arguments": {…}}, "context": {…}}
  (func (export "call_tool") (result i32)
    (local $name i32) (local $out i32) (local $end i32)
    (if (i32.eqz (call $load_input))
      (then (return (call $error (global.get $ERR_TOO_BIG) (global.get $ERR_TOO_BIG_LEN)))))

    ;; $name = the position of request.name's value (a JSON string), or -1.
    (local.set $name
      (call $member
        (call $member (call $skip_ws (global.get $INPUT)) (global.get $KEY_REQUEST) (global.get $KEY_REQUEST_LEN))
        (global.get $KEY_NAME) (global.get $KEY_NAME_LEN)))

    ;; ping -> pong
    (if (call $is_token (local.get $name) (global.get $PING) (global.get $PING_LEN))
      (then (return (call $output (global.get $PONG) (global.get $PONG_LEN)))))

    ;; envelope -> {"content":[{"type":"text","text":"<the input, escaped>"}]},
    ;; built in memory right after the input.
    (if (call $is_token (local.get $name) (global.get $ENVELOPE) (global.get $ENVELOPE_LEN))
      (then
        (local.set $out (global.get $input_end))
        (local.set $end (call $copy (local.get $out) (global.get $OPEN) (global.get $OPEN_LEN)))
        (local.set $end (call $escape (local.get $end) (global.get $INPUT)
                                      (i32.sub (global.get $input_end) (global.get $INPUT))))
        (local.set $end (call $copy (local.get $end) (global.get $CLOSE) (global.get $CLOSE_LEN)))
        (return (call $output (local.get $out) (i32.sub (local.get $end) (local.get $out))))))

    ;; No name at all: the input is not an envelope.
    (if (i32.eq (call $skip_string (local.get $name)) (i32.const -1))
      (then (return (call $error (global.get $ERR_NO_NAME) (global.get $ERR_NO_NAME_LEN)))))

    ;; Any other name: {"code":-32602,"message":"unknown tool \"<name>\""}.
    ;; (The host checks names before calling, so a client never gets here;
    ;; the check is the plugin's own, as every export's should be.)
    (local.set $out (global.get $input_end))
    (local.set $end (call $copy (local.get $out) (global.get $ERR_UNKNOWN) (global.get $ERR_UNKNOWN_LEN)))
    (local.set $end (call $escape (local.get $end) (local.get $name)
                                  (i32.sub (call $skip_string (local.get $name)) (local.get $name))))
    (local.set $end (call $copy (local.get $end) (global.get $ERR_END) (global.get $ERR_END_LEN)))
    (call $error (local.get $out) (i32.sub (local.get $end) (local.get $out))))
)
