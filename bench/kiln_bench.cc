// kiln_bench: validating the same tensor set as a Kiln v2 block and as a
// safetensors header, and a plain read of the directory bytes (the floor).
// docs/performance.md has the table and the command that reproduces it.
#include <cstring>
#include <map>
#include <memory>

#include "benchmark/benchmark.h"
#include "kiln/kiln.h"
#include "safetensors_check.h"
#include "simdjson.h"
#include "support/alloc_counter.h"
#include "synthetic.h"

namespace kiln::bench {
namespace {

struct Data {
  std::vector<SynthTensor> tensors;
  bool named = false;
  std::vector<std::uint8_t> kiln;
  std::size_t directory_end = 0;  // 64 + directory_bytes
  std::string st_header;
  std::unique_ptr<simdjson::padded_string> st_padded;
  std::uint64_t st_data_length = 0;
};

const Data& Get(std::int64_t n) {
  static std::map<std::int64_t, Data> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  Data d;
  d.tensors = MakeTensors(static_cast<std::size_t>(n));
  d.named = NamesFit(d.tensors);
  d.kiln = KilnBlock(d.tensors, d.named);
  const Result<Directory> r = Parse(d.kiln);
  if (!r.ok()) std::abort();  // the generator must produce a valid block
  d.directory_end = 64 + r.value().header().directory_bytes;
  d.st_header = SafetensorsHeader(d.tensors);
  d.st_padded = std::make_unique<simdjson::padded_string>(d.st_header);
  for (const SynthTensor& t : d.tensors) d.st_data_length += t.bytes;
  if (CheckSafetensorsSimdjson(*d.st_padded, d.st_data_length) != n ||
      CheckSafetensorsNlohmann(d.st_header, d.st_data_length) != n) {
    std::abort();  // both baselines must accept the header
  }
  return cache.emplace(n, std::move(d)).first->second;
}

void Common(benchmark::State& state, std::int64_t n, std::size_t bytes) {
  state.SetItemsProcessed(state.iterations() * n);  // items/s = tensors/s
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

void BM_KilnValidate(benchmark::State& state) {
  const Data& d = Get(state.range(0));
  for (auto _ : state) {
    Result<Directory> r = Parse(d.kiln);
    benchmark::DoNotOptimize(r);
  }
  const alloc::Scope heap;
  {
    const Result<Directory> r = Parse(d.kiln);
    benchmark::DoNotOptimize(r);
  }
  const alloc::Stats h = heap.Read();
  state.counters["allocs_per_parse"] = static_cast<double>(h.allocations);
  state.counters["peak_heap_bytes"] = static_cast<double>(h.peak_extra);
  state.counters["named"] = d.named ? 1 : 0;
  Common(state, state.range(0), d.directory_end);
}

void BM_KilnValidateScratch(benchmark::State& state) {
  const Data& d = Get(state.range(0));
  std::vector<std::uint32_t> scratch(ScratchWords(static_cast<std::uint32_t>(state.range(0))));
  ParseOptions options;
  options.scratch = scratch;
  for (auto _ : state) {
    Result<Directory> r = Parse(d.kiln, options);
    benchmark::DoNotOptimize(r);
  }
  const alloc::Scope heap;
  {
    const Result<Directory> r = Parse(d.kiln, options);
    benchmark::DoNotOptimize(r);
  }
  state.counters["allocs_per_parse"] = static_cast<double>(heap.Read().allocations);
  Common(state, state.range(0), d.directory_end);
}

// Names at scale: the realistic names do not fit a Kiln heap past about
// 1,600 tensors (u16 heap offsets), so this variant names every tensor
// "t<base 36 index>" to measure N3, N4 and N5 at N = 10,000.
void BM_KilnValidateShortNames(benchmark::State& state) {
  const auto tensors = WithShortNames(MakeTensors(static_cast<std::size_t>(state.range(0))));
  if (!NamesFit(tensors)) std::abort();
  const std::vector<std::uint8_t> block = KilnBlock(tensors, true);
  std::size_t directory_end = 0;
  {
    const Result<Directory> r = Parse(block);
    if (!r.ok()) std::abort();
    directory_end = 64 + r.value().header().directory_bytes;
  }
  for (auto _ : state) {
    Result<Directory> r = Parse(block);
    benchmark::DoNotOptimize(r);
  }
  const alloc::Scope heap;
  {
    const Result<Directory> r = Parse(block);
    benchmark::DoNotOptimize(r);
  }
  const alloc::Stats h = heap.Read();
  state.counters["allocs_per_parse"] = static_cast<double>(h.allocations);
  state.counters["peak_heap_bytes"] = static_cast<double>(h.peak_extra);
  Common(state, state.range(0), directory_end);
}

// What names cost: the same N tensors parsed as a named block and as an
// unnamed one. range(0) is N; range(1) the names: 0 none, 1 short
// ("t<base 36 index>", fits at 10,000), 2 realistic
// ("model.layers.12.mlp.down_proj.weight", fits up to about 1,600).
void BM_KilnNames(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::int64_t kind = state.range(1);
  auto tensors = MakeTensors(n);
  if (kind == 1) tensors = WithShortNames(std::move(tensors));
  if (kind != 0 && !NamesFit(tensors)) std::abort();
  const std::vector<std::uint8_t> block = KilnBlock(tensors, kind != 0);
  std::size_t directory_end = 0;
  {
    const Result<Directory> r = Parse(block);
    if (!r.ok() || r.value().header().has_names() != (kind != 0)) std::abort();
    directory_end = 64 + r.value().header().directory_bytes;
  }
  for (auto _ : state) {
    Result<Directory> r = Parse(block);
    benchmark::DoNotOptimize(r);
  }
  Common(state, state.range(0), directory_end);
}

// Hostile: the descriptors of a named block claim overlapping names, tensor
// i the heap from byte i to its end (a rejection under N3), and the heap ends
// in a 2-byte UTF-8 sequence so that it is not all ASCII. The names are
// distinct, so a parser that hashed (N5) or checked (N4) every claimed name
// before N3 would do about 400 bytes of work per byte of input; kiln stops
// at the first name that does not follow on. Reported per tensor.
void BM_KilnHostileOverlappingNames(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::uint8_t> block = KilnBlock(MakeTensors(n), true);
  const Result<Directory> valid = Parse(block);
  if (!valid.ok()) std::abort();
  const std::size_t name_bytes = valid.value().header().name_bytes;
  const std::size_t heap = 64 + 128 * n;
  block[heap + name_bytes - 2] = 0xC3;  // U+00E9
  block[heap + name_bytes - 1] = 0xA9;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = 64 + 128 * i;
    const std::size_t len = name_bytes - i;
    block[at + 4] = static_cast<std::uint8_t>(i & 0xFF);  // name_off i
    block[at + 5] = static_cast<std::uint8_t>(i >> 8);
    block[at + 6] = static_cast<std::uint8_t>(len & 0xFF);  // name_len: to the heap's end
    block[at + 7] = static_cast<std::uint8_t>(len >> 8);
  }
  const Result<Directory> r = Parse(block);
  if (r.ok() || r.error().rule != Rule::N3) std::abort();
  for (auto _ : state) {
    Result<Directory> again = Parse(block);
    benchmark::DoNotOptimize(again);
  }
  Common(state, state.range(0), block.size());
}

void BM_SafetensorsSimdjson(benchmark::State& state) {
  const Data& d = Get(state.range(0));
  for (auto _ : state) {
    long n = CheckSafetensorsSimdjson(*d.st_padded, d.st_data_length);
    benchmark::DoNotOptimize(n);
  }
  Common(state, state.range(0), d.st_header.size());
}

void BM_SafetensorsNlohmann(benchmark::State& state) {
  const Data& d = Get(state.range(0));
  for (auto _ : state) {
    long n = CheckSafetensorsNlohmann(d.st_header, d.st_data_length);
    benchmark::DoNotOptimize(n);
  }
  Common(state, state.range(0), d.st_header.size());
}

// The physical floor: one read-only pass over the block's header, descriptors
// and heap, eight bytes at a time into four independent accumulators.
void BM_ScanFloor(benchmark::State& state) {
  const Data& d = Get(state.range(0));
  const std::uint8_t* p = d.kiln.data();
  const std::size_t words = d.directory_end / 8;
  for (auto _ : state) {
    std::uint64_t acc[4] = {0, 0, 0, 0};
    std::size_t i = 0;
    for (; i + 4 <= words; i += 4) {
      for (std::size_t k = 0; k < 4; ++k) {
        std::uint64_t w = 0;
        std::memcpy(&w, p + 8 * (i + k), 8);
        acc[k] ^= w;
      }
    }
    for (; i < words; ++i) {
      std::uint64_t w = 0;
      std::memcpy(&w, p + 8 * i, 8);
      acc[0] ^= w;
    }
    std::uint64_t sum = acc[0] ^ acc[1] ^ acc[2] ^ acc[3];
    benchmark::DoNotOptimize(sum);
  }
  Common(state, state.range(0), d.directory_end);
}

#define KILN_SIZES ->Arg(1000)->Arg(10000)->Arg(100000)
BENCHMARK(BM_KilnValidate) KILN_SIZES;
BENCHMARK(BM_KilnValidateScratch) KILN_SIZES;
BENCHMARK(BM_KilnValidateShortNames)->Arg(1000)->Arg(10000);
BENCHMARK(BM_KilnHostileOverlappingNames)->Arg(1500);
BENCHMARK(BM_KilnNames)->Args({10000, 0})->Args({10000, 1})->Args({1500, 0})->Args({1500, 2});
BENCHMARK(BM_SafetensorsSimdjson) KILN_SIZES;
BENCHMARK(BM_SafetensorsNlohmann) KILN_SIZES;
BENCHMARK(BM_ScanFloor) KILN_SIZES;

}  // namespace
}  // namespace kiln::bench

BENCHMARK_MAIN();
