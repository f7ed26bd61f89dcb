/* The block map through the C ABI (kiln/kiln_c_map.h), compiled as C99:
 * every golden case's map covers its file from byte 0 without a hole, marks
 * the verdict's offset and tensor, and the caller mistakes are refused
 * (with an ARGUMENT error naming the argument; structs of a wrong
 * struct_size untouched).
 * Usage: kiln_capi_map_test GOLDEN_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln_c.h"
#include "kiln/kiln_c_map.h"
#include "test_util.h"

static void check_case(const char *dir, const char *name) {
  char path[4096];
  size_t size = 0;
  unsigned char *data;
  kiln_error error;
  kiln_block_map *map = NULL;
  kiln_status verdict;
  kiln_map_mark mark;
  kiln_region region;
  uint32_t i, n = 0;
  uint64_t at = 0;
  const char *json = NULL;
  const char *svg = NULL;
  size_t svg_length = 0;
  char expect[128];
  error.struct_size = sizeof error;
  mark.struct_size = sizeof mark;
  region.struct_size = sizeof region;
  snprintf(path, sizeof path, "%s/cases/%s", dir, name);
  data = read_file(path, &size);
  CHECK(data != NULL, name);
  if (data == NULL) return;
  verdict = kiln_validate(data, size, NULL, &error);
  CHECK(kiln_block_map_new(data, size, size, verdict == KILN_OK ? NULL : &error, &map, NULL) ==
            KILN_OK,
        name);
  free(data); /* the map copies what it keeps */
  CHECK(kiln_block_map_region_count(map, &n) == KILN_OK && n > 0, name);
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
  CHECK(kiln_block_map_json(map, &json, NULL) == KILN_OK && json != NULL && json[0] == '{', name);
  if (verdict == KILN_OK) {
    CHECK(json != NULL && strstr(json, "\"mark\": null") != NULL, name);
  } else {
    snprintf(expect, sizeof expect, "\"mark\": {\"offset\": %llu,",
             (unsigned long long)error.offset);
    CHECK(json != NULL && strstr(json, expect) != NULL, name);
  }
  /* The one drawing: the SVG kiln inspect --map writes, the mark at the
   * verdict's byte. */
  CHECK(kiln_block_map_svg(map, name, strlen(name), &svg, &svg_length) == KILN_OK && svg != NULL &&
            strlen(svg) == svg_length && strncmp(svg, "<?xml", 5) == 0 && strstr(svg, name) != NULL,
        name);
  if (verdict == KILN_OK) {
    CHECK(svg != NULL && strstr(svg, "id=\"mark\"") == NULL, name);
  } else {
    snprintf(expect, sizeof expect, "id=\"mark\" class=\"mark\" data-offset=\"%llu\"",
             (unsigned long long)error.offset);
    CHECK(svg != NULL && strstr(svg, expect) != NULL, name);
  }
  {
    /* A title of one byte is drawn: not the untitled drawing. */
    char *titled = svg == NULL ? NULL : malloc(strlen(svg) + 1);
    CHECK(kiln_block_map_svg(map, "Z", 1, &svg, &svg_length) == KILN_OK && titled != NULL, name);
    if (titled != NULL) {
      memcpy(titled, svg, svg_length + 1);
      CHECK(kiln_block_map_svg(map, NULL, 0, &svg, &svg_length) == KILN_OK &&
                strcmp(titled, svg) != 0,
            name);
    }
    free(titled);
  }
  CHECK(kiln_block_map_svg(map, NULL, 1, &svg, &svg_length) == KILN_BAD_ARGUMENT && svg == NULL &&
            svg_length == 0,
        name);
  CHECK(kiln_block_map_svg(map, NULL, 0, NULL, NULL) == KILN_BAD_ARGUMENT, name);
  CHECK(kiln_block_map_svg(NULL, NULL, 0, &svg, NULL) == KILN_BAD_ARGUMENT, name);
  kiln_block_map_free(map);
}

/* The message of an ARGUMENT error names the argument. */
static void check_argument(const char *what, kiln_status status, const kiln_error *error,
                           const char *argument) {
  CHECK(status == KILN_BAD_ARGUMENT, what);
  CHECK(error->error_class == KILN_CLASS_ARGUMENT, what);
  CHECK(strstr(error->message, argument) != NULL, what);
}

