/*
 * plugin.c — mcphost's example plugin in C: Fibonacci numbers, exactly.
 *
 * It contributes
 *   - a resource template  c://fib/{n}   F(n) as decimal text, 0 <= n <= 10000
 *                                        (F(10000) has 2090 digits: the sum is
 *                                        done in base 10^9, not in a uint64_t);
 *   - a prompt             fib_explain   {n}: embeds c://fib/{n} and asks the
 *                                        model to explain it;
 *   - completion           of the argument n, for both of them.
 *
 * There is no PDK: the Extism kernel is declared in extism.h, the JSON of the
 * envelope is read by the small validating parser below, and results are
 * written by hand. The input is untrusted: anything malformed is refused with
 * the ABI's {"code":-32602,…} error, never a trap.
 *
 * Build: ./build.sh (a WASI reactor: the host calls _initialize once, then
 * the exports; see README.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extism.h"

#define MAX_N 10000                  /* largest n served */
#define MAX_INPUT (16u << 20)        /* larger envelopes are refused */
#define MAX_DEPTH 64                 /* JSON nesting accepted */
#define INVALID_PARAMS (-32602)
#define RESOURCE_NOT_FOUND (-32002)

/* ------------------------------------------------------------------------ */
/* Memory. An instance serves many calls, one at a time, so nothing a call   */
/* allocates may outlive it: every allocation goes through call_alloc, and   */
/* the next call starts by releasing them all (whatever path the previous    */
/* one returned by).                                                        */

typedef union chunk {
	union chunk *next;
	max_align_t align;
} chunk;

static chunk *chunks; /* this call's allocations, newest first */

static void *call_alloc(size_t n) {
	if (n > SIZE_MAX - sizeof(chunk))
		return NULL;
	chunk *c = malloc(sizeof(chunk) + n);
	if (!c)
		return NULL;
	c->next = chunks;
	chunks = c;
	return c + 1;
}

static void release_all(void) {
	while (chunks) {
		chunk *c = chunks;
		chunks = c->next;
		free(c);
	}
}

/* ------------------------------------------------------------------------ */
/* A growing byte buffer for output and messages.                           */

typedef struct {
	char *p;
	size_t len, cap;
	int oom; /* an allocation failed: the content is incomplete */
} buf;

static void put(buf *b, const char *s, size_t n) {
	if (b->oom || n == 0)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2) {
				b->oom = 1;
				return;
			}
			cap *= 2;
		}
		char *p = call_alloc(cap); /* the old block is released with the call */
		if (!p) {
			b->oom = 1;
			return;
		}
		if (b->len)
			memcpy(p, b->p, b->len);
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

/* fmt_uint writes v in decimal, left-padded with zeros to width digits, at
 * the end of d[20]; it returns where the digits start. */
static char *fmt_uint(char d[20], uint64_t v, int width) {
	int i = 20;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (i > 20 - width)
		d[--i] = '0';
	return d + i;
}

static void put_uint(buf *b, uint64_t v, int width) {
	char d[20];
	char *p = fmt_uint(d, v, width);
	put(b, p, (size_t)(d + 20 - p));
}

/* put_json_string writes s[0:n] as a JSON string, quotes included. */
static void put_json_string(buf *b, const char *s, size_t n) {
	static const char hex[] = "0123456789abcdef";
	put(b, "\"", 1);
	size_t run = 0; /* bytes s[i-run:i] need no escaping */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\') {
			run++;
			continue;
		}
		put(b, s + i - run, run);
		run = 0;
		char esc[6] = {'\\', (char)c, 0, 0, 0, 0};
		if (c == '\n')
			esc[1] = 'n', put(b, esc, 2);
		else if (c == '\t')
			esc[1] = 't', put(b, esc, 2);
		else if (c < 0x20) {
			esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = hex[c >> 4], esc[5] = hex[c & 15];
			put(b, esc, 6);
		} else
			put(b, esc, 2);
	}
	put(b, s + n - run, run);
	put(b, "\"", 1);
}

