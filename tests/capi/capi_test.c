/* The C ABI (kiln/kiln_c.h) from the outside, in C99:
 *
 *   capi_test GOLDEN_DIR
 *
 * - every golden case (GOLDEN_DIR/manifest.tsv, GOLDEN_DIR/cases/NAME.klnt)
 *   through kiln_validate, kiln_parse and the stream (chunks of 1, 7, 64
 *   bytes and the whole file at once): each verdict matches the manifest
 *   on class, rule, offset and tensor;
 * - every valid case's directory walked, whole and from the stream, the
 *   two agreeing tensor by tensor;
 * - the caller mistakes: NULL pointers, data NULL with size > 0, a wrong
 *   struct_size (of options, an error, a header, a tensor) or mode, a feed
 *   after finish, a tensor index out of range; each answered with
 *   KILN_BAD_ARGUMENT (and an ARGUMENT error naming the argument where the
 *   function takes a kiln_error), a struct of a wrong size left untouched;
 * - the conventions: results through out-parameters, kiln_stream_error
 *   returning the stream's status, the version macros and functions.
 *
 * Prints one line per failure and exits 1 if there was any. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln_c.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    ++checks;                                                \
    if (!(cond)) {                                           \
      ++failures;                                            \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                   \
      printf("\n");                                          \
    }                                                        \
  } while (0)

/* One manifest row: "ok", or the class, rule, offset and tensor. */
typedef struct expected {
  char name[128];
  int ok;
  char error_class[16];
  char rule[8];
  unsigned long long offset;
  unsigned long tensor; /* KILN_NO_TENSOR for "-" */
} expected;

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  uint8_t *data;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  data = malloc((size_t)n + 1); /* + 1: never malloc(0) */
  if (data == NULL || fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

/* Splits a manifest row; 0 for a comment, the header or a malformed row. */
static int parse_row(char *line, expected *e) {
  char *field[6];
  int i;
  char *p = line;
  if (line[0] == '#' || line[0] == '\0' || strncmp(line, "case\t", 5) == 0) return 0;
  for (i = 0; i < 6; ++i) {
    field[i] = p;
    p = strchr(p, '\t');
    if (p == NULL) {
      if (i < 5) return 0;
      break;
    }
    *p++ = '\0';
  }
  memset(e, 0, sizeof *e);
  if (strlen(field[0]) >= sizeof e->name) return 0;
  strcpy(e->name, field[0]);
  e->ok = strcmp(field[1], "ok") == 0;
  e->tensor = KILN_NO_TENSOR;
  if (e->ok) return 1;
  if (strlen(field[1]) >= sizeof e->error_class || strlen(field[2]) >= sizeof e->rule) return 0;
  strcpy(e->error_class, field[1]);
  strcpy(e->rule, field[2]);
  e->offset = strtoull(field[3], NULL, 10);
  if (strcmp(field[4], "-") != 0) e->tensor = strtoul(field[4], NULL, 10);
  return 1;
}

/* The verdict (status and error) against the manifest row. */
static void check_verdict(const expected *e, const char *how, kiln_status status,
                          const kiln_error *error) {
  if (e->ok) {
    CHECK(status == KILN_OK, "%s, %s: status %d, %s %s at %llu: %s", e->name, how, (int)status,
          kiln_error_class_name(error->error_class), error->rule, (unsigned long long)error->offset,
          error->message);
    CHECK(error->error_class == KILN_CLASS_NONE && error->rule[0] == '\0' &&
              error->message_length == 0 && error->tensor == KILN_NO_TENSOR,
          "%s, %s: the error is not cleared", e->name, how);
    return;
  }
  CHECK(status == KILN_INVALID, "%s, %s: status %d, want INVALID", e->name, how, (int)status);
  CHECK(strcmp(kiln_error_class_name(error->error_class), e->error_class) == 0,
        "%s, %s: class %s, want %s", e->name, how, kiln_error_class_name(error->error_class),
        e->error_class);
  CHECK(strcmp(error->rule, e->rule) == 0, "%s, %s: rule %s, want %s", e->name, how, error->rule,
        e->rule);
  CHECK(error->offset == e->offset, "%s, %s: offset %llu, want %llu", e->name, how,
        (unsigned long long)error->offset, e->offset);
  CHECK(error->tensor == e->tensor, "%s, %s: tensor %lu, want %lu", e->name, how,
        (unsigned long)error->tensor, e->tensor);
  CHECK(error->message_length > 0 && error->message_length == strlen(error->message) &&
            error->message_length < KILN_MESSAGE_CAPACITY,
        "%s, %s: message length %lu", e->name, how, (unsigned long)error->message_length);
}

/* The stream's directory, or NULL (checking the status the call returns
 * agrees). */
static const kiln_directory *stream_directory(const kiln_stream *s) {
  const kiln_directory *d = (const kiln_directory *)s; /* not NULL: the call must set it */
  const kiln_status status = kiln_stream_directory(s, &d);
  CHECK(status == kiln_stream_status(s), "kiln_stream_directory: status %d, the stream's %d",
        (int)status, (int)kiln_stream_status(s));
  CHECK((status == KILN_OK) == (d != NULL), "kiln_stream_directory: status %d, directory %s",
        (int)status, d == NULL ? "NULL" : "set");
  return d;
}

static uint32_t tensor_count(const kiln_directory *d) {
  uint32_t n = 0xFFFFFFFFu;
  CHECK(kiln_directory_tensor_count(d, &n) == KILN_OK, "kiln_directory_tensor_count");
  return n;
}

static uint64_t consumed(const kiln_stream *s) {
  uint64_t n = 0xFFFFFFFFu;
  CHECK(kiln_stream_consumed(s, &n) == KILN_OK, "kiln_stream_consumed");
  return n;
}

/* Streams data in chunks of `chunk` bytes; returns the final status and
 * fills *error; *out is the stream (for its directory), freed by the
 * caller. */
static kiln_status stream_in_chunks(const uint8_t *data, size_t size, size_t chunk,
                                    kiln_stream **out, kiln_error *error) {
  size_t at = 0;
  kiln_status status = KILN_NEED_MORE;
  kiln_status finished;
  kiln_stream *s = NULL;
  *out = NULL;
  if (kiln_stream_new(NULL, &s, error) != KILN_OK) return KILN_NO_MEMORY;
  *out = s;
  while (at < size && status == KILN_NEED_MORE) {
    size_t n = size - at < chunk ? size - at : chunk;
    size_t used = (size_t)-1;
    status = kiln_stream_feed(s, data + at, n, &used);
    CHECK(used <= n, "used %lu of a chunk of %lu", (unsigned long)used, (unsigned long)n);
    at += n;
  }
  /* Whole mode: the bytes left after a complete block are trailing bytes. */
  if (at < size && status == KILN_OK) status = kiln_stream_feed(s, data + at, size - at, NULL);
  finished = kiln_stream_finish(s);
  CHECK(finished == KILN_OK || finished == KILN_INVALID, "finish: status %d", (int)finished);
  CHECK(kiln_stream_finish(s) == finished, "a second finish changed the status");
  CHECK(kiln_stream_status(s) == finished, "status after finish");
  CHECK(kiln_stream_error(s, error) == finished, "kiln_stream_error is not the stream's status");
  return finished;
}

static int same_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  return na == nb && (na == 0 || memcmp(a, b, na) == 0);
}

