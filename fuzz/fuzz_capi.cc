// libFuzzer target: the C ABI (kiln/kiln_c.h) as a C program uses it,
// linked from libkiln_c.a. The first byte of the input picks the mode and
// seeds the chunking (pieces of 1 to 256 bytes, with runs of single bytes);
// the rest is the block. It checks, and traps on a break:
// - kiln_validate and kiln_parse give the same verdict, and a directory
//   exactly when it is KILN_OK; every tensor's views lie inside the buffer
//   (each byte is read, for ASan) and an index past the count is refused;
// - the stream, fed in the fuzzer's chunks, gives the verdict of feeding it
//   in one piece, and the whole verdict wherever the contract says so
//   (kiln/stream.h): a stream of exactly the declared block, or more bytes
//   (whole mode: the verdict on the block, else FRAME H8 at its end);
//   its directory agrees with kiln_parse's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "kiln/kiln_c.h"

namespace {

[[noreturn]] void Broken(const char* what, const std::string& why) {
  std::fprintf(stderr, "fuzz_capi: BROKEN (%s): %s\n", what, why.c_str());
  __builtin_trap();
}

std::string Show(kiln_status status, const kiln_error& e) {
  std::string s = "status " + std::to_string(static_cast<int>(status));
  if (status == KILN_INVALID) {
    s += std::string(" ") + kiln_error_class_name(e.error_class) + " " + e.rule + " at " +
         std::to_string(e.offset) + " tensor " + std::to_string(e.tensor) + ": " + e.message;
  }
  return s;
}

bool SameVerdict(kiln_status a, const kiln_error& ea, kiln_status b, const kiln_error& eb,
                 bool with_message) {
  if (a != b) return false;
  if (a != KILN_INVALID) return true;
  return ea.error_class == eb.error_class && std::strcmp(ea.rule, eb.rule) == 0 &&
         ea.offset == eb.offset && ea.tensor == eb.tensor &&
         (!with_message ||
          (ea.message_length == eb.message_length && std::strcmp(ea.message, eb.message) == 0));
}

// Reads every byte of a view (ASan reports one outside its allocation).
volatile std::uint8_t g_sink;
void Touch(const std::uint8_t* p, std::size_t n) {
  std::uint8_t x = 0;
  for (std::size_t i = 0; i < n; ++i) x ^= p[i];
  g_sink = x;
}

// A struct of the C ABI with struct_size set, as a caller passes it.
template <typename T>
T Sized() {
  T v{};
  v.struct_size = sizeof(T);
  return v;
}

void Walk(const std::uint8_t* data, std::size_t size, const kiln_directory* d,
          const kiln_directory* streamed) {
  kiln_header h = Sized<kiln_header>();
  if (kiln_directory_header(d, &h) != KILN_OK) Broken("walk", "no header");
  if (h.block_length > size) Broken("walk", "block_length past the buffer");
  std::uint32_t count = 0;
  if (kiln_directory_tensor_count(d, &count) != KILN_OK) Broken("walk", "no tensor count");
  if (count != h.tensor_count) Broken("walk", "tensor_count");
  for (std::uint32_t i = 0; i < count; ++i) {
    kiln_tensor t = Sized<kiln_tensor>();
    if (kiln_directory_tensor(d, i, &t) != KILN_OK) Broken("walk", "tensor refused");
    if (t.index != i || t.rank > KILN_MAX_RANK || t.dtype_name == nullptr) {
      Broken("walk", "tensor fields");
    }
    if (t.byte_length > h.payload_bytes || t.byte_offset > h.payload_bytes - t.byte_length ||
        t.block_offset != h.payload_base + t.byte_offset) {
      Broken("walk", "payload range");
    }
    if (t.byte_length > 0 && t.payload != data + t.block_offset) Broken("walk", "payload view");
    if (t.byte_length > 0) Touch(t.payload, static_cast<std::size_t>(t.byte_length));
    if (t.name_length > 0) Touch(t.name, t.name_length);
    if (t.layout_length > 0) Touch(t.layout, t.layout_length);
    if (streamed != nullptr) {
      kiln_tensor s = Sized<kiln_tensor>();
      if (kiln_directory_tensor(streamed, i, &s) != KILN_OK || s.payload != nullptr ||
          s.dtype != t.dtype || s.rank != t.rank ||
          std::memcmp(s.shape, t.shape, sizeof t.shape) != 0 || s.byte_offset != t.byte_offset ||
          s.byte_length != t.byte_length || s.name_length != t.name_length ||
          (s.name_length > 0 && std::memcmp(s.name, t.name, s.name_length) != 0) ||
          s.layout_length != t.layout_length ||
          (s.layout_length > 0 && std::memcmp(s.layout, t.layout, s.layout_length) != 0) ||
          s.quant_scheme != t.quant_scheme || s.quant_scale_index != t.quant_scale_index) {
        Broken("walk", "the streamed tensor " + std::to_string(i) + " differs");
      }
    }
  }
  kiln_tensor t = Sized<kiln_tensor>();
  if (kiln_directory_tensor(d, count, &t) != KILN_BAD_ARGUMENT) Broken("walk", "index == count");
}

struct StreamResult {
  kiln_status status = KILN_NEED_MORE;
  kiln_error error = Sized<kiln_error>();
  std::uint64_t consumed = 0;
  bool has_header = false;
  kiln_header header = Sized<kiln_header>();
};

// Feeds data in the pieces next(left) asks for, until a verdict (in whole
// mode: past a complete block too, where a byte more is FRAME H8), then
// finishes. *stream is left for the caller to free.
template <typename Next>
StreamResult RunStream(const std::uint8_t* data, std::size_t size, const kiln_options& options,
                       Next next, kiln_stream** stream) {
  StreamResult r;
  kiln_stream* s = nullptr;
  if (kiln_stream_new(&options, &s, &r.error) != KILN_OK || s == nullptr) {
    Broken("stream", std::string("kiln_stream_new failed: ") + r.error.message);
  }
  *stream = s;
  std::size_t at = 0;
  kiln_status status = KILN_NEED_MORE;
  while (at < size) {
    const std::size_t left = size - at;
    std::size_t n = next(left);
    if (n == 0 || n > left) n = left;
    std::size_t used = 0;
    status = kiln_stream_feed(s, data + at, n, &used);
    if (used > n) Broken("stream", "used exceeds the chunk");
    at += n;
    if (status == KILN_INVALID) break;
    if (status == KILN_OK && options.mode == KILN_MODE_PREFIX) break;
  }
  r.status = kiln_stream_finish(s);
  if (r.status != KILN_OK && r.status != KILN_INVALID) Broken("stream", "finish: no verdict");
  if (kiln_stream_finish(s) != r.status || kiln_stream_status(s) != r.status) {
    Broken("stream", "finish is not idempotent");
  }
  std::size_t used = 1;
  if (kiln_stream_feed(s, data, size, &used) != KILN_BAD_ARGUMENT || used != 0) {
    Broken("stream", "a feed after finish was taken");
  }
  if (kiln_stream_error(s, &r.error) != r.status) Broken("stream", "kiln_stream_error");
  if (kiln_stream_consumed(s, &r.consumed) != KILN_OK) Broken("stream", "kiln_stream_consumed");
  if (r.consumed > size) Broken("stream", "consumed more than fed");
  r.has_header = kiln_stream_header(s, &r.header) == KILN_OK;
  const kiln_directory* directory = nullptr;
  if (kiln_stream_directory(s, &directory) != r.status ||
      (r.status == KILN_OK) != (directory != nullptr)) {
    Broken("stream", "directory and status disagree");
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* input, std::size_t input_size) {
  if (input_size == 0) return 0;
  const std::uint8_t control = input[0];
  const std::uint8_t* data = input_size > 1 ? input + 1 : nullptr;
  const std::size_t size = input_size - 1;
  kiln_options options;
  if (kiln_options_init(&options) != KILN_OK) Broken("options", "init");
  options.mode = (control & 1) != 0 ? KILN_MODE_PREFIX : KILN_MODE_WHOLE;

  // Whole buffer: kiln_validate and kiln_parse agree.
  kiln_error validated = Sized<kiln_error>();
  kiln_error parsed = Sized<kiln_error>();
  const kiln_status v = kiln_validate(data, size, &options, &validated);
  kiln_directory* d = nullptr;
  const kiln_status p = kiln_parse(data, size, &options, &d, &parsed);
  if (!SameVerdict(v, validated, p, parsed, true)) {
    Broken("whole", Show(v, validated) + " vs " + Show(p, parsed));
  }
  if ((p == KILN_OK) != (d != nullptr) || (p != KILN_OK && p != KILN_INVALID)) {
    Broken("whole", "kiln_parse: " + Show(p, parsed));
  }

  // The stream in the fuzzer's pieces, and in one piece.
  std::uint32_t state = control | 0x100u;
  auto chunker = [&state](std::size_t left) -> std::size_t {
    // xorshift32: no wrapping arithmetic (the fuzz build traps on it).
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    const std::uint32_t r = state >> 8;
    return (r & 3) == 0 ? 1 : std::min<std::size_t>(left, 1 + (r >> 2) % 256);
  };
  kiln_stream* chunked_stream = nullptr;
  kiln_stream* one_stream = nullptr;
  const StreamResult chunked = RunStream(data, size, options, chunker, &chunked_stream);
  const StreamResult one = RunStream(
      data, size, options, [](std::size_t left) { return left; }, &one_stream);
  if (!SameVerdict(chunked.status, chunked.error, one.status, one.error, true) ||
      chunked.consumed != one.consumed) {
    Broken("stream", "chunked " + Show(chunked.status, chunked.error) + " vs one piece " +
                         Show(one.status, one.error));
  }

  // The stream against the whole verdict, where the contract ties them.
  if (chunked.has_header && chunked.header.block_length <= size) {
    const std::uint64_t length = chunked.header.block_length;
    if (length == size || options.mode == KILN_MODE_PREFIX) {
      if (!SameVerdict(chunked.status, chunked.error, p, parsed, true)) {
        Broken("stream vs whole",
               "stream " + Show(chunked.status, chunked.error) + ", whole " + Show(p, parsed));
      }
    } else {
      // Whole mode, trailing bytes: the verdict on the block itself, else
      // FRAME H8 at its end.
      kiln_error block_error = Sized<kiln_error>();
      const kiln_status b =
          kiln_validate(data, static_cast<std::size_t>(length), &options, &block_error);
      if (b == KILN_INVALID) {
        if (!SameVerdict(chunked.status, chunked.error, b, block_error, true)) {
          Broken("stream vs block", "stream " + Show(chunked.status, chunked.error) + ", block " +
                                        Show(b, block_error));
        }
      } else if (chunked.status != KILN_INVALID || std::strcmp(chunked.error.rule, "H8") != 0 ||
                 chunked.error.offset != length || p != KILN_INVALID ||
                 std::strcmp(parsed.rule, "H8") != 0 || parsed.offset != length) {
        Broken("trailing bytes",
               "stream " + Show(chunked.status, chunked.error) + ", whole " + Show(p, parsed));
      }
    }
  } else if (chunked.status == KILN_OK) {
    Broken("stream", "complete without its block");
  } else if (!chunked.has_header && size >= 64 && std::strcmp(chunked.error.rule, "H9") != 0) {
    // A header rule broke before block_length was known: decided on the
    // first 64 bytes, by both. (H9 follows H8 in the rule order: a whole
    // buffer with trailing bytes is H8 there, while the stream stops at the
    // block's end.)
    if (!SameVerdict(chunked.status, chunked.error, p, parsed, true)) {
      Broken("header",
             "stream " + Show(chunked.status, chunked.error) + ", whole " + Show(p, parsed));
    }
  }
  if (chunked.status == KILN_OK && p != KILN_OK) Broken("stream", "OK where the whole is not");

  if (d != nullptr) {
    const kiln_directory* streamed = nullptr;
    if (chunked.status == KILN_OK && kiln_stream_directory(chunked_stream, &streamed) != KILN_OK) {
      Broken("stream", "no directory");
    }
    Walk(data, size, d, streamed);
  }
  kiln_stream_free(chunked_stream);
  kiln_stream_free(one_stream);
  kiln_directory_free(d);
  return 0;
}