/* ------------------------------------------------------------------------ */
/* Talking to the kernel.                                                   */

/* to_kernel copies s[0:n] into a new kernel block; 0 if none could be had.
 * Only error texts go this way (error_set takes a block). */
static ExtismPointer to_kernel(const char *s, size_t n) {
	ExtismPointer off = extism_alloc(n);
	if (!off)
		return 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8); /* wasm32 is little-endian, like the kernel */
		extism_store_u64(off + i, w);
	}
	/* The last n % 8 bytes as one word that ends at n, overlapping the one
	 * before: a byte-wise kernel call costs about a microsecond. */
	if (i < n && n >= 8) {
		uint64_t w;
		memcpy(&w, s + n - 8, 8);
		extism_store_u64(off + n - 8, w);
		i = n;
	}
	for (; i < n; i++)
		extism_store_u8(off + i, (uint8_t)s[i]);
	return off;
}

/* set_error sets the call's error to the text s[0:n]; returns 1, the
 * export's failure code (the host reads the error only then). */
static int32_t set_error(const char *s, size_t n) {
	ExtismPointer off = to_kernel(s, n);
	if (off)
		extism_error_set(off);
	return 1;
}

/* out_of_memory: our memory is exhausted (the host's memory_mb), so the
 * error is a constant, copied straight into kernel memory. */
static int32_t out_of_memory(void) {
	static const char e[] = "{\"code\":-32603,\"message\":\"out of memory\"}";
	return set_error(e, sizeof e - 1);
}

/* ok sets b as the call's output and returns the export's success code. */
static int32_t ok(buf *b) {
	if (b->oom)
		return out_of_memory();
	mcphost_output_write(b->p, (uint32_t)b->len); /* one host call, no kernel block */
	return 0;
}

/* fail sets the ABI error {"code":code,"message":msg} (msg is plain text,
 * escaped here) and returns the export's failure code. */
static int32_t fail(int code, const buf *msg) {
	buf e = {0};
	puts_(&e, "{\"code\":-"); /* the codes are all negative */
	put_uint(&e, (uint64_t)-code, 0);
	puts_(&e, ",\"message\":");
	put_json_string(&e, msg->p, msg->len);
	puts_(&e, "}");
	if (msg->oom || e.oom)
		return out_of_memory();
	return set_error(e.p, e.len);
}

/* failf is fail with a message made of text, then, if detail is not NULL,
 * detail[0:dn] quoted as a JSON string (so that echoing untrusted input
 * cannot break the message). */
static int32_t failf(int code, const char *text, const char *detail, size_t dn) {
	buf m = {0};
	puts_(&m, text);
	if (detail)
		put_json_string(&m, detail, dn);
	return fail(code, &m);
}

/* read_input copies the whole input into our memory (NUL-terminated), in
 * one host call (input_read). */
static char *read_input(size_t *n) {
	uint64_t len = extism_input_length();
	if (len > MAX_INPUT)
		return NULL;
	char *p = call_alloc((size_t)len + 1);
	if (!p)
		return NULL;
	mcphost_input_read(p, 0, (uint32_t)len);
	p[len] = 0;
	*n = (size_t)len;
	return p;
}

/* ------------------------------------------------------------------------ */
/* JSON in: a validating scanner over the input text (RFC 8259). Values are  */
/* never copied; a span points at one value's text inside the input.        */

typedef struct {
	const char *s;
	size_t n;
} span;

#define BAD ((size_t)-1)