/* Walks a valid case's directory (from kiln_parse over data) and compares
 * it with the stream's. */
static void walk(const expected *e, const uint8_t *data, size_t size, const kiln_directory *d,
                 const kiln_directory *streamed) {
  kiln_header h;
  kiln_header hs;
  kiln_tensor t;
  uint32_t i;
  uint32_t k;
  h.struct_size = sizeof h;
  hs.struct_size = sizeof hs;
  t.struct_size = sizeof t;
  CHECK(kiln_directory_header(d, &h) == KILN_OK, "%s: header", e->name);
  CHECK(h.block_length == size, "%s: block_length %llu, size %lu", e->name,
        (unsigned long long)h.block_length, (unsigned long)size);
  CHECK(h.payload_base + h.payload_bytes == h.block_length && h.payload_base % 64 == 0,
        "%s: payload_base %llu", e->name, (unsigned long long)h.payload_base);
  CHECK(h.has_names == (h.flags & 1u), "%s: has_names", e->name);
  CHECK(tensor_count(d) == h.tensor_count, "%s: tensor_count", e->name);
  CHECK(streamed != NULL, "%s: the stream has no directory", e->name);
  if (streamed != NULL) {
    CHECK(kiln_directory_header(streamed, &hs) == KILN_OK && memcmp(&h, &hs, sizeof h) == 0,
          "%s: the stream's header differs", e->name);
  }
  for (i = 0; i < h.tensor_count; ++i) {
    kiln_tensor ts;
    ts.struct_size = sizeof ts;
    CHECK(kiln_directory_tensor(d, i, &t) == KILN_OK, "%s: tensor %lu", e->name, (unsigned long)i);
    CHECK(t.index == i, "%s: tensor %lu has index %lu", e->name, (unsigned long)i,
          (unsigned long)t.index);
    CHECK(t.dtype_name != NULL && t.dtype_name[0] != '\0', "%s: tensor %lu: dtype_name", e->name,
          (unsigned long)i);
    CHECK(t.rank <= KILN_MAX_RANK, "%s: tensor %lu: rank %lu", e->name, (unsigned long)i,
          (unsigned long)t.rank);
    for (k = t.rank; k < KILN_MAX_RANK; ++k) {
      CHECK(t.shape[k] == 0, "%s: tensor %lu: shape slot %lu", e->name, (unsigned long)i,
            (unsigned long)k);
    }
    {
      /* Every dimension is there: their product is the element count (0
       * when one is 0; else it fits in 64 bits, as D5 checked). */
      uint64_t product = 1;
      for (k = 0; k < t.rank && k < KILN_MAX_RANK; ++k) {
        if (t.shape[k] == 0) product = 0;
      }
      for (k = 0; product != 0 && k < t.rank && k < KILN_MAX_RANK; ++k) {
        CHECK(t.shape[k] <= UINT64_MAX / product, "%s: tensor %lu: the shape's product overflows",
              e->name, (unsigned long)i);
        if (t.shape[k] > UINT64_MAX / product) break;
        product *= t.shape[k];
      }
      CHECK(product == t.element_count, "%s: tensor %lu: shape product %llu, element_count %llu",
            e->name, (unsigned long)i, (unsigned long long)product,
            (unsigned long long)t.element_count);
    }
    CHECK(t.byte_offset + t.byte_length <= h.payload_bytes, "%s: tensor %lu: range", e->name,
          (unsigned long)i);
    CHECK(t.block_offset == h.payload_base + t.byte_offset, "%s: tensor %lu: block_offset", e->name,
          (unsigned long)i);
    CHECK(t.byte_length == 0 || t.payload == data + t.block_offset,
          "%s: tensor %lu: the payload is not a view of the buffer", e->name, (unsigned long)i);
    CHECK(h.has_names || t.name_length == 0, "%s: tensor %lu: a name without names", e->name,
          (unsigned long)i);
    CHECK(t.name_length == 0 || (t.name >= data && t.name + t.name_length <= data + h.payload_base),
          "%s: tensor %lu: the name is not a view of the directory", e->name, (unsigned long)i);
    CHECK((t.quant_scheme == KILN_QUANT_NONE) == (t.quant_scale_index == KILN_NO_TENSOR),
          "%s: tensor %lu: quantisation", e->name, (unsigned long)i);
    if (streamed == NULL) continue;
    CHECK(kiln_directory_tensor(streamed, i, &ts) == KILN_OK, "%s: streamed tensor %lu", e->name,
          (unsigned long)i);
    CHECK(ts.struct_size == sizeof ts && t.struct_size == sizeof t,
          "%s: tensor %lu: struct_size changed", e->name, (unsigned long)i);
    CHECK(ts.payload == NULL, "%s: streamed tensor %lu has a payload", e->name, (unsigned long)i);
    CHECK(ts.dtype == t.dtype && ts.rank == t.rank &&
              memcmp(ts.shape, t.shape, sizeof t.shape) == 0 &&
              ts.element_count == t.element_count && ts.byte_offset == t.byte_offset &&
              ts.byte_length == t.byte_length && ts.block_offset == t.block_offset &&
              ts.block_size == t.block_size && ts.quant_scheme == t.quant_scheme &&
              ts.quant_axis == t.quant_axis && ts.quant_group_size == t.quant_group_size &&
              ts.quant_scale_index == t.quant_scale_index &&
              ts.quant_outer_index == t.quant_outer_index &&
              strcmp(ts.dtype_name, t.dtype_name) == 0 &&
              same_bytes(ts.name, ts.name_length, t.name, t.name_length) &&
              same_bytes(ts.layout, ts.layout_length, t.layout, t.layout_length),
          "%s: streamed tensor %lu differs", e->name, (unsigned long)i);
  }
  CHECK(kiln_directory_tensor(d, h.tensor_count, &t) == KILN_BAD_ARGUMENT,
        "%s: tensor index %lu (out of range) accepted", e->name, (unsigned long)h.tensor_count);
  CHECK(kiln_directory_tensor(d, 0xFFFFFFFFu, &t) == KILN_BAD_ARGUMENT,
        "%s: tensor index 0xFFFFFFFF accepted", e->name);
}