int main(int argc, char **argv) {
  kiln_block_map *map = (kiln_block_map *)1;
  kiln_error bad;
  kiln_error error;
  static const unsigned char four[4] = {'K', 'L', 'N', 'T'};
  size_t length = 0;
  uint32_t count = 99;
  const char *json = "x";
  if (argc != 2) {
    fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
    return 2;
  }
  check_case(argv[1], "kiln-v2-f32.klnt");
  check_case(argv[1], "d7-byte-length-short.klnt");
  check_case(argv[1], "d1-dtype-8-descriptor-1.klnt");
  check_case(argv[1], "h1-byte-swapped-magic.klnt");

  /* Caller mistakes: refused, *out NULL, the error naming the argument. */
  error.struct_size = sizeof error;
  check_argument("out NULL", kiln_block_map_new(four, 4, 4, NULL, NULL, &error), &error, "out");
  check_argument("prefix NULL", kiln_block_map_new(NULL, 4, 4, NULL, &map, &error), &error,
                 "prefix");
  CHECK(map == NULL, "prefix NULL: *out");
  check_argument("prefix NULL, 1 byte", kiln_block_map_new(NULL, 1, 4, NULL, &map, &error), &error,
                 "prefix");
  check_argument("prefix > file", kiln_block_map_new(four, 4, 3, NULL, &map, &error), &error,
                 "file_size");
  CHECK(kiln_block_map_new(four, 4, 3, NULL, &map, NULL) == KILN_BAD_ARGUMENT,
        "prefix > file, error NULL");
  memset(&bad, 0, sizeof bad);
  bad.struct_size = sizeof bad;
  bad.error_class = KILN_CLASS_TYPE;
  memcpy(bad.rule, "Z9", 3);
  check_argument("unknown rule", kiln_block_map_new(four, 4, 4, &bad, &map, &error), &error,
                 "verdict");
  bad.error_class = KILN_CLASS_ARGUMENT;
  memcpy(bad.rule, "H1", 3);
  check_argument("argument class", kiln_block_map_new(four, 4, 4, &bad, &map, &error), &error,
                 "verdict");
  bad.error_class = KILN_CLASS_FRAME;
  bad.struct_size = sizeof bad - 8;
  check_argument("verdict struct_size", kiln_block_map_new(four, 4, 4, &bad, &map, &error), &error,
                 "verdict->struct_size");
  bad.struct_size = sizeof bad;
  {
    kiln_error small;
    memset(&small, 0x5A, sizeof small);
    small.struct_size = 8;
    CHECK(kiln_block_map_new(four, 4, 4, NULL, &map, &small) == KILN_BAD_ARGUMENT && map == NULL &&
              small.error_class == 0x5A5A5A5A,
          "error struct_size 8: refused, untouched");
  }
  CHECK(kiln_block_map_region_count(NULL, &count) == KILN_BAD_ARGUMENT && count == 0, "count NULL");
  CHECK(kiln_block_map_json(NULL, &json, &length) == KILN_BAD_ARGUMENT && json == NULL,
        "json NULL");
  kiln_block_map_free(NULL);

  /* Output structs of a wrong size: refused, untouched. */
  CHECK(kiln_block_map_new(four, 4, 4, NULL, &map, &error) == KILN_OK, "four bytes");
  {
    kiln_region region;
    kiln_map_mark mark;
    memset(&region, 0x5A, sizeof region);
    memset(&mark, 0x5A, sizeof mark);
    region.struct_size = sizeof region - 8;
    mark.struct_size = 0;
    CHECK(kiln_block_map_region(map, 0, &region) == KILN_BAD_ARGUMENT &&
              region.begin == 0x5A5A5A5A5A5A5A5Au,
          "region struct_size");
    CHECK(kiln_block_map_mark(map, &mark) == KILN_BAD_ARGUMENT && mark.present == 0x5A5A5A5Au,
          "mark struct_size");
    CHECK(kiln_block_map_region_count(map, NULL) == KILN_BAD_ARGUMENT, "count out NULL");
    length = 99;
    CHECK(kiln_block_map_json(map, NULL, &length) == KILN_BAD_ARGUMENT && length == 0,
          "json out NULL");
    memset(&region, 0x5A, sizeof region);
    region.struct_size = sizeof region;
    CHECK(kiln_block_map_region(map, 0, &region) == KILN_OK && region.reserved == 0,
          "region: reserved 0");
  }
  kiln_block_map_free(map);
  map = NULL;

  /* A verdict whose message fills its array with no NUL, its length the
   * capacity: read as the capacity less one byte, as kiln writes it. */
  memset(&bad, 0, sizeof bad);
  bad.struct_size = sizeof bad;
  bad.error_class = KILN_CLASS_FRAME;
  memcpy(bad.rule, "H1", 3);
  bad.tensor = KILN_NO_TENSOR;
  memset(bad.message, 'x', sizeof bad.message);
  bad.message_length = sizeof bad.message;
  CHECK(kiln_block_map_new(four, 4, 4, &bad, &map, &error) == KILN_OK, "a full message");
  CHECK(kiln_block_map_json(map, &json, &length) == KILN_OK, "a full message: json");
  {
    size_t run = 0, longest = 0, i;
    for (i = 0; json != NULL && i < length; ++i) {
      run = json[i] == 'x' ? run + 1 : 0;
      if (run > longest) longest = run;
    }
    CHECK(longest == KILN_MESSAGE_CAPACITY - 1, "a full message: capacity less one byte");
  }
  kiln_block_map_free(map);
  map = NULL;

  /* An empty file is a map too (H1 at byte 0, the header missing). */
  memcpy(bad.rule, "H1", 3);
  bad.error_class = KILN_CLASS_FRAME;
  bad.offset = 0;
  bad.tensor = KILN_NO_TENSOR;
  bad.message_length = 0;
  bad.message[0] = '\0';
  CHECK(kiln_block_map_new(NULL, 0, 0, &bad, &map, &error) == KILN_OK &&
            error.error_class == KILN_CLASS_NONE,
        "empty file");
  CHECK(kiln_block_map_json(map, &json, &length) == KILN_OK && json != NULL &&
            length == strlen(json) && strstr(json, "\"kind\": \"missing\"") != NULL,
        "empty file json");
  kiln_block_map_free(map);

  if (failures == 0) printf("capi map: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
