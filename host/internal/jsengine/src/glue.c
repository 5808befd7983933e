/*
 * glue.c — mcphost's JavaScript engine: QuickJS (quickjs-ng, vendored
 * unchanged in quickjs/) plus this glue, which implements the plugin ABI
 * (abi/ABI.md) for a plugin written in JavaScript.
 *
 * A JavaScript plugin is this module with its bundled ES module in a custom
 * section named "mcphost.js" (ABI.md §17). The host removes the section
 * before compiling, so every JavaScript plugin compiles to the same code,
 * and hands the source to the engine through js_source_length and
 * js_source_read. The first export call of an instance makes a QuickJS
 * runtime, evaluates the built-in module "mcphost" (prelude.js) and then
 * the plugin's module; every export is then a call of the prelude's
 * dispatcher, with the job queue run until the handler's promise settles.
 *
 * Limits: the sandbox's are the ones that hold. A JavaScript allocation
 * that the memory cap refuses fails as QuickJS's "out of memory"; a
 * recursion deeper than QuickJS's stack limit (below the shadow stack the
 * module is linked with) is a RangeError; an endless loop runs into the
 * host's deadline like any plugin's.
 *
 * Build: ./build.sh (a WASI reactor).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wasi/api.h>

#include "quickjs/quickjs.h"
#include "prelude.h" /* prelude_js: prelude.js as a C string (build.sh) */
#include "web.h"     /* web_js, url_js: web.js, url.js, globals evaluated at first use (build.sh) */

/* ------------------------------------------------------------------------ */
/* The host: Extism kernel (extism:host/env) and mcphost (extism:host/user).*/

typedef uint64_t ExtismPointer;
#define EXTISM_IMPORT(name) __attribute__((import_module("extism:host/env"), import_name(name)))
#define MCPHOST_IMPORT(name) __attribute__((import_module("extism:host/user"), import_name(name)))
#define EXPORT(name) __attribute__((export_name(name)))

EXTISM_IMPORT("input_length") uint64_t extism_input_length(void);
EXTISM_IMPORT("alloc") ExtismPointer extism_alloc(uint64_t n);
EXTISM_IMPORT("free") void extism_free(ExtismPointer p);
EXTISM_IMPORT("length") uint64_t extism_length(ExtismPointer p);
EXTISM_IMPORT("store_u8") void extism_store_u8(uint64_t addr, uint8_t v);
EXTISM_IMPORT("store_u64") void extism_store_u64(uint64_t addr, uint64_t v);
EXTISM_IMPORT("load_u8") uint8_t extism_load_u8(uint64_t addr);
EXTISM_IMPORT("load_u64") uint64_t extism_load_u64(uint64_t addr);
EXTISM_IMPORT("error_set") void extism_error_set(ExtismPointer p);
EXTISM_IMPORT("config_get") ExtismPointer extism_config_get(ExtismPointer key);
EXTISM_IMPORT("log_info") void extism_log_info(ExtismPointer text);
EXTISM_IMPORT("log_debug") void extism_log_debug(ExtismPointer text);
EXTISM_IMPORT("log_warn") void extism_log_warn(ExtismPointer text);
EXTISM_IMPORT("log_error") void extism_log_error(ExtismPointer text);

MCPHOST_IMPORT("notify_logging_message") void mcphost_notify_logging_message(ExtismPointer json);
MCPHOST_IMPORT("notify_progress") void mcphost_notify_progress(ExtismPointer json);
MCPHOST_IMPORT("http_request") ExtismPointer mcphost_http_request(ExtismPointer json);
MCPHOST_IMPORT("input_read") void mcphost_input_read(void *dst, uint64_t offset, uint32_t n);
MCPHOST_IMPORT("output_write") void mcphost_output_write(const void *src, uint32_t n);
MCPHOST_IMPORT("js_source_length") uint64_t mcphost_js_source_length(void);
MCPHOST_IMPORT("js_source_read") void mcphost_js_source_read(void *dst, uint64_t offset, uint32_t n);

