/* A C consumer of the installed C ABI: validates the file named on the
 * command line, whole (kiln_validate) and as a stream (kiln_stream_*), and
 * prints "ok (...)" or the rejection; exit 1 when invalid, 2 when the two
 * disagree or a call fails. Built against the installed library by
 * tests/install_c/check.sh (ctest capi_install_links_static_and_shared:
 * the shared library, the archive alone, pkg-config --static) and by
 * scripts/test.sh (pkg-config --cflags --libs kiln). */
#include <stdio.h>
#include <string.h>

#include <kiln/kiln_c.h>

#if KILN_VERSION_NUMBER != \
    KILN_VERSION_MAJOR * 10000 + KILN_VERSION_MINOR * 100 + KILN_VERSION_PATCH
#error "KILN_VERSION_NUMBER"
#endif

int main(int argc, char **argv) {
  static uint8_t bytes[1 << 20];
  kiln_error error;
  kiln_error streamed;
  kiln_stream *stream = NULL;
  kiln_status status;
  kiln_status stream_status;
  size_t size;
  FILE *f;
  if (argc != 2 || (f = fopen(argv[1], "rb")) == NULL) return 2;
  size = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  if (kiln_version_number() != KILN_VERSION_NUMBER || kiln_abi_version() != KILN_ABI_VERSION) {
    printf("header %s (ABI %d), library %s (ABI %u)\n", KILN_VERSION_STRING, KILN_ABI_VERSION,
           kiln_version(), (unsigned)kiln_abi_version());
    return 2;
  }

  error.struct_size = sizeof error;
  status = kiln_validate(bytes, size, NULL, &error);

  streamed.struct_size = sizeof streamed;
  if (kiln_stream_new(NULL, &stream, &streamed) != KILN_OK) {
    printf("kiln_stream_new: %s\n", streamed.message);
    return 2;
  }
  (void)kiln_stream_feed(stream, bytes, size, NULL);
  (void)kiln_stream_finish(stream);
  stream_status = kiln_stream_error(stream, &streamed);
  kiln_stream_free(stream);
  if (stream_status != status ||
      (status == KILN_INVALID &&
       (strcmp(streamed.rule, error.rule) != 0 || streamed.offset != error.offset))) {
    printf("the stream (%d %s) and kiln_validate (%d %s) disagree\n", (int)stream_status,
           streamed.rule, (int)status, error.rule);
    return 2;
  }

  if (status != KILN_OK) {
    printf("%s %s at byte %llu: %s\n", kiln_error_class_name(error.error_class), error.rule,
           (unsigned long long)error.offset, error.message);
    return status == KILN_INVALID ? 1 : 2;
  }
  printf("ok (kiln %s, C ABI %u)\n", kiln_version(), (unsigned)kiln_abi_version());
  return 0;
}
