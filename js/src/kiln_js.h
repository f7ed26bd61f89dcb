/* What the npm package's JavaScript needs from the WebAssembly module beside
 * the C ABI (kiln/kiln_c.h): the layout of the ABI's structs in this build.
 * Not part of the C ABI; linked into the WebAssembly module only. */
#ifndef KILN_JS_KILN_JS_H_
#define KILN_JS_KILN_JS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "kiln_error=SIZE;kiln_error.offset=OFF;...": the size of each struct of
 * kiln_c.h and the offset of each of its fields, as this compiler laid them
 * out, then the ABI's constants the JavaScript needs (KILN_MESSAGE_CAPACITY,
 * KILN_MAX_RANK, KILN_NO_TENSOR) the same way. Static, NUL-terminated. */
const char *kiln_js_layout(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_JS_KILN_JS_H_ */
