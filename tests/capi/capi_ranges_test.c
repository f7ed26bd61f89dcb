/* Random-access validation through the C ABI (kiln_ranges_*), compiled as
 * C99: for every golden case, and for blocks whose length disagrees with
 * their header, the verdict read range by range (by kiln_ranges_buffer +
 * kiln_ranges_filled and by kiln_ranges_provide, under several range
 * options) is kiln_validate's on the whole file: status, class, rule,
 * offset, tensor and message. The ranges are disjoint, increasing and inside
 * the file; with merge_gap 0 none touches a byte a valid block's tensor
 * covers. A reader that fails, or hands over another length, is
 * KILN_READ_FAILED (class IO), never a verdict; caller mistakes are
 * KILN_BAD_ARGUMENT.
 * Usage: kiln_capi_ranges_test GOLDEN_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln_c.h"
#include "kiln/kiln_c_map.h"
#include "test_util.h"

#define MAX_RECORDED 4096

typedef struct recorded {
  uint64_t offset;
  uint64_t length;
} recorded;

static recorded ranges_seen[MAX_RECORDED];
static size_t ranges_count;

/* The settled handle's block map (kiln_ranges_block_map, from the bytes it
 * kept and its own verdict) is the map of the whole file with that verdict. */
static void same_map(const kiln_ranges *r, const unsigned char *data, size_t size,
                     const kiln_error *verdict, const char *name) {
  kiln_block_map *from_ranges = NULL, *from_file = NULL;
  const char *a = NULL, *b = NULL;
  size_t an = 0, bn = 0;
  CHECK(kiln_ranges_block_map(r, &from_ranges, NULL) == KILN_OK && from_ranges != NULL, name);
  CHECK(kiln_block_map_new(data, size, size, verdict, &from_file, NULL) == KILN_OK, name);
  if (from_ranges != NULL && from_file != NULL) {
    CHECK(kiln_block_map_json(from_ranges, &a, &an) == KILN_OK, name);
    CHECK(kiln_block_map_json(from_file, &b, &bn) == KILN_OK, name);
    CHECK(a != NULL && b != NULL && an == bn && memcmp(a, b, an) == 0, name);
  }
  kiln_block_map_free(from_ranges);
  kiln_block_map_free(from_file);
}

/* The verdict of kiln_ranges on data[0, size) (read from memory), its
 * error in *error; the ranges asked for in ranges_seen. by_provide: hand
 * the bytes over with kiln_ranges_provide instead of the handle's buffer. */
