/* A C consumer of the installed C ABI, built by scripts/test.sh with
 * `pkg-config --cflags --libs kiln`: validates the file named on the
 * command line and prints "ok" or the rejection; exit 1 when invalid. */
#include <stdio.h>
#include <stdlib.h>

#include <kiln/kiln_c.h>

int main(int argc, char **argv) {
  static uint8_t bytes[1 << 20];
  kiln_error error;
  size_t size;
  FILE *f;
  if (argc != 2 || (f = fopen(argv[1], "rb")) == NULL) return 2;
  size = fread(bytes, 1, sizeof bytes, f);
  fclose(f);

  if (kiln_validate(bytes, size, NULL, &error) != KILN_OK) {
    printf("%s %s at byte %llu: %s\n", kiln_error_class_name(error.error_class), error.rule,
           (unsigned long long)error.offset, error.message);
    return 1;
  }
  printf("ok (kiln %s, C ABI %u)\n", kiln_version(), (unsigned)kiln_abi_version());
  return 0;
}