static size_t skip_ws(const char *s, size_t n, size_t i) {
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

static int hexval(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* scan_string checks the string starting at s[i] == '"' and returns the
 * index after its closing quote, or BAD. */
static size_t scan_string(const char *s, size_t n, size_t i) {
	for (i++; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"')
			return i + 1;
		if (c < 0x20)
			return BAD;
		if (c != '\\')
			continue;
		if (++i >= n)
			return BAD;
		switch (s[i]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			break;
		case 'u':
			if (n - i <= 4)
				return BAD;
			for (int k = 1; k <= 4; k++)
				if (hexval(s[i + k]) < 0)
					return BAD;
			i += 4;
			break;
		default:
			return BAD;
		}
	}
	return BAD;
}

static size_t scan_digits(const char *s, size_t n, size_t i) {
	size_t start = i;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i > start ? i : BAD;
}

static size_t scan_number(const char *s, size_t n, size_t i) {
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if ((i = scan_digits(s, n, i)) == BAD)
		return BAD;
	if (i < n && s[i] == '.' && (i = scan_digits(s, n, i + 1)) == BAD)
		return BAD;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if ((i = scan_digits(s, n, i)) == BAD)
			return BAD;
	}
	return i;
}

static size_t scan_literal(const char *s, size_t n, size_t i, const char *lit) {
	size_t k = strlen(lit);
	return n - i >= k && memcmp(s + i, lit, k) == 0 ? i + k : BAD;
}

/* scan_value checks the value starting at s[i] and returns the index after
 * it, or BAD. Nesting deeper than MAX_DEPTH is refused, so the recursion is
 * bounded whatever the input. */
static size_t scan_value(const char *s, size_t n, size_t i, int depth) {
	if (i >= n)
		return BAD;
	switch (s[i]) {
	case '"':
		return scan_string(s, n, i);
	case 't':
		return scan_literal(s, n, i, "true");
	case 'f':
		return scan_literal(s, n, i, "false");
	case 'n':
		return scan_literal(s, n, i, "null");
	case '{':
	case '[':
		break;
	default:
		return scan_number(s, n, i);
	}
	if (depth >= MAX_DEPTH)
		return BAD;
	int object = s[i] == '{';
	char close = object ? '}' : ']';
	i = skip_ws(s, n, i + 1);
	if (i < n && s[i] == close)
		return i + 1;
	for (;;) {
		if (object) {
			if (i >= n || s[i] != '"' || (i = scan_string(s, n, i)) == BAD)
				return BAD;
			i = skip_ws(s, n, i);
			if (i >= n || s[i] != ':')
				return BAD;
			i = skip_ws(s, n, i + 1);
		}
		if ((i = scan_value(s, n, i, depth + 1)) == BAD)
			return BAD;
		i = skip_ws(s, n, i);
		if (i >= n)
			return BAD;
		if (s[i] == close)
			return i + 1;
		if (s[i] != ',')
			return BAD;
		i = skip_ws(s, n, i + 1);
	}
}

/* put_utf8 appends code point cp in UTF-8. */
static void put_utf8(buf *b, uint32_t cp) {
	char u[4];
	size_t k;
	if (cp < 0x80)
		u[0] = (char)cp, k = 1;
	else if (cp < 0x800)
		u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), k = 2;
	else if (cp < 0x10000)
		u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3F)), u[2] = (char)(0x80 | (cp & 0x3F)), k = 3;
	else
		u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3F)), u[2] = (char)(0x80 | (cp >> 6 & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), k = 4;
	put(b, u, k);
}

static uint32_t hex4(const char *s) {
	return (uint32_t)(hexval(s[0]) << 12 | hexval(s[1]) << 8 | hexval(s[2]) << 4 | hexval(s[3]));
}

/* decode_string decodes the JSON string v (already validated) into out.
 * Returns 0 if v is not a string. A lone surrogate becomes U+FFFD. */
