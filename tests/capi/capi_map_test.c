/* The block map through the C ABI (kiln/kiln_c_map.h), compiled as C99:
 * every golden case's map covers its file from byte 0 without a hole, marks
 * the verdict's offset and tensor, and the caller mistakes are refused.
 * Usage: kiln_capi_map_test GOLDEN_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln_c.h"
#include "kiln/kiln_c_map.h"

static int failures = 0;

#define CHECK(cond, what)                                                \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "FAIL %s: %s (line %d)\n", what, #cond, __LINE__); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

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

static void check_case(const char *dir, const char *name) {
  char path[4096];
  size_t size = 0;
  unsigned char *data;
  kiln_error error;
  kiln_block_map *map = NULL;
  kiln_status verdict;
  kiln_map_mark mark;
  kiln_region region;
  uint32_t i, n;
  uint64_t at = 0;
  snprintf(path, sizeof path, "%s/cases/%s", dir, name);
  data = read_file(path, &size);
  CHECK(data != NULL, name);
  if (data == NULL) return;
  verdict = kiln_validate(data, size, NULL, &error);
  CHECK(kiln_block_map_new(data, size, size, verdict == KILN_OK ? NULL : &error, &map) == KILN_OK,
        name);
  free(data); /* the map copies what it keeps */
  n = kiln_block_map_region_count(map);
  CHECK(n > 0, name);
  for (i = 0; i < n; ++i) {
    CHECK(kiln_block_map_region(map, i, &region) == KILN_OK, name);
    CHECK(region.begin == at && region.end > region.begin, name);
    CHECK(region.label != NULL && strlen(region.label) == region.label_length, name);
    at = region.end;
  }
  CHECK(kiln_block_map_region(map, n, &region) == KILN_BAD_ARGUMENT, name);
  CHECK(kiln_block_map_mark(map, &mark) == KILN_OK, name);
  if (verdict == KILN_OK) {
    CHECK(mark.present == 0, name);
  } else {
    CHECK(mark.present == 1 && mark.offset == error.offset && mark.tensor == error.tensor, name);
    CHECK(mark.field_length > 0, name);
  }
  CHECK(kiln_block_map_json(map, NULL) != NULL, name);
  kiln_block_map_free(map);
}

int main(int argc, char **argv) {
  kiln_block_map *map = (kiln_block_map *)1;
  kiln_error bad;
  static const unsigned char four[4] = {'K', 'L', 'N', 'T'};
  size_t length = 0;
  const char *json;
  if (argc != 2) {
    fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
    return 2;
  }
  check_case(argv[1], "kiln-v2-f32.klnt");
  check_case(argv[1], "d7-byte-length-short.klnt");
  check_case(argv[1], "d1-dtype-8-descriptor-1.klnt");
  check_case(argv[1], "h1-byte-swapped-magic.klnt");

  /* Caller mistakes: refused, *out NULL. */
  CHECK(kiln_block_map_new(four, 4, 4, NULL, NULL) == KILN_BAD_ARGUMENT, "out NULL");
  CHECK(kiln_block_map_new(NULL, 4, 4, NULL, &map) == KILN_BAD_ARGUMENT && map == NULL,
        "prefix NULL");
  CHECK(kiln_block_map_new(four, 4, 3, NULL, &map) == KILN_BAD_ARGUMENT, "prefix > file");
  memset(&bad, 0, sizeof bad);
  bad.error_class = KILN_CLASS_TYPE;
  memcpy(bad.rule, "Z9", 3);
  CHECK(kiln_block_map_new(four, 4, 4, &bad, &map) == KILN_BAD_ARGUMENT, "unknown rule");
  bad.error_class = KILN_CLASS_ARGUMENT;
  memcpy(bad.rule, "H1", 3);
  CHECK(kiln_block_map_new(four, 4, 4, &bad, &map) == KILN_BAD_ARGUMENT, "argument class");
  CHECK(kiln_block_map_region_count(NULL) == 0, "count NULL");
  CHECK(kiln_block_map_json(NULL, &length) == NULL, "json NULL");
  kiln_block_map_free(NULL);

  /* An empty file is a map too (H1 at byte 0, the header missing). */
  memcpy(bad.rule, "H1", 3);
  bad.error_class = KILN_CLASS_FRAME;
  bad.offset = 0;
  bad.tensor = KILN_NO_TENSOR;
  bad.message_length = 0;
  bad.message[0] = '\0';
  CHECK(kiln_block_map_new(NULL, 0, 0, &bad, &map) == KILN_OK, "empty file");
  json = kiln_block_map_json(map, &length);
  CHECK(json != NULL && strstr(json, "\"kind\": \"missing\"") != NULL, "empty file json");
  kiln_block_map_free(map);

  if (failures == 0) printf("capi map: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