static kiln_status run_ranges(const unsigned char *data, size_t size, const kiln_range_options *ro,
                              int by_provide, kiln_error *error, const char *name) {
  kiln_ranges *r = NULL;
  kiln_status status;
  uint64_t at = 0, reads = 0, bytes = 0, sum = 0, end = 0;
  size_t n = 0, bn = 0;
  uint8_t *buf = NULL;
  kiln_header h;
  ranges_count = 0;
  h.struct_size = sizeof h;
  CHECK(kiln_ranges_new(size, NULL, ro, &r, error) == KILN_OK && r != NULL, name);
  if (r == NULL) return KILN_INTERNAL_ERROR;
  /* No header before its bytes; once the block is valid, its header. */
  CHECK(kiln_ranges_header(r, &h) == (size == 0 ? KILN_INVALID : KILN_NEED_MORE), name);
  while ((status = kiln_ranges_next(r, &at, &n)) == KILN_NEED_MORE) {
    CHECK(n > 0 && at >= end && at + n <= size, name);
    if (ro != NULL) CHECK(n <= ro->max_range || (at == 0 && n <= 64), name);
    if (n == 0 || at < end || at + n > size) break;
    if (ranges_count < MAX_RECORDED) {
      ranges_seen[ranges_count].offset = at;
      ranges_seen[ranges_count].length = n;
      ++ranges_count;
    }
    end = at + n;
    sum += n;
    if (by_provide) {
      kiln_ranges_provide(r, data + at, n);
    } else {
      CHECK(kiln_ranges_buffer(r, &buf, &bn) == KILN_NEED_MORE && buf != NULL && bn == n, name);
      if (buf == NULL || bn != n) break;
      memcpy(buf, data + at, n);
      kiln_ranges_filled(r);
    }
  }
  CHECK(status == KILN_OK || status == KILN_INVALID, name);
  CHECK(kiln_ranges_read(r, &reads, &bytes) == KILN_OK && bytes == sum && bytes <= size, name);
  CHECK(reads == ranges_count || ranges_count == MAX_RECORDED, name);
  CHECK(kiln_ranges_error(r, error) == status, name);
  if (status == KILN_OK) {
    CHECK(
        kiln_ranges_header(r, &h) == KILN_OK && h.struct_size == sizeof h && h.block_length == size,
        name);
  }
  /* Settled: nothing more wanted, nothing changes. */
  CHECK(kiln_ranges_next(r, &at, &n) == status && at == 0 && n == 0, name);
  CHECK(kiln_ranges_buffer(r, &buf, &bn) == status && buf == NULL && bn == 0, name);
  CHECK(kiln_ranges_filled(r) == status && kiln_ranges_fail(r, "late", 4) == status, name);
  same_map(r, data, size, error, name);
  if (status == KILN_OK && ro != NULL && ro->merge_gap == 0) {
    /* No byte a tensor covers was asked for. */
    const kiln_directory *d = NULL;
    kiln_tensor t;
    uint32_t count = 0, i;
    size_t k;
    t.struct_size = sizeof t;
    CHECK(kiln_ranges_directory(r, &d) == KILN_OK && d != NULL, name);
    if (d != NULL && kiln_directory_tensor_count(d, &count) == KILN_OK) {
      for (i = 0; i < count; ++i) {
        CHECK(kiln_directory_tensor(d, i, &t) == KILN_OK && t.payload == NULL, name);
        for (k = 0; k < ranges_count; ++k) {
          const uint64_t lo = ranges_seen[k].offset, hi = lo + ranges_seen[k].length;
          CHECK(hi <= t.block_offset || lo >= t.block_offset + t.byte_length || t.byte_length == 0,
                name);
        }
      }
    }
  }
  kiln_ranges_free(r);
  return status;
}

static void same_error(const kiln_error *a, const kiln_error *b, const char *name) {
  CHECK(a->error_class == b->error_class, name);
  CHECK(strcmp(a->rule, b->rule) == 0, name);
  CHECK(a->offset == b->offset, name);
  CHECK(a->tensor == b->tensor, name);
  CHECK(a->message_length == b->message_length && strcmp(a->message, b->message) == 0, name);
}

/* Every way of reading data gives kiln_validate's verdict. */
static void check_bytes(const unsigned char *data, size_t size, const char *name) {
  kiln_error want, got;
  kiln_status want_status;
  kiln_range_options ro[4];
  int k, by_provide;
  want.struct_size = sizeof want;
  got.struct_size = sizeof got;
  want_status = kiln_validate(data, size, NULL, &want);
  for (k = 0; k < 4; ++k) kiln_range_options_init(&ro[k]);
  ro[1].merge_gap = 0;
  ro[2].merge_gap = 0;
  ro[2].max_range = 1;
  ro[3].merge_gap = 7;
  ro[3].max_range = 16;
  for (by_provide = 0; by_provide < 2; ++by_provide) {
    CHECK(run_ranges(data, size, NULL, by_provide, &got, name) == want_status, name);
    same_error(&got, &want, name);
    for (k = 0; k < 4; ++k) {
      CHECK(run_ranges(data, size, &ro[k], by_provide, &got, name) == want_status, name);
      same_error(&got, &want, name);
    }
  }
}

static unsigned char *golden(const char *dir, const char *name, size_t *size) {
  char path[4096];
  unsigned char *data;
  snprintf(path, sizeof path, "%s/cases/%s.klnt", dir, name);
  data = read_file(path, size);
  CHECK(data != NULL, path);
  return data;
}

/* Lengths that disagree with the header: the size decides H8 as the
 * whole buffer's length does. */