static int decode_string(span v, buf *out) {
	if (v.n < 2 || v.s[0] != '"')
		return 0;
	const char *s = v.s + 1, *end = v.s + v.n - 1;
	while (s < end) {
		const char *run = s;
		while (s < end && *s != '\\')
			s++;
		put(out, run, (size_t)(s - run));
		if (s >= end)
			break;
		char c = s[1];
		s += 2;
		switch (c) {
		case 'b': put(out, "\b", 1); break;
		case 'f': put(out, "\f", 1); break;
		case 'n': put(out, "\n", 1); break;
		case 'r': put(out, "\r", 1); break;
		case 't': put(out, "\t", 1); break;
		case 'u': {
			uint32_t cp = hex4(s);
			s += 4;
			if (cp >= 0xD800 && cp < 0xDC00 && end - s >= 6 && s[0] == '\\' && s[1] == 'u') {
				uint32_t lo = hex4(s + 2);
				if (lo >= 0xDC00 && lo < 0xE000) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					s += 6;
				}
			}
			if (cp >= 0xD800 && cp < 0xE000)
				cp = 0xFFFD;
			put_utf8(out, cp);
			break;
		}
		default: put(out, &c, 1); /* " \ / */
		}
	}
	return !out->oom;
}

/* member finds key in the object obj (already validated) and sets *val to
 * its value. Returns 0 if obj is not an object or has no such key. */
static int member(span obj, const char *key, span *val) {
	const char *s = obj.s;
	size_t n = obj.n, i = 0, klen = strlen(key);
	if (n == 0 || s[0] != '{')
		return 0;
	i = skip_ws(s, n, 1);
	while (i < n && s[i] == '"') {
		size_t kend = scan_string(s, n, i);
		span k = {s + i, kend - i};
		i = skip_ws(s, n, kend) + 1; /* past ':' */
		i = skip_ws(s, n, i);
		size_t vend = scan_value(s, n, i, 0);
		if (vend == BAD)
			return 0; /* unreachable after validation, but never trust */
		buf name = {0};
		if (decode_string(k, &name) && name.len == klen && (klen == 0 || memcmp(name.p, key, klen) == 0)) {
			val->s = s + i;
			val->n = vend - i;
			return 1;
		}
		i = skip_ws(s, n, vend);
		if (i < n && s[i] == ',')
			i = skip_ws(s, n, i + 1);
	}
	return 0;
}

/* is reports whether b holds exactly the text s. */
static int is(const buf *b, const char *s) {
	size_t n = strlen(s);
	return b->len == n && (n == 0 || memcmp(b->p, s, n) == 0);
}

/* string_member decodes the string obj[key] into out; 0 if absent or not a
 * string. */
static int string_member(span obj, const char *key, buf *out) {
	span v;
	return member(obj, key, &v) && decode_string(v, out);
}

/* A call in progress: the input and its "request" object. */
typedef struct {
	char *in;
	span request;
} call;

/* begin reads and validates the envelope. On failure it has set the error
 * and returns 0 (the export then returns 1). */
