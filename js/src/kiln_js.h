/* What the npm package's JavaScript needs from the WebAssembly module beside
 * the C ABI (kiln/kiln_c.h): the layout of the ABI's structs in this build,
 * and the project's escaping of untrusted text. Not part of the C ABI; linked
 * into the WebAssembly module only. */
#ifndef KILN_JS_KILN_JS_H_
#define KILN_JS_KILN_JS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "kiln_error=SIZE;kiln_error.offset=OFF;...": the size of each struct of
 * kiln_c.h and the offset of each of its fields, as this compiler laid them
 * out. Static, NUL-terminated. */
const char *kiln_js_layout(void);

/* Escapes text[0, size) as `kiln validate` prints untrusted text (the
 * project's one escaping function) into out[0, capacity). Returns the
 * length of the escaped text; when it exceeds capacity nothing is written
 * (call again with that capacity). 4 * size + 16 always suffices. */
size_t kiln_js_escape(const uint8_t *text, size_t size, uint8_t *out, size_t capacity);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_JS_KILN_JS_H_ */
