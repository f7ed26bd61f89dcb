// libFuzzer target: random-access validation through the C ABI
// (kiln_ranges_*, kiln/kiln_c.h), linked from libkiln_c.a, against
// kiln_validate on the same bytes. The first byte of the input is a control
// byte (bit 0: prefix mode; bits 1..3 pick the range options: the defaults,
// merge_gap 0, or small max_range and merge_gap so the payload is read in
// many merged pieces; bit 4: hand the bytes over with kiln_ranges_provide
// rather than the handle's buffer); the rest is the file. It checks, and
// traps on a break:
// - the verdict (status, class, rule, offset, tensor, message) is
//   kiln_validate's on the whole buffer;
// - every wanted range is 1..max_range bytes (the header: up to 64), inside
//   the file, after the previous one; the bytes read equal their sum and
//   never exceed the file's size;
// - with merge_gap 0, a valid block's tensors are never read;
// - on KILN_OK the directory is there and has kiln_parse's tensor count.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln_c.h"

namespace {

[[noreturn]] void Broken(const char* what, const std::string& why) {
  std::fprintf(stderr, "fuzz_ranges: BROKEN (%s): %s\n", what, why.c_str());
  __builtin_trap();
}

std::string Show(kiln_status status, const kiln_error& e) {
  std::string s = "status " + std::to_string(static_cast<int>(status));
  if (status != KILN_OK) {
    s += std::string(" ") + kiln_error_class_name(e.error_class) + " " + e.rule + " at " +
         std::to_string(e.offset) + " tensor " + std::to_string(e.tensor) + ": " + e.message;
  }
  return s;
}

bool SameVerdict(kiln_status a, const kiln_error& ea, kiln_status b, const kiln_error& eb) {
  if (a != b) return false;
  if (a != KILN_INVALID) return true;
  return ea.error_class == eb.error_class && std::strcmp(ea.rule, eb.rule) == 0 &&
         ea.offset == eb.offset && ea.tensor == eb.tensor &&
         ea.message_length == eb.message_length && std::strcmp(ea.message, eb.message) == 0;
}

template <typename T>
T Sized() {
  T v{};
  v.struct_size = sizeof(T);
  return v;
}

struct Choice {
  std::uint64_t merge_gap;
  std::uint64_t max_range;
};
constexpr Choice kChoices[8] = {
    {65536, 1048576}, {0, 1048576}, {0, 1}, {1, 2}, {7, 16}, {64, 64}, {0, 3}, {3, 1000},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* input, std::size_t input_size) {
  if (input_size == 0) return 0;
  const std::uint8_t control = input[0];
  const std::uint8_t* data = input_size > 1 ? input + 1 : nullptr;
  const std::size_t size = input_size - 1;
  kiln_options options;
  if (kiln_options_init(&options) != KILN_OK) Broken("options", "init");
  options.mode = (control & 1) != 0 ? KILN_MODE_PREFIX : KILN_MODE_WHOLE;
  kiln_range_options ro;
  if (kiln_range_options_init(&ro) != KILN_OK) Broken("options", "range init");
  const Choice& choice = kChoices[(control >> 1) & 7];
  ro.merge_gap = choice.merge_gap;
  ro.max_range = choice.max_range;
  const bool by_provide = (control & 0x10) != 0;

  kiln_error want = Sized<kiln_error>();
  const kiln_status want_status = kiln_validate(data, size, &options, &want);

  kiln_error got = Sized<kiln_error>();
  kiln_ranges* r = nullptr;
  if (kiln_ranges_new(size, &options, &ro, &r, &got) != KILN_OK) Broken("new", Show(KILN_OK, got));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
  std::uint64_t at = 0, end = 0, sum = 0;
  std::size_t n = 0;
  kiln_status status;
  while ((status = kiln_ranges_next(r, &at, &n)) == KILN_NEED_MORE) {
    const std::uint64_t cap = at == 0 ? 64 : ro.max_range;
    if (n == 0 || n > cap || at < end || at > size || n > size - at) {
      Broken("range", std::to_string(at) + "+" + std::to_string(n) + " after " +
                          std::to_string(end) + " in " + std::to_string(size));
    }
    seen.emplace_back(at, n);
    end = at + n;
    sum += n;
    if (by_provide) {
      (void)kiln_ranges_provide(r, data + at, n);
    } else {
      std::uint8_t* buf = nullptr;
      std::size_t bn = 0;
      if (kiln_ranges_buffer(r, &buf, &bn) != KILN_NEED_MORE || buf == nullptr || bn != n) {
        Broken("buffer", "not the wanted length");
      }
      std::memcpy(buf, data + at, n);
      (void)kiln_ranges_filled(r);
    }
  }
  if (kiln_ranges_error(r, &got) != status) Broken("error", "status differs");
  if (!SameVerdict(status, got, want_status, want)) {
    Broken("verdict", Show(status, got) + " vs kiln_validate " + Show(want_status, want));
  }
  std::uint64_t reads = 0, bytes = 0;
  if (kiln_ranges_read(r, &reads, &bytes) != KILN_OK || reads != seen.size() || bytes != sum ||
      bytes > size) {
    Broken("read", "counts");
  }
  const kiln_directory* d = nullptr;
  if ((kiln_ranges_directory(r, &d) == KILN_OK) != (status == KILN_OK)) Broken("dir", "status");
  if (status == KILN_OK) {
    kiln_directory* parsed = nullptr;
    kiln_error pe = Sized<kiln_error>();
    if (kiln_parse(data, size, &options, &parsed, &pe) != KILN_OK) Broken("dir", "parse");
    std::uint32_t count = 0, parsed_count = 0;
    (void)kiln_directory_tensor_count(d, &count);
    (void)kiln_directory_tensor_count(parsed, &parsed_count);
    if (count != parsed_count) Broken("dir", "tensor count");
    for (std::uint32_t i = 0; ro.merge_gap == 0 && i < count; ++i) {
      kiln_tensor t = Sized<kiln_tensor>();
      if (kiln_directory_tensor(d, i, &t) != KILN_OK || t.payload != nullptr) {
        Broken("dir", "tensor");
      }
      if (t.byte_length == 0) continue;
      for (const auto& [lo, len] : seen) {
        if (lo < t.block_offset + t.byte_length && t.block_offset < lo + len) {
          Broken("covered", "tensor " + std::to_string(i) + " was read");
        }
      }
    }
    kiln_directory_free(parsed);
  }
  kiln_ranges_free(r);
  return 0;
}
