/* kiln_c_validate FILE...: `kiln validate`'s verdict lines, through the C
 * ABI only (kiln/kiln_c.h). For each FILE, one line on standard output:
 *
 *     FILE: ok
 *     FILE: CLASS RULE at byte N (tensor I): message
 *
 * FILE escaped by kiln_escape. A regular file is read whole and validated
 * with kiln_validate; "-" is standard input, validated as a stream.
 * Exit status: 0 every file valid, 1 some file invalid, 2 usage or I/O. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln_c.h"

/* The file name, escaped; static storage, valid until the next call. */
static const char *escaped_name(const char *name) {
  static char buffer[4096];
  size_t n = 0;
  if (kiln_escape((const uint8_t *)name, strlen(name), buffer, sizeof buffer, &n) != KILN_OK) {
    return "(a file name too long to print)";
  }
  return buffer;
}

static void print_verdict(const char *name, kiln_status status, const kiln_error *error) {
  if (status == KILN_OK) {
    printf("%s: ok\n", escaped_name(name));
    return;
  }
  printf("%s: %s %s at byte %llu", escaped_name(name), kiln_error_class_name(error->error_class),
         error->rule, (unsigned long long)error->offset);
  if (error->tensor != KILN_NO_TENSOR) printf(" (tensor %lu)", (unsigned long)error->tensor);
  printf(": %s\n", error->message);
}

/* Reads all of f into *data (malloc'ed) and *size; 0 on success, else errno. */
static int read_all(FILE *f, uint8_t **data, size_t *size) {
  size_t capacity = 1 << 16;
  size_t n = 0;
  uint8_t *buffer = malloc(capacity);
  if (buffer == NULL) return ENOMEM;
  for (;;) {
    size_t got;
    if (n == capacity) {
      uint8_t *bigger;
      if (capacity > ((size_t)-1) / 2) {
        free(buffer);
        return EFBIG;
      }
      bigger = realloc(buffer, capacity * 2);
      if (bigger == NULL) {
        free(buffer);
        return ENOMEM;
      }
      buffer = bigger;
      capacity *= 2;
    }
    got = fread(buffer + n, 1, capacity - n, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    free(buffer);
    return EIO;
  }
  *data = buffer;
  *size = n;
  return 0;
}

/* 0 valid, 1 invalid, 2 I/O or memory. */
static int validate_stream(FILE *f, const char *name) {
  uint8_t chunk[1 << 16];
  kiln_error error;
  kiln_status status = KILN_NEED_MORE;
  kiln_stream *stream = NULL;
  error.struct_size = sizeof error;
  if (kiln_stream_new(NULL, &stream, &error) != KILN_OK) {
    fprintf(stderr, "kiln_c_validate: %s\n", error.message);
    return 2;
  }
  while (status == KILN_NEED_MORE) {
    const size_t got = fread(chunk, 1, sizeof chunk, f);
    if (got == 0) break;
    status = kiln_stream_feed(stream, chunk, got, NULL);
  }
  if (ferror(f)) {
    fprintf(stderr, "kiln_c_validate: %s: cannot read\n", escaped_name(name));
    kiln_stream_free(stream);
    return 2;
  }
  (void)kiln_stream_finish(stream);
  status = kiln_stream_error(stream, &error);
  if (status != KILN_OK && status != KILN_INVALID) {
    fprintf(stderr, "kiln_c_validate: %s: %s\n", escaped_name(name), error.message);
    kiln_stream_free(stream);
    return 2;
  }
  print_verdict(name, status, &error);
  kiln_stream_free(stream);
  return status == KILN_OK ? 0 : 1;
}

static int validate_file(const char *name) {
  uint8_t *data = NULL;
  size_t size = 0;
  kiln_error error;
  kiln_status status;
  int failure;
  FILE *f = fopen(name, "rb");
  if (f == NULL) {
    fprintf(stderr, "kiln_c_validate: %s: %s\n", escaped_name(name), strerror(errno));
    return 2;
  }
  failure = read_all(f, &data, &size);
  fclose(f);
  if (failure != 0) {
    fprintf(stderr, "kiln_c_validate: %s: %s\n", escaped_name(name), strerror(failure));
    return 2;
  }
  error.struct_size = sizeof error;
  status = kiln_validate(data, size, NULL, &error);
  free(data);
  if (status != KILN_OK && status != KILN_INVALID) {
    fprintf(stderr, "kiln_c_validate: %s: %s\n", escaped_name(name), error.message);
    return 2;
  }
  print_verdict(name, status, &error);
  return status == KILN_OK ? 0 : 1;
}

int main(int argc, char **argv) {
  int worst = 0;
  int i;
  if (argc < 2) {
    fprintf(stderr, "usage: kiln_c_validate FILE... (- for standard input)\n");
    return 2;
  }
  for (i = 1; i < argc; ++i) {
    const int r =
        strcmp(argv[i], "-") == 0 ? validate_stream(stdin, argv[i]) : validate_file(argv[i]);
    if (r > worst) worst = r;
  }
  if (fflush(stdout) != 0) return 2;
  return worst;
}