static void run_case(const char *golden, const expected *e) {
  static const size_t chunks[] = {1, 7, 64, (size_t)-1};
  char path[4096];
  size_t size = 0;
  size_t c;
  uint8_t *data;
  kiln_error error;
  kiln_directory *d = NULL;
  kiln_status status;
  expected stream_want;
  error.struct_size = sizeof error;
  if ((size_t)snprintf(path, sizeof path, "%s/cases/%s.klnt", golden, e->name) >= sizeof path) {
    CHECK(0, "%s: path too long", e->name);
    return;
  }
  data = read_file(path, &size);
  CHECK(data != NULL, "%s: cannot read %s", e->name, path);
  if (data == NULL) return;

  status = kiln_validate(data, size, NULL, &error);
  check_verdict(e, "kiln_validate", status, &error);
  status = kiln_parse(data, size, NULL, &d, &error);
  check_verdict(e, "kiln_parse", status, &error);
  CHECK((status == KILN_OK) == (d != NULL), "%s: kiln_parse: out and status disagree", e->name);

  /* A stream stops at block_length (docs/spec.md, section 5.1): trailing
   * bytes are FRAME H8 only after a valid block. When the block itself
   * breaks a rule (order-h8-before-h9), the stream reports that rule, the
   * verdict on the block's own bytes. */
  stream_want = *e;
  if (!e->ok && strcmp(e->rule, "H8") == 0 && e->offset < size &&
      kiln_validate(data, (size_t)e->offset, NULL, &error) == KILN_INVALID) {
    strcpy(stream_want.error_class, kiln_error_class_name(error.error_class));
    strcpy(stream_want.rule, error.rule);
    stream_want.offset = error.offset;
    stream_want.tensor = error.tensor;
  }

  for (c = 0; c < sizeof chunks / sizeof chunks[0]; ++c) {
    char how[64];
    kiln_stream *s = NULL;
    const size_t chunk = chunks[c] > size ? (size == 0 ? 1 : size) : chunks[c];
    snprintf(how, sizeof how, "stream in chunks of %lu", (unsigned long)chunk);
    status = stream_in_chunks(data, size, chunk, &s, &error);
    check_verdict(&stream_want, how, status, &error);
    CHECK(error.struct_size == sizeof error, "%s, %s: struct_size changed", e->name, how);
    CHECK((status == KILN_OK) == (stream_directory(s) != NULL),
          "%s, %s: directory and status disagree", e->name, how);
    if (d != NULL && c == 1) walk(e, data, size, d, stream_directory(s));
    kiln_stream_free(s);
  }
  kiln_directory_free(d);
  free(data);
}