static int begin(call *c) {
	release_all();
	size_t n;
	c->in = read_input(&n);
	if (!c->in) {
		failf(INVALID_PARAMS, "input too large (or out of memory)", NULL, 0);
		return 0;
	}
	size_t i = skip_ws(c->in, n, 0);
	size_t end = scan_value(c->in, n, i, 0);
	span env = {c->in + i, end - i};
	if (end == BAD || skip_ws(c->in, n, end) != n || c->in[i] != '{') {
		failf(INVALID_PARAMS, "malformed input: not one JSON object", NULL, 0);
		return 0;
	}
	if (!member(env, "request", &c->request) || c->request.s[0] != '{') {
		failf(INVALID_PARAMS, "malformed input: \"request\" is not an object", NULL, 0);
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------------------------ */
/* Fibonacci numbers.                                                       */

/* parse_n reads n from text: 1 to 9 decimal digits, at most MAX_N. */
static int parse_n(const char *s, size_t len, unsigned *n) {
	if (len == 0 || len > 9)
		return 0;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > MAX_N)
		return 0;
	*n = v;
	return 1;
}

/* put_fib writes F(n) in decimal. F(n) < 2^(0.7n), so MAX_N needs fewer
 * than 7000/29 + 1 limbs of base 10^9 (each holds 29.9 bits). */
#define LIMB 1000000000u
#define LIMBS (MAX_N * 7 / 10 / 29 + 2)
static void put_fib(buf *b, unsigned n) {
	static uint32_t x[LIMBS], y[LIMBS]; /* F(i) and F(i+1), least significant limb first */
	memset(x, 0, sizeof x);
	memset(y, 0, sizeof y);
	y[0] = 1;
	size_t used = 1;
	for (unsigned i = 0; i < n; i++) { /* (x, y) = (y, x + y) */
		uint32_t carry = 0;
		for (size_t k = 0; k < used; k++) {
			uint32_t sum = x[k] + y[k] + carry; /* < 2 * 10^9 + 1 < 2^32 */
			carry = sum >= LIMB;
			x[k] = y[k];
			y[k] = carry ? sum - LIMB : sum;
		}
		if (carry)
			y[used++] = 1;
	}
	size_t top = used;
	while (top > 1 && x[top - 1] == 0)
		top--;
	put_uint(b, x[top - 1], 0);
	for (size_t k = top - 1; k-- > 0;)
		put_uint(b, x[k], 9);
}

/* ------------------------------------------------------------------------ */
/* Exports.                                                                 */

static int32_t constant(const char *json) {
	release_all();
	buf b = {0};
	puts_(&b, json);
	return ok(&b);
}

MCPHOST_EXPORT("mcphost_abi_version") int32_t abi_version(void) { return 1; }

MCPHOST_EXPORT("list_resource_templates") int32_t list_resource_templates(void) {
	return constant(
	    "{\"resourceTemplates\":[{"
	    "\"uriTemplate\":\"c://fib/{n}\","
	    "\"name\":\"fibonacci\","
	    "\"title\":\"Fibonacci number F(n)\","
	    "\"description\":\"F(n), the n-th Fibonacci number (F(0) = 0, F(1) = 1), exactly, in decimal; n from 0 to 10000.\","
	    "\"mimeType\":\"text/plain\"}]}");
}

MCPHOST_EXPORT("list_prompts") int32_t list_prompts(void) {
	return constant(
	    "{\"prompts\":[{"
	    "\"name\":\"fib_explain\","
	    "\"title\":\"Explain a Fibonacci number\","
	    "\"description\":\"Embeds c://fib/{n} and asks for an explanation of how F(n) follows from the recurrence.\","
	    "\"arguments\":[{\"name\":\"n\",\"description\":\"Index of the Fibonacci number, 0 to 10000.\",\"required\":true}]}]}");
}

/* read_resource: {"uri":"c://fib/12"} -> {"contents":[{"uri":…,"text":"144"}]} */
MCPHOST_EXPORT("read_resource") int32_t read_resource(void) {
	call c;
	if (!begin(&c))
		return 1;
	static const char prefix[] = "c://fib/";
	const size_t plen = sizeof prefix - 1;
	buf uri = {0};
	if (!string_member(c.request, "uri", &uri))
		return failf(INVALID_PARAMS, "read_resource: \"uri\" is missing or not a string", NULL, 0);
	if (uri.len < plen || memcmp(uri.p, prefix, plen) != 0)
		return failf(RESOURCE_NOT_FOUND, "resource not found: ", uri.p, uri.len);
	unsigned n;
	if (!parse_n(uri.p + plen, uri.len - plen, &n))
		return failf(INVALID_PARAMS, "c://fib/{n}: n must be a whole number from 0 to 10000, got ",
		             uri.p + plen, uri.len - plen);
	buf b = {0};
	puts_(&b, "{\"contents\":[{\"uri\":");
	put_json_string(&b, uri.p, uri.len);
	puts_(&b, ",\"mimeType\":\"text/plain\",\"text\":\"");
	put_fib(&b, n);
	puts_(&b, "\"}]}");
	return ok(&b);
}

/* get_prompt: {"name":"fib_explain","arguments":{"n":"12"}} -> two user
 * messages: the resource c://fib/12 embedded, and the question. */
MCPHOST_EXPORT("get_prompt") int32_t get_prompt(void) {
	call c;
	if (!begin(&c))
		return 1;
	buf name = {0}, arg = {0};
	if (!string_member(c.request, "name", &name))
		return failf(INVALID_PARAMS, "get_prompt: \"name\" is missing or not a string", NULL, 0);
	if (!is(&name, "fib_explain"))
		return failf(INVALID_PARAMS, "unknown prompt ", name.p, name.len);
	span args;
	if (!member(c.request, "arguments", &args) || !string_member(args, "n", &arg))
		return failf(INVALID_PARAMS, "fib_explain: argument \"n\" is required", NULL, 0);
	unsigned n;
	if (!parse_n(arg.p, arg.len, &n))
		return failf(INVALID_PARAMS, "fib_explain: argument \"n\" must be a whole number from 0 to 10000, got ",
		             arg.p, arg.len);

	buf digits = {0};
	put_fib(&digits, n);
	buf b = {0};
	puts_(&b, "{\"description\":\"Explain F(");
	put_uint(&b, n, 0);
	puts_(&b, ")\",\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":{\"uri\":\"c://fib/");
	put_uint(&b, n, 0);
	puts_(&b, "\",\"mimeType\":\"text/plain\",\"text\":\"");
	put(&b, digits.p, digits.len);
	b.oom |= digits.oom;
	puts_(&b, "\"}}},{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"The resource above is F(");
	put_uint(&b, n, 0);
	puts_(&b, "), the Fibonacci number at index ");
	put_uint(&b, n, 0);
	puts_(&b, " (F(0) = 0, F(1) = 1, F(n) = F(n-1) + F(n-2)); it has ");
	put_uint(&b, digits.len, 0);
	puts_(&b, digits.len == 1 ? " digit" : " digits");
	puts_(&b, ". Explain how it follows from the recurrence, and where Fibonacci numbers show up in nature or in computing.\"}}]}");
	return ok(&b);
}

/* complete: the argument n of fib_explain or of c://fib/{n}. Suggests the
 * indices 0..10000 whose decimal form starts with what was typed, smallest
 * first, at most 100 (the spec's cap), with the total count. */
MCPHOST_EXPORT("complete") int32_t complete(void) {
	call c;
	if (!begin(&c))
		return 1;
	span ref, argument;
	buf type = {0}, target = {0}, name = {0}, value = {0};
	if (!member(c.request, "ref", &ref) || !string_member(ref, "type", &type))
		return failf(INVALID_PARAMS, "complete: \"ref\" is missing or has no type", NULL, 0);
	if (!member(c.request, "argument", &argument) || !string_member(argument, "name", &name))
		return failf(INVALID_PARAMS, "complete: \"argument\" is missing or has no name", NULL, 0);
	if (!string_member(argument, "value", &value))
		value.len = 0; /* no value typed yet */

	int digits_only = 1;
	for (size_t i = 0; i < value.len; i++)
		digits_only &= value.p[i] >= '0' && value.p[i] <= '9';
	/* Ours: n of the prompt fib_explain or of the template c://fib/{n}. */
	int ours = ((is(&type, "ref/prompt") && string_member(ref, "name", &target) && is(&target, "fib_explain")) ||
	            (is(&type, "ref/resource") && string_member(ref, "uri", &target) && is(&target, "c://fib/{n}"))) &&
	           is(&name, "n") && digits_only && value.len <= 5;

	buf b = {0};
	puts_(&b, "{\"completion\":{\"values\":[");
	unsigned total = 0;
	for (unsigned k = 0; ours && k <= MAX_N; k++) {
		char d[20];
		char *p = fmt_uint(d, k, 0);
		size_t len = (size_t)(d + 20 - p);
		if (len < value.len || (value.len && memcmp(p, value.p, value.len) != 0))
			continue;
		if (++total <= 100) {
			if (total > 1)
				puts_(&b, ",");
			put_json_string(&b, p, len);
		}
	}
	puts_(&b, "],\"total\":");
	put_uint(&b, total, 0);
	puts_(&b, total > 100 ? ",\"hasMore\":true}}" : ",\"hasMore\":false}}");
	return ok(&b);
}
