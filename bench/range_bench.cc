// RangeValidator (kiln/random_access.h) on blocks too large to hold: only
// the header and directory are real bytes; the reader synthesises the
// payload as zeros, as a sparse file reads. Counters: the requests made and
// the bytes they asked for, beside the file's size.
//
// - BM_RangeValidateSparse/1500: 1,500 named bf16 tensors shaped like a
//   transformer's (150 layers of 4 projections of 4096 x 1536, 3 of
//   1536 x 2048 and 3 norms of 4096), 9.9 GiB, canonical layout.
// - BM_RangeValidateSmallGaps/N: N u8[1] tensors, each followed by a
//   63-byte alignment gap (the worst case for the request count).
// - BM_RangeValidateHostileGap: one tensor and a 1 GiB zero gap (P2 reads
//   all of it, in 1 MiB requests).
// Arg 1 of each: merge_gap in bytes (65536 the default; 0 reads no byte a
// tensor covers).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "kiln/random_access.h"

namespace kiln::bench {
namespace {

struct SparseBlock {
  std::vector<std::uint8_t> head;  // header and directory region
  std::uint64_t size = 0;          // the whole block
};

void Store(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

struct Spec {
  std::string name;
  std::uint16_t dtype;  // 2 u8, 16 bf16
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes;
};

// A canonical block: payloads in descriptor order, each at the next multiple
// of 64 after the previous one's end.
SparseBlock Encode(const std::vector<Spec>& tensors, bool named) {
  std::string heap;
  if (named) {
    for (const Spec& t : tensors) heap += t.name;
  }
  const std::uint64_t n = tensors.size();
  const std::uint64_t dir = 128 * n + heap.size();
  const std::uint64_t base = (64 + dir + 63) / 64 * 64;
  SparseBlock block;
  block.head.assign(base, 0);
  std::vector<std::uint8_t>& b = block.head;
  std::memcpy(b.data(), "KLNT\x02", 5);
  b[5] = named ? 0x03 : 0x02;
  Store(b, 8, n, 4);
  Store(b, 12, heap.size(), 4);
  Store(b, 24, dir, 8);
  std::uint64_t cursor = 0, end = 0, name_off = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Spec& t = tensors[i];
    const std::size_t d = 64 + 128 * i;
    Store(b, d + 0, t.dtype, 2);
    Store(b, d + 2, t.shape.size(), 1);
    Store(b, d + 4, named ? name_off : 0xFFFF, 2);
    Store(b, d + 6, named ? t.name.size() : 0, 2);
    name_off += named ? t.name.size() : 0;
    Store(b, d + 8, 0xFFFF, 2);
    Store(b, d + 18, 0xFFFF, 2);
    Store(b, d + 24, 0xFFFFFFFF, 4);
    Store(b, d + 28, 0xFFFFFFFF, 4);
    Store(b, d + 32, cursor, 8);
    Store(b, d + 40, t.bytes, 8);
    for (std::size_t k = 0; k < t.shape.size(); ++k) Store(b, d + 48 + 8 * k, t.shape[k], 8);
    end = cursor + t.bytes;
    cursor = (end + 63) / 64 * 64;
  }
  std::memcpy(b.data() + 64 + 128 * n, heap.data(), heap.size());
  Store(b, 16, end, 8);  // payload_bytes
  block.size = base + end;
  return block;
}

const SparseBlock& Sparse() {
  static const SparseBlock block = [] {
    std::vector<Spec> tensors;
    const char* proj[] = {"q", "k", "v", "o"};
    const char* mlp[] = {"gate", "up", "down"};
    for (int layer = 0; layer < 150; ++layer) {
      const std::string l = "l." + std::to_string(layer) + ".";
      for (const char* p : proj) {
        tensors.push_back({l + p + ".w", 16, {4096, 1536}, 4096 * 1536 * 2});
      }
      for (const char* p : mlp)
        tensors.push_back({l + p + ".w", 16, {1536, 2048}, 1536 * 2048 * 2});
      for (const char* p : {"n1", "n2", "n3"}) tensors.push_back({l + p, 16, {4096}, 4096 * 2});
    }
    return Encode(tensors, true);
  }();
  return block;
}

const SparseBlock& SmallGaps(std::int64_t n) {
  static std::map<std::int64_t, SparseBlock> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  std::vector<Spec> tensors(static_cast<std::size_t>(n), Spec{"", 2, {1}, 1});
  return cache.emplace(n, Encode(tensors, false)).first->second;
}

void Run(benchmark::State& state, const SparseBlock& block) {
  RangeOptions options;
  options.merge_gap = static_cast<std::uint64_t>(state.range(1));
  const auto reader = [&](std::uint64_t offset, std::span<std::uint8_t> out, std::string*) {
    // The real head, zeros past it (a sparse file's payload).
    const std::uint64_t real = offset < block.head.size() ? block.head.size() - offset : 0;
    const std::size_t copy = static_cast<std::size_t>(std::min<std::uint64_t>(real, out.size()));
    if (copy != 0) std::memcpy(out.data(), block.head.data() + offset, copy);
    std::memset(out.data() + copy, 0, out.size() - copy);
    return true;
  };
  std::uint64_t reads = 0, bytes = 0;
  for (auto _ : state) {
    const RangeValidator v = ValidateRanges(block.size, reader, options);
    if (v.status() != RangeStatus::kComplete) {
      state.SkipWithError("the block is not valid");
      return;
    }
    reads = v.reads();
    bytes = v.bytes_read();
  }
  state.counters["reads"] = static_cast<double>(reads);
  state.counters["bytes_read"] = static_cast<double>(bytes);
  state.counters["file_bytes"] = static_cast<double>(block.size);
  state.counters["directory_bytes"] = static_cast<double>(block.head.size());
}

// One f32[2] tensor, then a zero gap of 1 GiB: P2 reads it all, in 1 MiB
// pieces.
const SparseBlock& HostileGap() {
  static const SparseBlock block = [] {
    SparseBlock b = Encode({Spec{"", 1, {2}, 8}}, false);
    const std::uint64_t payload = 64 + (std::uint64_t{1} << 30);
    Store(b.head, 16, payload, 8);
    b.size = b.head.size() + payload;
    return b;
  }();
  return block;
}

void BM_RangeValidateSparse(benchmark::State& state) { Run(state, Sparse()); }
void BM_RangeValidateHostileGap(benchmark::State& state) { Run(state, HostileGap()); }
void BM_RangeValidateSmallGaps(benchmark::State& state) { Run(state, SmallGaps(state.range(0))); }

BENCHMARK(BM_RangeValidateSparse)->Args({1500, 65536})->Args({1500, 0});
BENCHMARK(BM_RangeValidateSmallGaps)->Args({100000, 65536})->Args({100000, 0});
BENCHMARK(BM_RangeValidateHostileGap)->Args({1, 65536})->Iterations(3);

}  // namespace
}  // namespace kiln::bench