/* The message of an ARGUMENT error names the argument. */
static void check_argument(const char *what, kiln_status status, const kiln_error *error,
                           const char *argument) {
  CHECK(status == KILN_BAD_ARGUMENT, "%s: status %d", what, (int)status);
  CHECK(error->error_class == KILN_CLASS_ARGUMENT, "%s: class %d", what, (int)error->error_class);
  CHECK(error->rule[0] == '\0', "%s: rule %s", what, error->rule);
  CHECK(strstr(error->message, argument) != NULL, "%s: the message \"%s\" does not name %s", what,
        error->message, argument);
}

static void bad_arguments(const char *golden) {
  char path[4096];
  size_t size = 0;
  uint8_t *data;
  kiln_options options;
  kiln_error error;
  kiln_directory *d = (kiln_directory *)&error; /* not NULL: kiln_parse must clear it */
  kiln_stream *s;
  kiln_header h;
  kiln_tensor t;
  size_t used = 99;
  uint32_t count = 99;
  uint64_t bytes = 99;
  const kiln_directory *cd = (const kiln_directory *)&error;
  static const uint8_t byte = 0;

  snprintf(path, sizeof path, "%s/cases/kiln-v2-f32.klnt", golden);
  data = read_file(path, &size);
  CHECK(data != NULL, "cannot read %s", path);
  if (data == NULL) return;
  error.struct_size = sizeof error;
  h.struct_size = sizeof h;
  t.struct_size = sizeof t;

  CHECK(kiln_options_init(NULL) == KILN_BAD_ARGUMENT, "kiln_options_init(NULL)");
  CHECK(kiln_options_init(&options) == KILN_OK && options.struct_size == sizeof options &&
            options.mode == KILN_MODE_WHOLE,
        "kiln_options_init");

  check_argument("kiln_validate(NULL, 1)", kiln_validate(NULL, 1, NULL, &error), &error, "data");
  CHECK(kiln_validate(NULL, 0, NULL, &error) == KILN_INVALID && strcmp(error.rule, "H1") == 0,
        "kiln_validate(NULL, 0) is the empty buffer: FRAME H1");
  CHECK(kiln_validate(data, size, NULL, NULL) == KILN_OK, "kiln_validate with error NULL");
  CHECK(kiln_validate(NULL, 5, NULL, NULL) == KILN_BAD_ARGUMENT, "error NULL, data NULL");

  options.struct_size = sizeof options - 1;
  check_argument("struct_size - 1", kiln_validate(data, size, &options, &error), &error,
                 "struct_size");
  options.struct_size = 0;
  check_argument("struct_size 0", kiln_validate(data, size, &options, &error), &error,
                 "struct_size");
  s = (kiln_stream *)&error; /* not NULL: kiln_stream_new must clear it */
  check_argument("kiln_stream_new with struct_size 0", kiln_stream_new(&options, &s, &error),
                 &error, "options->struct_size");
  CHECK(s == NULL, "kiln_stream_new left *out set after a bad argument");
  kiln_options_init(&options);
  options.mode = 2;
  check_argument("mode 2", kiln_validate(data, size, &options, &error), &error, "mode");
  check_argument("kiln_parse mode 2", kiln_parse(data, size, &options, &d, &error), &error, "mode");
  CHECK(d == NULL, "kiln_parse left *out set after a bad argument");
  check_argument("kiln_stream_new mode 2", kiln_stream_new(&options, &s, &error), &error,
                 "options->mode");
  CHECK(kiln_stream_new(&options, &s, NULL) == KILN_BAD_ARGUMENT && s == NULL,
        "kiln_stream_new mode 2, error NULL");
  check_argument("kiln_stream_new out NULL", kiln_stream_new(NULL, NULL, &error), &error, "out");
  kiln_options_init(&options);
  options.max_tensors = 0;
  CHECK(kiln_validate(data, size, &options, &error) == KILN_INVALID &&
            error.error_class == KILN_CLASS_LIMIT && strcmp(error.rule, "H7") == 0,
        "a limit of 0 tensors: LIMIT H7");

  check_argument("kiln_parse out NULL", kiln_parse(data, size, NULL, NULL, &error), &error, "out");
  check_argument("kiln_parse data NULL", kiln_parse(NULL, size, NULL, &d, &error), &error, "data");
  CHECK(d == NULL, "kiln_parse: *out not NULL after a bad argument");

  /* An error of a size the library does not know: refused, left as it was
   * (nothing may be written past what the caller said it holds). */
  {
    kiln_error small;
    memset(&small, 0x5A, sizeof small);
    small.struct_size = sizeof small - 8;
    CHECK(kiln_validate(data, 3, NULL, &small) == KILN_BAD_ARGUMENT, "error struct_size - 8");
    CHECK(kiln_parse(data, size, NULL, &d, &small) == KILN_BAD_ARGUMENT && d == NULL,
          "kiln_parse: error struct_size - 8");
    s = (kiln_stream *)&small;
    CHECK(kiln_stream_new(NULL, &s, &small) == KILN_BAD_ARGUMENT && s == NULL,
          "kiln_stream_new: error struct_size - 8");
    small.struct_size = 0;
    CHECK(kiln_validate(data, size, NULL, &small) == KILN_BAD_ARGUMENT, "error struct_size 0");
    CHECK(small.error_class == 0x5A5A5A5A && small.message[0] == 0x5A &&
              small.message[sizeof small.message - 1] == 0x5A,
          "an error of a wrong size was written to");
  }

  CHECK(kiln_parse(data, size, NULL, &d, &error) == KILN_OK && d != NULL, "kiln_parse");
  CHECK(kiln_directory_header(NULL, &h) == KILN_BAD_ARGUMENT, "header(NULL)");
  CHECK(kiln_directory_header(d, NULL) == KILN_BAD_ARGUMENT, "header(d, NULL)");
  CHECK(kiln_directory_tensor_count(NULL, &count) == KILN_BAD_ARGUMENT && count == 0,
        "tensor_count(NULL)");
  CHECK(kiln_directory_tensor_count(d, NULL) == KILN_BAD_ARGUMENT, "tensor_count(d, NULL)");
  CHECK(kiln_directory_tensor_count(d, &count) == KILN_OK && count == 1, "tensor_count(d)");
  CHECK(kiln_directory_tensor(NULL, 0, &t) == KILN_BAD_ARGUMENT, "tensor(NULL)");
  CHECK(kiln_directory_tensor(d, 0, NULL) == KILN_BAD_ARGUMENT, "tensor(d, 0, NULL)");
  CHECK(kiln_directory_tensor(d, 1, &t) == KILN_BAD_ARGUMENT, "tensor(d, 1): out of range");
  {
    kiln_header small_h;
    kiln_tensor small_t;
    memset(&small_h, 0x5A, sizeof small_h);
    memset(&small_t, 0x5A, sizeof small_t);
    small_h.struct_size = sizeof small_h - 8;
    small_t.struct_size = sizeof small_t + 8;
    CHECK(kiln_directory_header(d, &small_h) == KILN_BAD_ARGUMENT && small_h.flags == 0x5A5A5A5Au &&
              small_h.block_length == 0x5A5A5A5A5A5A5A5Au,
          "a header of a wrong size: refused, untouched");
    CHECK(kiln_directory_tensor(d, 0, &small_t) == KILN_BAD_ARGUMENT &&
              small_t.index == 0x5A5A5A5Au && small_t.quant_outer_index == 0x5A5A5A5Au,
          "a tensor of a wrong size: refused, untouched");
  }
  kiln_directory_free(d);
  kiln_directory_free(NULL);

  CHECK(kiln_stream_feed(NULL, data, size, &used) == KILN_BAD_ARGUMENT && used == 0, "feed(NULL)");
  CHECK(kiln_stream_finish(NULL) == KILN_BAD_ARGUMENT, "finish(NULL)");
  CHECK(kiln_stream_status(NULL) == KILN_BAD_ARGUMENT, "status(NULL)");
  check_argument("kiln_stream_error(NULL)", kiln_stream_error(NULL, &error), &error, "stream");
  CHECK(kiln_stream_header(NULL, &h) == KILN_BAD_ARGUMENT, "stream_header(NULL)");
  CHECK(kiln_stream_directory(NULL, &cd) == KILN_BAD_ARGUMENT && cd == NULL,
        "stream_directory(NULL)");
  CHECK(kiln_stream_consumed(NULL, &bytes) == KILN_BAD_ARGUMENT && bytes == 0, "consumed(NULL)");
  bytes = 99;
  CHECK(kiln_stream_bytes_to_checkpoint(NULL, &bytes) == KILN_BAD_ARGUMENT && bytes == 0,
        "bytes_to_checkpoint(NULL)");
  kiln_stream_free(NULL);

  s = NULL;
  CHECK(kiln_stream_new(NULL, &s, &error) == KILN_OK && s != NULL &&
            error.error_class == KILN_CLASS_NONE,
        "kiln_stream_new(NULL)");
  if (s != NULL) {
    CHECK(kiln_stream_error(s, NULL) == KILN_BAD_ARGUMENT, "stream_error(s, NULL)");
    CHECK(kiln_stream_header(s, NULL) == KILN_BAD_ARGUMENT, "stream_header(s, NULL)");
    CHECK(kiln_stream_header(s, &h) == KILN_NEED_MORE, "stream_header before byte 64");
    CHECK(kiln_stream_directory(s, NULL) == KILN_BAD_ARGUMENT, "stream_directory(s, NULL)");
    CHECK(kiln_stream_consumed(s, NULL) == KILN_BAD_ARGUMENT, "consumed(s, NULL)");
    CHECK(kiln_stream_bytes_to_checkpoint(s, NULL) == KILN_BAD_ARGUMENT,
          "bytes_to_checkpoint(s, NULL)");
    CHECK(kiln_stream_bytes_to_checkpoint(s, &bytes) == KILN_OK && bytes == 64,
          "bytes_to_checkpoint at 0: %llu", (unsigned long long)bytes);
    CHECK(kiln_stream_feed(s, NULL, 3, &used) == KILN_BAD_ARGUMENT && used == 0, "feed(NULL, 3)");
    CHECK(kiln_stream_feed(s, NULL, 1, &used) == KILN_BAD_ARGUMENT && used == 0, "feed(NULL, 1)");
    CHECK(consumed(s) == 0, "a bad feed took bytes");
    CHECK(kiln_stream_feed(s, NULL, 0, &used) == KILN_NEED_MORE && used == 0, "feed(NULL, 0)");
    CHECK(kiln_stream_feed(s, data, 64, &used) == KILN_NEED_MORE && used == 64, "feed 64");
    CHECK(kiln_stream_header(s, &h) == KILN_OK && h.tensor_count == 1 && h.struct_size == sizeof h,
          "stream_header at 64");
    {
      kiln_header small_h;
      memset(&small_h, 0x5A, sizeof small_h);
      small_h.struct_size = 0;
      CHECK(kiln_stream_header(s, &small_h) == KILN_BAD_ARGUMENT && small_h.flags == 0x5A5A5A5Au,
            "stream_header: struct_size 0");
    }
    CHECK(kiln_stream_error(s, &error) == KILN_NEED_MORE && error.error_class == KILN_CLASS_NONE,
          "stream_error while NEED_MORE");
    CHECK(stream_directory(s) == NULL, "a directory while NEED_MORE");
    CHECK(kiln_stream_feed(s, data + 64, size - 64, &used) == KILN_OK && used == size - 64,
          "feed the rest");
    CHECK(kiln_stream_error(s, &error) == KILN_OK && error.error_class == KILN_CLASS_NONE,
          "stream_error when complete");
    CHECK(kiln_stream_finish(s) == KILN_OK, "finish");
    CHECK(kiln_stream_feed(s, &byte, 1, &used) == KILN_BAD_ARGUMENT && used == 0,
          "feed after finish");
    CHECK(kiln_stream_feed(s, NULL, 0, NULL) == KILN_BAD_ARGUMENT, "empty feed after finish");
    CHECK(kiln_stream_status(s) == KILN_OK && stream_directory(s) != NULL,
          "a feed after finish changed the verdict");
    CHECK(consumed(s) == size, "consumed %llu", (unsigned long long)consumed(s));
    CHECK(kiln_stream_bytes_to_checkpoint(s, &bytes) == KILN_OK && bytes == 0,
          "bytes_to_checkpoint once settled: %llu", (unsigned long long)bytes);
    kiln_stream_free(s);
  }

  /* Whole mode: a byte after a complete block is FRAME H8, and the
   * directory is gone; kiln_stream_error says INVALID with the verdict. */
  s = NULL;
  if (kiln_stream_new(NULL, &s, NULL) == KILN_OK) {
    CHECK(kiln_stream_feed(s, data, size, NULL) == KILN_OK && stream_directory(s) != NULL,
          "feed the block");
    CHECK(kiln_stream_feed(s, &byte, 1, NULL) == KILN_INVALID && stream_directory(s) == NULL,
          "a trailing byte");
    CHECK(kiln_stream_error(s, &error) == KILN_INVALID && strcmp(error.rule, "H8") == 0 &&
              error.offset == size,
          "a trailing byte: %s at %llu", error.rule, (unsigned long long)error.offset);
    kiln_stream_free(s);
  } else {
    CHECK(0, "kiln_stream_new(NULL, &s, NULL)");
  }

  /* Prefix mode: the block ends the validation; used says where. */
  kiln_options_init(&options);
  options.mode = KILN_MODE_PREFIX;
  s = NULL;
  if (kiln_stream_new(&options, &s, &error) == KILN_OK) {
    uint8_t *two = malloc(size * 2);
    if (two != NULL) {
      memcpy(two, data, size);
      memcpy(two + size, data, size);
      CHECK(kiln_stream_feed(s, two, size * 2, &used) == KILN_OK && used == size,
            "prefix mode: used %lu", (unsigned long)used);
      CHECK(kiln_validate(two, size * 2, &options, &error) == KILN_OK, "prefix mode: validate");
      CHECK(kiln_validate(two, size * 2, NULL, &error) == KILN_INVALID &&
                strcmp(error.rule, "H8") == 0,
            "whole mode: trailing bytes are H8");
      free(two);
    }
    kiln_stream_free(s);
  } else {
    CHECK(0, "kiln_stream_new in prefix mode: %s", error.message);
  }

  {
    char out[64];
    size_t n = 99;
    static const uint8_t text[] = {'a', '\\', 0x1b, 0xff, 'b'};
    CHECK(kiln_escape(text, sizeof text, out, sizeof out, &n) == KILN_OK && n == 12 &&
              strcmp(out, "a\\\\\\x1b\\xffb") == 0,
          "kiln_escape: \"%s\"", out);
    n = 99;
    CHECK(kiln_escape(text, sizeof text, out, 12, &n) == KILN_BUFFER_TOO_SMALL && n == 12 &&
              out[0] == '\0',
          "kiln_escape: too small a buffer");
    CHECK(kiln_escape(text, sizeof text, out, 13, &n) == KILN_OK && n == 12 &&
              strcmp(out, "a\\\\\\x1b\\xffb") == 0,
          "kiln_escape: a buffer of exactly the length and the NUL");
    CHECK(kiln_escape(NULL, 1, out, sizeof out, &n) == KILN_BAD_ARGUMENT && n == 0,
          "kiln_escape(NULL, 1)");
    CHECK(kiln_escape(text, 1, NULL, 1, &n) == KILN_BAD_ARGUMENT, "kiln_escape(out NULL)");
    CHECK(kiln_escape(text, 1, out, sizeof out, NULL) == KILN_BAD_ARGUMENT,
          "kiln_escape(escaped_length NULL)");
    n = 99;
    CHECK(kiln_escape(text, sizeof text, NULL, 0, &n) == KILN_OK && n == 12,
          "kiln_escape: measure only");
    CHECK(kiln_escape(NULL, 0, out, sizeof out, &n) == KILN_OK && n == 0 && out[0] == '\0',
          "kiln_escape: the empty text");
  }

  {
    const char *summary = "x";
    CHECK(kiln_rule_summary("D7", 2, &summary) == KILN_OK && summary != NULL && summary[0] != '\0',
          "kiln_rule_summary(D7)");
    CHECK(kiln_rule_summary("D7x", 2, &summary) == KILN_OK && summary != NULL,
          "kiln_rule_summary reads length bytes");
    CHECK(kiln_rule_summary("D7", 1, &summary) == KILN_BAD_ARGUMENT && summary == NULL,
          "kiln_rule_summary(D)");
    summary = "x";
    CHECK(kiln_rule_summary("Z9", 2, &summary) == KILN_BAD_ARGUMENT && summary == NULL,
          "kiln_rule_summary(Z9)");
    CHECK(kiln_rule_summary(NULL, 2, &summary) == KILN_BAD_ARGUMENT, "kiln_rule_summary(NULL)");
    CHECK(kiln_rule_summary("D7", 2, NULL) == KILN_BAD_ARGUMENT, "kiln_rule_summary(out NULL)");
  }

  CHECK(kiln_abi_version() == KILN_ABI_VERSION, "abi version");
  CHECK(KILN_VERSION_NUMBER ==
            KILN_VERSION_MAJOR * 10000 + KILN_VERSION_MINOR * 100 + KILN_VERSION_PATCH,
        "KILN_VERSION_NUMBER");
  CHECK(kiln_version_number() == KILN_VERSION_NUMBER, "kiln_version_number %lu",
        (unsigned long)kiln_version_number());
  CHECK(strcmp(kiln_version(), KILN_VERSION_STRING) == 0, "kiln_version \"%s\", header \"%s\"",
        kiln_version(), KILN_VERSION_STRING);
  CHECK(strcmp(kiln_error_class_name(KILN_CLASS_UTF8), "UTF8") == 0 &&
            strcmp(kiln_error_class_name(99), "") == 0 &&
            strcmp(kiln_error_class_name(KILN_CLASS_ARGUMENT), "ARGUMENT") == 0,
        "kiln_error_class_name");
  free(data);
}

