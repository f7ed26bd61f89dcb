/* Helpers shared by the C99 tests of the C ABI: a failure counter, CHECK
 * (counts and reports a failed condition, then goes on) and read_file.
 * Each test is one translation unit that includes this once. */
#ifndef KILN_TESTS_CAPI_TEST_UTIL_H_
#define KILN_TESTS_CAPI_TEST_UTIL_H_

#include <stdio.h>
#include <stdlib.h>

static int failures = 0;

#define CHECK(cond, what)                                                \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "FAIL %s: %s (line %d)\n", what, #cond, __LINE__); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

/* The whole file at `path` (malloc'd, one spare byte so an empty file is
 * not a NULL), its length in *size; NULL if it cannot be read. */
static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *data = NULL;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = malloc((size_t)n + 1);
    if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
      free(data);
      data = NULL;
    }
    *size = (size_t)n;
  }
  fclose(f);
  return data;
}

#endif /* KILN_TESTS_CAPI_TEST_UTIL_H_ */