/* STACK_BYTES is the shadow stack the module is linked with (build.sh's
 * -z stack-size; --stack-first puts it below the data, so overflowing it
 * traps instead of writing over the heap). QuickJS is told to throw a
 * RangeError JS_STACK_MARGIN before its end, which leaves room for the C
 * frames between two of its checks and for building the error. */
#ifndef STACK_BYTES
#error "build with -DSTACK_BYTES=<the -z stack-size>"
#endif
#define JS_STACK_MARGIN (128 * 1024)

/* The module name the plugin's source is evaluated under: the file:line of
 * its errors name it. */
#define PLUGIN_FILE "plugin.js"

/* ------------------------------------------------------------------------ */
/* Kernel blocks.                                                           */

static ExtismPointer to_kernel(const char *s, size_t n) {
	ExtismPointer off = extism_alloc(n);
	if (!off)
		return 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		extism_store_u64(off + i, w);
	}
	if (i < n && n >= 8) { /* the tail as one word ending at n */
		uint64_t w;
		memcpy(&w, s + n - 8, 8);
		extism_store_u64(off + n - 8, w);
		i = n;
	}
	for (; i < n; i++)
		extism_store_u8(off + i, (uint8_t)s[i]);
	return off;
}

/* from_kernel copies block p into a new malloc'd NUL-terminated string. */
static char *from_kernel(ExtismPointer p, size_t *n) {
	uint64_t len = extism_length(p);
	char *s = malloc(len + 1);
	if (!s)
		return NULL;
	uint64_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = extism_load_u64(p + i);
		memcpy(s + i, &w, 8);
	}
	for (; i < len; i++)
		s[i] = (char)extism_load_u8(p + i);
	s[len] = 0;
	*n = len;
	return s;
}

/* set_error sets the call's error text; returns the export's failure code. */
static int32_t set_error(const char *s, size_t n) {
	ExtismPointer off = to_kernel(s, n);
	if (off)
		extism_error_set(off);
	return 1;
}

static int32_t set_error_str(const char *s) { return set_error(s, strlen(s)); }

/* ------------------------------------------------------------------------ */
/* The engine.                                                              */

static JSRuntime *rt;
static JSContext *ctx;
static JSValue dispatch; /* globalThis.__mcphost_dispatch */
static JSValue tick;     /* globalThis.__mcphost_tick: the prelude's timers */
static int timers_armed; /* the prelude set a timer since the last reset */
static char *broken;     /* why the plugin could not start: every call fails with it */

/* internal_error sets an ABI error {"code":-32603,"message":…} from the
 * text msg (escaped by JSON.stringify when the context works). */
static int32_t internal_error(const char *msg) {
	if (ctx) {
		JSValue s = JS_NewString(ctx, msg);
		JSValue obj = JS_NewObject(ctx);
		JS_SetPropertyStr(ctx, obj, "code", JS_NewInt32(ctx, -32603));
		JS_SetPropertyStr(ctx, obj, "message", s);
		JSValue json = JS_JSONStringify(ctx, obj, JS_UNDEFINED, JS_UNDEFINED);
		JS_FreeValue(ctx, obj);
		size_t n;
		const char *text = JS_IsException(json) ? NULL : JS_ToCStringLen(ctx, &n, json);
		JS_FreeValue(ctx, json);
		if (text) {
			int32_t rc = set_error(text, n);
			JS_FreeCString(ctx, text);
			return rc;
		}
		JS_FreeValue(ctx, JS_GetException(ctx));
	}
	return set_error_str("{\"code\":-32603,\"message\":\"the JavaScript engine is out of memory\"}");
}

/* exception_text returns the pending exception as "Name: message (at
 * file:line:col)" plus its stack, malloc'd; the exception is cleared. */