static void check_lengths(const char *dir) {
  size_t size = 0;
  unsigned char *data = golden(dir, "kiln-v2-f32", &size), *longer;
  unsigned char klnt[65];
  kiln_error e;
  e.struct_size = sizeof e;
  if (data != NULL) {
    longer = malloc(size + 1);
    if (longer != NULL) {
      memcpy(longer, data, size);
      longer[size] = 0;
      check_bytes(longer, size + 1, "valid block + 1 trailing byte");
      CHECK(kiln_validate(longer, size + 1, NULL, &e) == KILN_INVALID && strcmp(e.rule, "H8") == 0,
            "valid block + 1 trailing byte is H8");
      free(longer);
    }
    check_bytes(data, size - 1, "valid block, last byte cut");
    free(data);
  }
  memset(klnt, 0, sizeof klnt);
  memcpy(klnt, "KLNT\x02\x03", 6);
  check_bytes(klnt, sizeof klnt, "65 bytes KLNT 02 03 0...");
  CHECK(kiln_validate(klnt, sizeof klnt, NULL, &e) == KILN_INVALID &&
            e.error_class == KILN_CLASS_FRAME && strcmp(e.rule, "H8") == 0 && e.offset == 64,
        "65 bytes KLNT 02 03 0... is FRAME H8 at 64");
  data = golden(dir, "d1-dtype-25", &size);
  if (data != NULL && size > 2) {
    check_bytes(data, size - 2, "bad dtype, last 2 bytes cut");
    CHECK(kiln_validate(data, size - 2, NULL, &e) == KILN_INVALID && strcmp(e.rule, "H8") == 0,
          "bad dtype, last 2 bytes cut is H8");
  }
  free(data);
}

/* A reader that fails, or hands over another length: KILN_READ_FAILED and
 * class IO at every step, never a verdict, no directory. */
static void check_read_failures(const char *dir) {
  size_t size = 0, n = 0;
  unsigned char *data = golden(dir, "ok-named-llama-layer", &size);
  kiln_ranges *r = NULL;
  kiln_error e;
  uint64_t at = 0;
  const kiln_directory *d = NULL;
  int step, fail_at;
  e.struct_size = sizeof e;
  if (data == NULL) return;
  for (fail_at = 0; fail_at < 3; ++fail_at) {
    int how;
    for (how = 0; how < 3; ++how) {
      CHECK(kiln_ranges_new(size, NULL, NULL, &r, &e) == KILN_OK, "new");
      for (step = 0; kiln_ranges_next(r, &at, &n) == KILN_NEED_MORE; ++step) {
        if (step < fail_at) {
          CHECK(kiln_ranges_provide(r, data + at, n) != KILN_READ_FAILED, "provide");
          continue;
        }
        if (how == 0) {
          CHECK(kiln_ranges_fail(r, "disk on fire", 12) == KILN_READ_FAILED, "fail");
        } else if (how == 1) {
          CHECK(kiln_ranges_provide(r, data + at, n - 1) == KILN_READ_FAILED, "short");
        } else {
          CHECK(kiln_ranges_provide(r, data + at, n + 1) == KILN_READ_FAILED, "long");
        }
        break;
      }
      CHECK(kiln_ranges_status(r) == KILN_READ_FAILED, "read failure settles");
      CHECK(kiln_ranges_error(r, &e) == KILN_READ_FAILED && e.error_class == KILN_CLASS_IO &&
                e.rule[0] == '\0' && e.message_length > 0,
            "read failure is class IO");
      CHECK(strcmp(kiln_error_class_name(e.error_class), "IO") == 0, "IO");
      if (how == 0) CHECK(strcmp(e.message, "disk on fire") == 0, "the reader's message");
      if (how == 1) CHECK(strstr(e.message, "returned") != NULL, "the length message");
      CHECK(kiln_ranges_directory(r, &d) == KILN_READ_FAILED && d == NULL, "no directory");
      {
        kiln_block_map *m = (kiln_block_map *)&m;
        CHECK(kiln_ranges_block_map(r, &m, &e) == KILN_BAD_ARGUMENT && m == NULL &&
                  e.error_class == KILN_CLASS_ARGUMENT && strstr(e.message, "verdict") != NULL,
              "no map without a verdict");
      }
      CHECK(kiln_ranges_provide(r, data, 1) == KILN_READ_FAILED, "settled");
      kiln_ranges_free(r);
      r = NULL;
    }
  }
  /* A message of one byte is the message. */
  CHECK(kiln_ranges_new(size, NULL, NULL, &r, NULL) == KILN_OK, "new");
  CHECK(kiln_ranges_fail(r, "E", 1) == KILN_READ_FAILED, "fail with a one-byte message");
  CHECK(kiln_ranges_error(r, &e) == KILN_READ_FAILED && strcmp(e.message, "E") == 0,
        "the one-byte message");
  kiln_ranges_free(r);
  /* No message: a default one. */
  CHECK(kiln_ranges_new(size, NULL, NULL, &r, NULL) == KILN_OK, "new");
  CHECK(kiln_ranges_fail(r, NULL, 0) == KILN_READ_FAILED, "fail without message");
  CHECK(kiln_ranges_error(r, &e) == KILN_READ_FAILED && e.message_length > 0, "default message");
  kiln_ranges_free(r);
  free(data);
}

