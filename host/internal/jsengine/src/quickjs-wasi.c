/*
 * quickjs-wasi.c — compiles the vendored quickjs/quickjs.c (unchanged) for
 * mcphost's sandbox, with its stack limit working.
 *
 * quickjs-ng turns its stack-overflow check off when __wasi__ is defined
 * (update_stack_limit: "no limit"), so a deep recursion would run off the
 * end of the shadow stack instead of throwing a RangeError. Its check only
 * compares __builtin_frame_address(0), which on wasm32 is the shadow stack
 * pointer, with a limit below the stack's top: it works under WASI as it
 * does natively. So the system headers are read as WASI's first (their
 * include guards keep them), __wasi__ is then undefined for QuickJS's own
 * code only, and __STDC_NO_ATOMICS__ keeps the Atomics built-in off, as
 * __wasi__ would (there are no threads in the sandbox). quickjs.c checks
 * __wasi__ in three places besides: CONFIG_ATOMICS (kept off as said), the
 * runtime's default stack size (which glue.c sets anyway), and cutils.h's
 * threads (read here with __wasi__ still defined).
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <alloca.h>

#include "quickjs/cutils.h"

#undef __wasi__
#define __STDC_NO_ATOMICS__ 1
/* EMSCRIPTEN makes the interpreter loop a switch (DIRECT_DISPATCH 0)
 * instead of computed gotos, which clang lowers for wasm into far more
 * branches: JS_CallInternal then exceeds the host's branch-cost limit
 * (ABI.md §5). quickjs.c reads EMSCRIPTEN for that and for CONFIG_ATOMICS
 * only (off already). */
#define EMSCRIPTEN 1
#include "quickjs/quickjs.c"
