// Reads each GGUF file named on the command line with ggml's gguf.cpp as
// llama.cpp does (gguf_init_from_file with no_alloc and no ggml context) and
// prints one line per file:
//   FILE<TAB>refused
//   FILE<TAB>ok<TAB>DATA_OFFSET<TAB>N
// then N lines
//   <TAB>NAME_HEX<TAB>TYPE<TAB>NE0,NE1,NE2,NE3<TAB>OFFSET<TAB>NBYTES
// (the name in hex: it is untrusted bytes). gguf.cpp's own reasons go to
// stderr. Built against ggml's sources, outside this repository: see
// tests/loaders/README.md.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "gguf.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    gguf_init_params params = {/*no_alloc=*/true, /*ctx=*/nullptr};
    gguf_context* ctx = gguf_init_from_file(argv[i], params);
    if (ctx == nullptr) {
      printf("%s\trefused\n", argv[i]);
      continue;
    }
    const int64_t n = gguf_get_n_tensors(ctx);
    printf("%s\tok\t%zu\t%" PRId64 "\n", argv[i], gguf_get_data_offset(ctx), n);
    for (int64_t t = 0; t < n; ++t) {
      const char* name = gguf_get_tensor_name(ctx, t);
      const int64_t* ne = gguf_get_tensor_ne(ctx, t);
      printf("\t");
      for (size_t k = 0; k < strlen(name); ++k) printf("%02x", static_cast<unsigned char>(name[k]));
      printf("\t%d\t%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "\t%zu\t%zu\n",
             static_cast<int>(gguf_get_tensor_type(ctx, t)), ne[0], ne[1], ne[2], ne[3],
             gguf_get_tensor_offset(ctx, t), gguf_get_tensor_size(ctx, t));
    }
    gguf_free(ctx);
  }
  return 0;
}