static char *exception_text(void) {
	JSValue exc = JS_GetException(ctx);
	char *out = NULL;
	const char *msg = JS_ToCString(ctx, exc);
	const char *stack = NULL;
	if (JS_IsError(exc)) {
		JSValue st = JS_GetPropertyStr(ctx, exc, "stack");
		if (JS_IsString(st))
			stack = JS_ToCString(ctx, st);
		JS_FreeValue(ctx, st);
	}
	const char *m = msg ? msg : "an exception that has no text (out of memory?)";
	size_t len = strlen(m) + (stack ? strlen(stack) + 2 : 0) + 1;
	out = malloc(len);
	if (out) {
		strcpy(out, m);
		if (stack && *stack) {
			strcat(out, "\n");
			strcat(out, stack);
		}
	}
	if (msg)
		JS_FreeCString(ctx, msg);
	if (stack)
		JS_FreeCString(ctx, stack);
	JS_FreeValue(ctx, JS_GetException(ctx));
	JS_FreeValue(ctx, exc);
	return out;
}

/* plugin_exception_text is exception_text for an exception the plugin's
 * own code threw: the prelude's errorText (global __mcphost_error_text)
 * gives "Name: message (at file:line:col)" with the place in the sources
 * the plugin was built from; exception_text is the fallback. */
static char *plugin_exception_text(JSValue global) {
	JSValue fn = JS_GetPropertyStr(ctx, global, "__mcphost_error_text");
	if (!JS_IsFunction(ctx, fn)) {
		JS_FreeValue(ctx, fn);
		return exception_text();
	}
	JSValue exc = JS_GetException(ctx);
	JSValue s = JS_Call(ctx, fn, JS_UNDEFINED, 1, &exc);
	JS_FreeValue(ctx, fn);
	char *out = NULL;
	if (!JS_IsException(s)) {
		const char *c = JS_ToCString(ctx, s);
		if (c) {
			out = strdup(c);
			JS_FreeCString(ctx, c);
		}
	}
	JS_FreeValue(ctx, s);
	if (!out) {
		JS_Throw(ctx, exc); /* the plugin's exception again, not errorText's */
		return exception_text();
	}
	JS_FreeValue(ctx, exc);
	return out;
}

/* fail_with_exception fails the call with the pending exception. */
static int32_t fail_with_exception(const char *what) {
	char *text = exception_text();
	const char *t = text ? text : "(no memory for its text)";
	size_t n = strlen(what) + strlen(t) + 3;
	char *msg = malloc(n);
	int32_t rc;
	if (msg) {
		strcpy(msg, what);
		strcat(msg, ": ");
		strcat(msg, t);
		rc = internal_error(msg);
		free(msg);
	} else {
		rc = internal_error(what);
	}
	free(text);
	return rc;
}

/* run_jobs runs the job queue (promise reactions) until it is empty; an
 * exception in a job is left pending and reported. */
static int run_jobs(void) {
	JSContext *c;
	for (;;) {
		int r = JS_ExecutePendingJob(rt, &c);
		if (r <= 0)
			return r;
	}
}

/* call_global calls globalThis[name]() and returns its result. */
static JSValue call_global(const char *name, int argc, JSValueConst *argv) {
	JSValue global = JS_GetGlobalObject(ctx);
	JSValue fn = JS_GetPropertyStr(ctx, global, name);
	JS_FreeValue(ctx, global);
	JSValue r = JS_Call(ctx, fn, JS_UNDEFINED, argc, argv);
	JS_FreeValue(ctx, fn);
	return r;
}

/* sleep_ms sleeps ms milliseconds through WASI (poll_oneoff on a clock):
 * the host waits on its clock, during a call only and never past the
 * call's deadline or cancellation (host/internal/plugin/sleep.go). */
static void sleep_ms(double ms) {
	if (!(ms > 0))
		return;
	if (ms > 1e9)
		ms = 1e9;
	struct timespec ts;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	nanosleep(&ts, NULL);
}