static void check_arguments(void) {
  kiln_ranges *r = (kiln_ranges *)&r;
  kiln_range_options ro;
  kiln_options o;
  kiln_error e;
  uint8_t *buf = (uint8_t *)&buf;
  size_t n = 1;
  e.struct_size = sizeof e;
  CHECK(kiln_range_options_init(NULL) == KILN_BAD_ARGUMENT, "init NULL");
  CHECK(kiln_range_options_init(&ro) == KILN_OK && ro.struct_size == sizeof ro &&
            ro.merge_gap == 65536 && ro.max_range == 1048576,
        "defaults");
  CHECK(kiln_ranges_new(64, NULL, NULL, NULL, &e) == KILN_BAD_ARGUMENT &&
            e.error_class == KILN_CLASS_ARGUMENT && strstr(e.message, "out") != NULL,
        "out NULL");
  ro.struct_size = 4;
  CHECK(kiln_ranges_new(64, NULL, &ro, &r, &e) == KILN_BAD_ARGUMENT && r == NULL &&
            strstr(e.message, "range_options") != NULL,
        "range_options struct_size");
  kiln_options_init(&o);
  o.mode = 9;
  CHECK(kiln_ranges_new(64, &o, NULL, &r, &e) == KILN_BAD_ARGUMENT && r == NULL, "mode");
  CHECK(kiln_ranges_next(NULL, NULL, NULL) == KILN_BAD_ARGUMENT, "next NULL");
  CHECK(kiln_ranges_buffer(NULL, &buf, &n) == KILN_BAD_ARGUMENT && buf == NULL && n == 0,
        "buffer NULL");
  CHECK(kiln_ranges_filled(NULL) == KILN_BAD_ARGUMENT, "filled NULL");
  CHECK(kiln_ranges_provide(NULL, NULL, 0) == KILN_BAD_ARGUMENT, "provide NULL");
  CHECK(kiln_ranges_fail(NULL, NULL, 0) == KILN_BAD_ARGUMENT, "fail NULL");
  CHECK(kiln_ranges_status(NULL) == KILN_BAD_ARGUMENT, "status NULL");
  CHECK(kiln_ranges_error(NULL, &e) == KILN_BAD_ARGUMENT, "error NULL");
  kiln_ranges_free(NULL);
  {
    /* An error of a wrong struct_size: refused, untouched, no handle. */
    kiln_error small;
    memset(&small, 0x5A, sizeof small);
    small.struct_size = 8;
    CHECK(kiln_ranges_new(64, NULL, NULL, &r, &small) == KILN_BAD_ARGUMENT && r == NULL &&
              small.error_class == 0x5A5A5A5A,
          "new: error struct_size 8");
  }
  /* data NULL with a length: refused, nothing changed. */
  CHECK(kiln_ranges_new(100, NULL, NULL, &r, NULL) == KILN_OK, "new");
  CHECK(kiln_ranges_provide(r, NULL, 64) == KILN_BAD_ARGUMENT, "provide data NULL");
  CHECK(kiln_ranges_provide(r, NULL, 1) == KILN_BAD_ARGUMENT, "provide data NULL, 1 byte");
  CHECK(kiln_ranges_fail(r, NULL, 3) == KILN_BAD_ARGUMENT, "fail message NULL");
  CHECK(kiln_ranges_fail(r, NULL, 1) == KILN_BAD_ARGUMENT, "fail message NULL, 1 byte");
  CHECK(kiln_ranges_error(r, NULL) == KILN_BAD_ARGUMENT, "error(r, NULL)");
  CHECK(kiln_ranges_status(r) == KILN_NEED_MORE, "unchanged");
  {
    kiln_header h;
    const kiln_directory *d = (const kiln_directory *)&d;
    uint64_t reads = 99, bytes = 99;
    memset(&h, 0x5A, sizeof h);
    h.struct_size = sizeof h;
    CHECK(kiln_ranges_header(NULL, &h) == KILN_BAD_ARGUMENT, "header(NULL)");
    CHECK(kiln_ranges_header(r, NULL) == KILN_BAD_ARGUMENT, "header(r, NULL)");
    CHECK(kiln_ranges_header(r, &h) == KILN_NEED_MORE && h.tensor_count == 0x5A5A5A5Au,
          "header before its bytes: nothing written");
    h.struct_size = 0;
    CHECK(kiln_ranges_header(r, &h) == KILN_BAD_ARGUMENT, "header: struct_size 0");
    CHECK(kiln_ranges_directory(NULL, &d) == KILN_BAD_ARGUMENT && d == NULL, "directory(NULL)");
    CHECK(kiln_ranges_directory(r, NULL) == KILN_BAD_ARGUMENT, "directory(r, NULL)");
    CHECK(kiln_ranges_read(NULL, &reads, &bytes) == KILN_BAD_ARGUMENT && reads == 0 && bytes == 0,
          "read(NULL): zeros");
    CHECK(kiln_ranges_read(r, NULL, NULL) == KILN_OK, "read(r, NULL, NULL)");
    reads = bytes = 99;
    CHECK(kiln_ranges_read(r, &reads, NULL) == KILN_OK && reads == 0, "read: reads only");
    CHECK(kiln_ranges_read(r, NULL, &bytes) == KILN_OK && bytes == 0, "read: bytes only");
  }
  {
    kiln_block_map *m = (kiln_block_map *)&m;
    CHECK(kiln_ranges_block_map(r, &m, &e) == KILN_BAD_ARGUMENT && m == NULL &&
              strstr(e.message, "verdict") != NULL,
          "no map while a range is wanted");
    CHECK(kiln_ranges_block_map(NULL, &m, &e) == KILN_BAD_ARGUMENT && m == NULL, "map NULL");
    CHECK(kiln_ranges_block_map(r, NULL, &e) == KILN_BAD_ARGUMENT, "map out NULL");
    {
      kiln_error small;
      memset(&small, 0x5A, sizeof small);
      small.struct_size = 8;
      m = (kiln_block_map *)&m;
      CHECK(kiln_ranges_block_map(r, &m, &small) == KILN_BAD_ARGUMENT && m == NULL &&
                small.error_class == 0x5A5A5A5A,
            "map: error struct_size 8, untouched");
    }
  }
  kiln_ranges_free(r);
  /* A file of 0 bytes: judged at once, no read. */
  CHECK(kiln_ranges_new(0, NULL, NULL, &r, NULL) == KILN_OK, "new 0");
  CHECK(kiln_ranges_status(r) == KILN_INVALID, "0 bytes judged");
  kiln_ranges_free(r);
}

int main(int argc, char **argv) {
  char path[4096], line[4096];
  FILE *manifest;
  int cases = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
    return 2;
  }
  snprintf(path, sizeof path, "%s/manifest.tsv", argv[1]);
  manifest = fopen(path, "r");
  if (manifest == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return 2;
  }
  while (fgets(line, sizeof line, manifest) != NULL) {
    char *tab = strchr(line, '\t');
    size_t size = 0;
    unsigned char *data;
    if (line[0] == '#' || tab == NULL || strncmp(line, "case\t", 5) == 0) continue;
    *tab = '\0';
    data = golden(argv[1], line, &size);
    if (data == NULL) continue;
    check_bytes(data, size, line);
    free(data);
    ++cases;
  }
  fclose(manifest);
  CHECK(cases > 100, "the golden cases were read");
  check_lengths(argv[1]);
  check_read_failures(argv[1]);
  check_arguments();
  if (failures != 0) fprintf(stderr, "%d failures\n", failures);
  if (failures == 0) printf("capi ranges: %d golden cases and the length cases agree\n", cases);
  return failures == 0 ? 0 : 1;
}
