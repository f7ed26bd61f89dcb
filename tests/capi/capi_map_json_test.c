/* The block map's JSON through the C ABI (kiln/kiln_c_map.h), compiled as
 * C99: an offset is a JSON number up to 2^53 (every integer up to it is
 * exact in a double) and a decimal string above it, at the boundary: 2^53
 * is a number, 2^53 + 1 a string. The offsets come from a real block: a
 * file of 2^53 bytes and more (its size, its trailing bytes), and a header
 * that claims a block_length of 2^53 and more (its missing payload).
 * Usage: kiln_capi_map_json_test GOLDEN_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln_c.h"
#include "kiln/kiln_c_map.h"
#include "test_util.h"

#define TWO_TO_53 ((uint64_t)1 << 53)

static void put_u64_le(unsigned char *at, uint64_t v) {
  int i;
  for (i = 0; i < 8; ++i) at[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64_le(const unsigned char *at) {
  uint64_t v = 0;
  int i;
  for (i = 7; i >= 0; --i) v = (v << 8) | at[i];
  return v;
}

/* "<key>: <value>" as the map's JSON writes it: a bare number up to 2^53,
 * a quoted decimal string above. */
static void expected(char *out, size_t cap, const char *key, uint64_t v) {
  if (v <= TWO_TO_53) {
    snprintf(out, cap, "\"%s\": %llu", key, (unsigned long long)v);
  } else {
    snprintf(out, cap, "\"%s\": \"%llu\"", key, (unsigned long long)v);
  }
}

static void expect_in(const char *json, const char *key, uint64_t v, const char *what) {
  char want[128];
  const char *at;
  size_t n;
  expected(want, sizeof want, key, v);
  n = strlen(want);
  at = strstr(json, want);
  /* The whole value: followed by a comma or a closing brace. */
  while (at != NULL && at[n] != ',' && at[n] != '}') at = strstr(at + 1, want);
  if (at == NULL) fprintf(stderr, "%s: %s not in %s\n", what, want, json);
  CHECK(at != NULL, what);
}

static void check_map(const unsigned char *data, size_t size, uint64_t file_size, const char *what,
                      const char *key, uint64_t v) {
  kiln_error error;
  kiln_error map_error;
  kiln_block_map *map = NULL;
  kiln_status verdict;
  const char *json = NULL;
  size_t length = 0;
  memset(&error, 0, sizeof error);
  error.struct_size = sizeof error;
  memset(&map_error, 0, sizeof map_error);
  map_error.struct_size = sizeof map_error;
  verdict = kiln_validate(data, size, NULL, &error);
  CHECK(kiln_block_map_new(data, size, file_size, verdict == KILN_OK ? NULL : &error, &map,
                           &map_error) == KILN_OK,
        what);
  if (map == NULL) return;
  CHECK(kiln_block_map_json(map, &json, &length) == KILN_OK, what);
  CHECK(json != NULL && strlen(json) == length, what);
  if (json != NULL) expect_in(json, key, v, what);
  kiln_block_map_free(map);
}

int main(int argc, char **argv) {
  char path[4096];
  size_t size = 0;
  unsigned char *block;
  uint64_t payload_base;
  uint64_t v;
  if (argc != 2) {
    fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
    return 2;
  }
  snprintf(path, sizeof path, "%s/cases/kiln-v2-f32.klnt", argv[1]);
  block = read_file(path, &size);
  CHECK(block != NULL && size > 64, "read kiln-v2-f32.klnt");
  if (block == NULL || size <= 64) return 1;
  payload_base = size - get_u64_le(block + 16);

  for (v = TWO_TO_53 - 1; v <= TWO_TO_53 + 2; ++v) {
    /* A valid block in a file of v bytes: its size, and the end of the
     * trailing bytes after it. */
    check_map(block, size, v, "file_size", "file_size", v);
    check_map(block, size, v, "trailing end", "end", v);
    /* A header that claims a block of v bytes (payload_bytes v -
     * payload_base) in a file that ends at the real block's end: the
     * header's block_length, and the end of the missing payload. */
    put_u64_le(block + 16, v - payload_base);
    check_map(block, size, size, "block_length", "block_length", v);
    check_map(block, size, size, "missing end", "end", v);
    check_map(block, size, size, "payload_bytes", "payload_bytes", v - payload_base);
    put_u64_le(block + 16, size - payload_base);
  }
  free(block);
  if (failures != 0) fprintf(stderr, "%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