/* settle runs the job queue and returns v, or what the promise v resolved
 * to, or JS_EXCEPTION with the rejection pending. v is consumed. While
 * the promise is pending with no job left, the prelude's timers run
 * (__mcphost_tick fires those due until one leaves a job to run, or says
 * how long to wait for the next; the glue sleeps that long) and the
 * queue again. A promise
 * pending with neither jobs nor timers left is an error, unless asking
 * and the prelude's __mcphost_unsettled returns the questions the call's
 * handler asked the client (ABI.md §8): then those are the result, at
 * once (timers are not waited for: the handler runs again from its
 * start with the answers). */
static JSValue settle(JSValue v, int asking) {
	if (JS_IsException(v))
		return v;
	JSValue r;
	for (;;) {
		if (run_jobs() < 0) {
			JS_FreeValue(ctx, v);
			return JS_EXCEPTION;
		}
		if (!JS_IsPromise(v) || JS_PromiseState(ctx, v) != JS_PROMISE_PENDING)
			break;
		if (asking) {
			r = call_global("__mcphost_unsettled", 0, NULL);
			if (JS_IsException(r) || JS_IsString(r))
				goto done;
			JS_FreeValue(ctx, r);
		}
		if (!timers_armed || !JS_IsFunction(ctx, tick))
			break;
		double wait;
		JSValue w = JS_Call(ctx, tick, JS_UNDEFINED, 0, NULL);
		if (JS_IsException(w) || JS_ToFloat64(ctx, &wait, w) < 0) {
			JS_FreeValue(ctx, w);
			JS_FreeValue(ctx, v);
			return JS_EXCEPTION;
		}
		JS_FreeValue(ctx, w);
		if (wait == -2) { /* a timer's callback threw during a call */
			r = call_global("__mcphost_timer_failed", 0, NULL);
			goto done;
		}
		if (wait < 0)
			break;
		sleep_ms(wait);
	}
	if (!JS_IsPromise(v))
		return v;
	switch (JS_PromiseState(ctx, v)) {
	case JS_PROMISE_FULFILLED:
		r = JS_PromiseResult(ctx, v);
		break;
	case JS_PROMISE_REJECTED:
		r = JS_Throw(ctx, JS_PromiseResult(ctx, v));
		break;
	default:
		r = JS_ThrowInternalError(ctx, "the promise never settled: it waits for something no job or timer will do");
		break;
	}
done:
	JS_FreeValue(ctx, v);
	return r;
}

/* reset_timers drops the timers left when a call (or the module's
 * evaluation) ends: an instance serves many calls, and a timer never
 * fires outside the call that set it. */
static void reset_timers(void) {
	if (!timers_armed)
		return;
	timers_armed = 0;
	JSValue arg = JS_NewInt32(ctx, -1);
	JSValue r = JS_Call(ctx, tick, JS_UNDEFINED, 1, &arg);
	if (JS_IsException(r))
		JS_FreeValue(ctx, JS_GetException(ctx));
	JS_FreeValue(ctx, r);
}

/* Native functions for the prelude. */

/* native.log(level, text) */
static JSValue js_log(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)this_val;
	if (argc < 2)
		return JS_UNDEFINED;
	const char *level = JS_ToCString(c, argv[0]);
	size_t n;
	const char *text = JS_ToCStringLen(c, &n, argv[1]);
	if (level && text) {
		ExtismPointer p = to_kernel(text, n);
		if (p) { /* log_* free the block */
			if (!strcmp(level, "debug"))
				extism_log_debug(p);
			else if (!strcmp(level, "warn"))
				extism_log_warn(p);
			else if (!strcmp(level, "error"))
				extism_log_error(p);
			else
				extism_log_info(p);
		}
	}
	JS_FreeCString(c, level);
	JS_FreeCString(c, text);
	return JS_UNDEFINED;
}