/* The edges a caller meets first: one byte of input (not the same as none),
 * a verdict with no kiln_error to fill, and kiln_escape of one byte and
 * into a buffer of one. */
static void short_inputs(void) {
  static const uint8_t k = 'K';
  static const uint8_t esc = 0x1b;
  kiln_error error;
  kiln_directory *d = NULL;
  kiln_stream *s = NULL;
  char out[16];
  size_t n = 99;
  error.struct_size = sizeof error;
  CHECK(kiln_validate(&k, 1, NULL, &error) == KILN_INVALID && strcmp(error.rule, "H1") == 0 &&
            strstr(error.message, "holds 1 bytes (4b)") != NULL,
        "validate one byte: %s", error.message);
  CHECK(kiln_parse(&k, 1, NULL, &d, &error) == KILN_INVALID && d == NULL &&
            strstr(error.message, "holds 1 bytes (4b)") != NULL,
        "parse one byte: %s", error.message);
  CHECK(kiln_validate(&k, 1, NULL, NULL) == KILN_INVALID, "validate, error NULL");
  /* A call that succeeds leaves the caller's error empty, every field. */
  memset(&error, 0x5A, sizeof error);
  error.struct_size = sizeof error;
  if (kiln_stream_new(NULL, &s, &error) == KILN_OK) kiln_stream_free(s);
  s = NULL;
  CHECK(error.error_class == KILN_CLASS_NONE && error.rule[0] == '\0' &&
            error.tensor == KILN_NO_TENSOR && error.offset == 0 && error.message_truncated == 0 &&
            error.reserved == 0 && error.message_length == 0 && error.message[0] == '\0',
        "a cleared error: class %d, offset %llu, truncated %u, reserved %u", error.error_class,
        (unsigned long long)error.offset, (unsigned)error.message_truncated,
        (unsigned)error.reserved);
  CHECK(kiln_parse(&k, 1, NULL, &d, NULL) == KILN_INVALID && d == NULL, "parse, error NULL");
  if (kiln_stream_new(NULL, &s, NULL) == KILN_OK) {
    CHECK(kiln_stream_feed(s, &k, 1, NULL) == KILN_NEED_MORE, "stream one byte");
    CHECK(kiln_stream_finish(s) == KILN_INVALID && kiln_stream_error(s, &error) == KILN_INVALID &&
              strstr(error.message, "holds 1 bytes (4b)") != NULL,
          "stream one byte: %s", error.message);
    kiln_stream_free(s);
  } else {
    CHECK(0, "kiln_stream_new");
  }
  CHECK(kiln_escape(&k, 1, out, sizeof out, &n) == KILN_OK && n == 1 && strcmp(out, "K") == 0,
        "escape one byte: \"%s\" (%lu)", out, (unsigned long)n);
  CHECK(kiln_escape(&esc, 1, out, sizeof out, &n) == KILN_OK && n == 4 && strcmp(out, "\\x1b") == 0,
        "escape ESC: \"%s\" (%lu)", out, (unsigned long)n);
  memset(out, 'Z', sizeof out);
  CHECK(kiln_escape(&k, 1, out, 1, &n) == KILN_BUFFER_TOO_SMALL && n == 1 && out[0] == '\0',
        "escape into one byte: %d, %lu", out[0], (unsigned long)n);
}

int main(int argc, char **argv) {
  char path[4096];
  char line[4096];
  FILE *manifest;
  expected e;
  int cases = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: capi_test GOLDEN_DIR\n");
    return 2;
  }
  snprintf(path, sizeof path, "%s/manifest.tsv", argv[1]);
  manifest = fopen(path, "r");
  if (manifest == NULL) {
    fprintf(stderr, "capi_test: cannot open %s\n", path);
    return 2;
  }
  while (fgets(line, sizeof line, manifest) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    if (!parse_row(line, &e)) continue;
    run_case(argv[1], &e);
    ++cases;
  }
  fclose(manifest);
  CHECK(cases == 165, "%d golden cases read, want 165", cases);
  bad_arguments(argv[1]);
  short_inputs();
  printf("capi_test: %d cases, %d checks, %d failures\n", cases, checks, failures);
  return failures == 0 ? 0 : 1;
}
