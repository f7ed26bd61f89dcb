// libFuzzer target: kiln::StreamValidator against kiln::Parse. The first
// byte of the input picks the mode and seeds the chunking (pieces of 1 to
// 256 bytes, with runs of single bytes); the rest is the stream. Any break
// of the verdict contract (kiln/stream.h, docs/spec.md section 5.1) is
// printed and traps, and so does a chunked run that differs from feeding
// the stream in one piece.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "kiln/stream.h"
#include "stream_contract.h"

namespace {

[[noreturn]] void Broken(const char* what, kiln::Mode mode, const std::string& why) {
  std::fprintf(stderr, "fuzz_stream: CONTRACT BROKEN (%s, %s mode): %s\n", what,
               mode == kiln::Mode::kWhole ? "whole" : "prefix", why.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  const kiln_fuzz::Bytes t(data + 1, size - 1);
  const kiln::Mode mode = (control & 1) != 0 ? kiln::Mode::kPrefix : kiln::Mode::kWhole;
  std::uint32_t state = control | 0x100u;
  auto chunker = [&state](std::size_t left, const kiln::StreamValidator&) -> std::size_t {
    // xorshift32 with no bit shifted out of the word (the sanitize build
    // traps on a wrap and on a shift that drops bits): each left shift keeps
    // only the bits that stay inside 32, which is what a plain shift keeps.
    state ^= (state & 0x0007FFFFu) << 13;
    state ^= state >> 17;
    state ^= (state & 0x07FFFFFFu) << 5;
    const std::uint32_t r = state >> 8;
    return (r & 3) == 0 ? 1 : std::min<std::size_t>(left, 1 + (r >> 2) % 256);
  };
  kiln::StreamValidator chunked({.mode = mode, .limits = {}});
  const kiln_fuzz::StreamRun run = kiln_fuzz::RunStream(t, mode, chunker, chunked);
  if (std::string why = kiln_fuzz::ContractBreak(t, mode, run); !why.empty()) {
    Broken("chunked", mode, why);
  }
  kiln::StreamValidator whole({.mode = mode, .limits = {}});
  const kiln_fuzz::StreamRun one = kiln_fuzz::RunStream(
      t, mode, [](std::size_t left, const kiln::StreamValidator&) { return left; }, whole);
  if (one.status != run.status || one.consumed != run.consumed ||
      kiln_fuzz::Show(one.error) != kiln_fuzz::Show(run.error)) {
    Broken("one piece", mode, kiln_fuzz::Show(one.error) + " vs " + kiln_fuzz::Show(run.error));
  }
  return 0;
}