/* native.notify(function, json) */
static JSValue js_notify(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)this_val;
	if (argc < 2)
		return JS_UNDEFINED;
	const char *fn = JS_ToCString(c, argv[0]);
	size_t n;
	const char *json = JS_ToCStringLen(c, &n, argv[1]);
	if (fn && json) {
		ExtismPointer p = to_kernel(json, n);
		if (p) {
			if (!strcmp(fn, "notify_logging_message"))
				mcphost_notify_logging_message(p);
			else if (!strcmp(fn, "notify_progress"))
				mcphost_notify_progress(p);
			extism_free(p);
		}
	}
	JS_FreeCString(c, fn);
	JS_FreeCString(c, json);
	return JS_UNDEFINED;
}

/* native.config(key): the value, or undefined */
static JSValue js_config(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)this_val;
	if (argc < 1)
		return JS_UNDEFINED;
	size_t n;
	const char *key = JS_ToCStringLen(c, &n, argv[0]);
	if (!key)
		return JS_EXCEPTION;
	ExtismPointer k = to_kernel(key, n);
	JS_FreeCString(c, key);
	if (!k)
		return JS_ThrowInternalError(c, "config: no kernel memory for the key");
	ExtismPointer v = extism_config_get(k);
	extism_free(k);
	if (!v)
		return JS_UNDEFINED;
	size_t vn;
	char *s = from_kernel(v, &vn);
	extism_free(v);
	if (!s)
		return JS_ThrowOutOfMemory(c);
	JSValue r = JS_NewStringLen(c, s, vn);
	free(s);
	return r;
}

/* native.http(json): the host's http_request (ABI.md §7) with the request's
 * JSON; returns the answer's JSON text ({"status",…} or {"error": why}). */
static JSValue js_http(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)this_val;
	if (argc < 1)
		return JS_ThrowTypeError(c, "http: no request");
	size_t n;
	const char *json = JS_ToCStringLen(c, &n, argv[0]);
	if (!json)
		return JS_EXCEPTION;
	ExtismPointer p = to_kernel(json, n);
	JS_FreeCString(c, json);
	if (!p)
		return JS_ThrowInternalError(c, "fetch: no kernel memory for the request");
	ExtismPointer a = mcphost_http_request(p);
	extism_free(p);
	if (!a)
		return JS_ThrowInternalError(c, "fetch: the host's http_request gave no answer");
	size_t an;
	char *s = from_kernel(a, &an);
	extism_free(a);
	if (!s)
		return JS_ThrowOutOfMemory(c);
	JSValue r = JS_NewStringLen(c, s, an);
	free(s);
	return r;
}

/* native.armed(): the prelude set its first timer since the last reset. */
static JSValue js_armed(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)c, (void)this_val, (void)argc, (void)argv;
	timers_armed = 1;
	return JS_UNDEFINED;
}

/* native.pending(): whether a job (a promise reaction) waits to run. */
static JSValue js_pending(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)this_val, (void)argc, (void)argv;
	return JS_NewBool(c, JS_IsJobPending(rt));
}

/* native.random(u8): fills the Uint8Array u8 from WASI random_get (the
 * host's crypto/rand). */
static JSValue js_random(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)this_val;
	size_t n;
	uint8_t *p = argc > 0 ? JS_GetUint8Array(c, &n, argv[0]) : NULL;
	if (!p && (argc == 0 || JS_HasException(c)))
		return argc ? JS_EXCEPTION : JS_ThrowTypeError(c, "random: no array");
	if (n > 0 && __wasi_random_get(p, n) != 0)
		return JS_ThrowInternalError(c, "crypto: the host gave no random bytes");
	return JS_UNDEFINED;
}

/* native.encode(s): the UTF-8 bytes of the well-formed string s, a
 * Uint8Array. */
static JSValue js_encode(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)this_val;
	size_t n;
	const char *s = JS_ToCStringLen(c, &n, argc > 0 ? argv[0] : JS_UNDEFINED);
	if (!s)
		return JS_EXCEPTION;
	JSValue r = JS_NewUint8ArrayCopy(c, (const uint8_t *)s, n);
	JS_FreeCString(c, s);
	return r;
}

/* native.decode(u8, fatal, stream): the text of the UTF-8 bytes of the
 * Uint8Array u8, as the Encoding Standard's UTF-8 decoder: an invalid
 * sequence (its maximal subpart) is one U+FFFD, or a TypeError when
 * fatal. With stream, an incomplete sequence at the end is not decoded,
 * and the result is [text, bytes decoded]. */
static JSValue js_decode(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)this_val;
	size_t n;
	const uint8_t *b = argc > 0 ? JS_GetUint8Array(c, &n, argv[0]) : NULL;
	if (!b && (argc == 0 || JS_HasException(c)))
		return argc ? JS_EXCEPTION : JS_ThrowTypeError(c, "decode: no array");
	int fatal = argc > 1 && JS_ToBool(c, argv[1]);
	int stream = argc > 2 && JS_ToBool(c, argv[2]);
	uint16_t *out = js_malloc(c, (n + 1) * sizeof(uint16_t));
	if (!out)
		return JS_EXCEPTION;
	size_t o = 0, i = 0, start = 0;
	uint32_t cp = 0;
	int needed = 0, seen = 0;
	uint8_t lower = 0x80, upper = 0xBF;
	while (i < n) {
		uint8_t x = b[i];
		if (needed == 0) {
			start = i++;
			if (x <= 0x7F) {
				out[o++] = x;
			} else if (x >= 0xC2 && x <= 0xDF) {
				needed = 1, cp = x & 0x1F;
			} else if (x >= 0xE0 && x <= 0xEF) {
				if (x == 0xE0)
					lower = 0xA0;
				if (x == 0xED)
					upper = 0x9F;
				needed = 2, cp = x & 0xF;
			} else if (x >= 0xF0 && x <= 0xF4) {
				if (x == 0xF0)
					lower = 0x90;
				if (x == 0xF4)
					upper = 0x8F;
				needed = 3, cp = x & 0x7;
			} else {
				goto invalid;
			}
			continue;
		}
		if (x < lower || x > upper) { /* x starts over, after one U+FFFD */
			needed = seen = 0, lower = 0x80, upper = 0xBF;
			goto invalid;
		}
		i++;
		lower = 0x80, upper = 0xBF;
		cp = (cp << 6) | (x & 0x3F);
		if (++seen < needed)
			continue;
		if (cp > 0xFFFF) {
			out[o++] = (uint16_t)(0xD800 + ((cp - 0x10000) >> 10));
			out[o++] = (uint16_t)(0xDC00 + ((cp - 0x10000) & 0x3FF));
		} else {
			out[o++] = (uint16_t)cp;
		}
		needed = seen = 0;
		continue;
	invalid:
		if (fatal) {
			js_free(c, out);
			return JS_ThrowTypeError(c, "The encoded data was not valid for encoding utf-8 (at byte %zu)", start);
		}
		out[o++] = 0xFFFD;
	}
	size_t used = n;
	if (needed) {
		if (stream) {
			used = start;
		} else if (fatal) {
			js_free(c, out);
			return JS_ThrowTypeError(c, "The encoded data was not valid for encoding utf-8 (it ends inside a character)");
		} else {
			out[o++] = 0xFFFD;
		}
	}
	JSValue s = JS_NewStringUTF16(c, out, o);
	js_free(c, out);
	if (!stream || JS_IsException(s))
		return s;
	JSValue pair = JS_NewArray(c);
	JS_SetPropertyUint32(c, pair, 0, s);
	JS_SetPropertyUint32(c, pair, 1, JS_NewInt64(c, (int64_t)used));
	return pair;
}

/* native.lazy(file): evaluates web.js or url.js, the globals the
 * prelude defines at their first use (timers, TextEncoder, … ; URL,
 * URLSearchParams), and returns its value. */
static JSValue js_lazy(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
	(void)this_val;
	const char *file = argc > 0 ? JS_ToCString(c, argv[0]) : NULL;
	if (!file)
		return JS_EXCEPTION;
	JSValue r;
	if (!strcmp(file, "web"))
		r = JS_Eval(c, web_js, strlen(web_js), "mcphost:web.js", JS_EVAL_TYPE_GLOBAL);
	else if (!strcmp(file, "url"))
		r = JS_Eval(c, url_js, strlen(url_js), "mcphost:url.js", JS_EVAL_TYPE_GLOBAL);
	else
		r = JS_ThrowInternalError(c, "lazy: no file %s", file);
	JS_FreeCString(c, file);
	return r;
}

/* The module loader: "mcphost" is the prelude; nothing else can be had. */
static JSModuleDef *load_module(JSContext *c, const char *name, void *opaque) {
	(void)opaque;
	if (strcmp(name, "mcphost") != 0) {
		JS_ThrowReferenceError(c, "cannot import \"%s\": a plugin is one bundled module, which may import only \"mcphost\" (bundle it with esbuild --bundle --format=esm)", name);
		return NULL;
	}
	JSValue fn = JS_Eval(c, prelude_js, strlen(prelude_js), "mcphost", JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
	if (JS_IsException(fn))
		return NULL;
	JSModuleDef *m = JS_VALUE_GET_PTR(fn);
	JS_FreeValue(c, fn);
	return m;
}

/* start makes the runtime and evaluates the plugin; 0 when it is ready,
 * else non-zero with the call failed (error set). */
static int32_t start(void) {
	if (broken)
		return internal_error(broken);
	if (ctx)
		return 0;
	rt = JS_NewRuntime();
	if (!rt)
		return internal_error("the JavaScript engine could not start: out of memory");
	JS_SetMaxStackSize(rt, STACK_BYTES - JS_STACK_MARGIN);
	JS_SetModuleLoaderFunc(rt, NULL, load_module, NULL);
	ctx = JS_NewContext(rt);
	if (!ctx)
		return internal_error("the JavaScript engine could not start: out of memory");

	JSValue global = JS_GetGlobalObject(ctx);
	JSValue native = JS_NewObject(ctx);
	JS_SetPropertyStr(ctx, native, "log", JS_NewCFunction(ctx, js_log, "log", 2));
	JS_SetPropertyStr(ctx, native, "notify", JS_NewCFunction(ctx, js_notify, "notify", 2));
	JS_SetPropertyStr(ctx, native, "config", JS_NewCFunction(ctx, js_config, "config", 1));
	JS_SetPropertyStr(ctx, native, "http", JS_NewCFunction(ctx, js_http, "http", 1));
	JS_SetPropertyStr(ctx, native, "armed", JS_NewCFunction(ctx, js_armed, "armed", 0));
	JS_SetPropertyStr(ctx, native, "pending", JS_NewCFunction(ctx, js_pending, "pending", 0));
	JS_SetPropertyStr(ctx, native, "random", JS_NewCFunction(ctx, js_random, "random", 1));
	JS_SetPropertyStr(ctx, native, "encode", JS_NewCFunction(ctx, js_encode, "encode", 1));
	JS_SetPropertyStr(ctx, native, "decode", JS_NewCFunction(ctx, js_decode, "decode", 3));
	JS_SetPropertyStr(ctx, native, "lazy", JS_NewCFunction(ctx, js_lazy, "lazy", 1));
	JS_SetPropertyStr(ctx, global, "__mcphost_native", native);

	/* The plugin's source, from the host (its mcphost.js section). */
	uint64_t len = mcphost_js_source_length();
	char *src = malloc(len + 1);
	if (!src) {
		JS_FreeValue(ctx, global);
		return internal_error("the JavaScript engine could not start: no memory for the plugin's source");
	}
	mcphost_js_source_read(src, 0, (uint32_t)len);
	src[len] = 0;

	/* The prelude first, so that a plugin that does not import "mcphost"
	 * still gets console and the dispatcher. */
	JSValue pre = JS_Eval(ctx, "import \"mcphost\";", 17, "mcphost:start.js", JS_EVAL_TYPE_MODULE);
	pre = settle(pre, 0);
	if (JS_IsException(pre)) {
		free(src);
		JS_FreeValue(ctx, global);
		char *t = exception_text();
		broken = t ? t : "the prelude failed";
		return internal_error(broken);
	}
	JS_FreeValue(ctx, pre);
	tick = JS_GetPropertyStr(ctx, global, "__mcphost_tick");

	JSValue r = settle(JS_Eval(ctx, src, len, PLUGIN_FILE, JS_EVAL_TYPE_MODULE), 0);
	free(src);
	if (JS_IsException(r)) {
		char *t = plugin_exception_text(global);
		JS_FreeValue(ctx, global);
		const char *prefix = "the JavaScript plugin failed to start: ";
		char *m = t ? malloc(strlen(prefix) + strlen(t) + 1) : NULL;
		if (m) {
			strcpy(m, prefix);
			strcat(m, t);
		}
		free(t);
		broken = m ? m : "the JavaScript plugin failed to start";
		return internal_error(broken);
	}
	JS_FreeValue(ctx, r);
	reset_timers();
	dispatch = JS_GetPropertyStr(ctx, global, "__mcphost_dispatch");
	JS_FreeValue(ctx, global);
	return 0;
}

/* serve runs export name: reads the input, calls the dispatcher, writes
 * its output or error. */
static int32_t serve(const char *name) {
	JS_UpdateStackTop(rt);
	uint64_t n = extism_input_length();
	char *in = malloc(n + 1);
	if (!in)
		return internal_error("no memory for the call's input");
	mcphost_input_read(in, 0, (uint32_t)n);
	in[n] = 0;
	JSValue args[2] = {JS_NewString(ctx, name), JS_NewStringLen(ctx, in, n)};
	free(in);
	JSValue r = settle(JS_Call(ctx, dispatch, JS_UNDEFINED, 2, args), 1);
	JS_FreeValue(ctx, args[0]);
	JS_FreeValue(ctx, args[1]);
	reset_timers();
	if (JS_IsException(r))
		return fail_with_exception(name);
	size_t len;
	const char *s = JS_ToCStringLen(ctx, &len, r);
	JS_FreeValue(ctx, r);
	if (!s)
		return fail_with_exception(name);
	int32_t rc;
	if (len > 0 && s[0] == 'O') {
		mcphost_output_write(s + 1, (uint32_t)(len - 1));
		rc = 0;
	} else if (len > 0 && s[0] == 'E') {
		rc = set_error(s + 1, len - 1);
	} else {
		rc = internal_error("the dispatcher returned no result");
	}
	JS_FreeCString(ctx, s);
	/* No JS_RunGC here: reference counting frees a call's acyclic garbage
	 * as it goes, and QuickJS collects cycles when its allocation
	 * threshold says so. A full collection after every call took ~40% of
	 * a trivial call (BENCHMARKS.md, "JavaScript plugins"). */
	return rc;
}

EXPORT("mcphost_abi_version") int32_t mcphost_abi_version(void) { return 1; }

/* Every export of the ABI (§3): each is the prelude's dispatcher. A list
 * export of a kind the plugin registered nothing of returns an empty list,
 * which the host treats as the plugin offering nothing of that kind. */
#define ABI_EXPORT(name)                         \
	EXPORT(#name) int32_t name(void) {        \
		int32_t rc = start();             \
		return rc ? rc : serve(#name);    \
	}

ABI_EXPORT(list_tools)
ABI_EXPORT(call_tool)
ABI_EXPORT(list_resources)
ABI_EXPORT(list_resource_templates)
ABI_EXPORT(read_resource)
ABI_EXPORT(list_prompts)
ABI_EXPORT(get_prompt)
ABI_EXPORT(complete)
