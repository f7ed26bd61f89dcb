// Rule N5's hash table: tensor indices keyed by name, filled in index order,
// so the first repeat it finds is the lowest index whose name an earlier
// tensor has (the tensor N5 reports). Parse fills it in its descriptor pass;
// CheckUniqueNames fills it on its own. Inline: it runs once per named
// tensor in the hot loop of Parse.
//
// Probing is budgeted: names crafted to collide cannot make it quadratic,
// because once the budget is spent the caller sorts instead
// (UniqueNamesBySorting), which gives the same verdict in O(N log N).
#ifndef KILN_INTERNAL_NAME_TABLE_H_
#define KILN_INTERNAL_NAME_TABLE_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kiln/block.h"
#include "kiln/dtype.h"
#include "kiln/internal/fail.h"
#include "kiln/internal/layout.h"
#include "kiln/internal/primitives.h"
#include "kiln/status.h"

namespace kiln::internal {

// The two halves of the 128-bit product a * b, folded together: every input
// bit reaches the low bits the table indexes with. This form builds the
// product from four 32 x 32 -> 64 multiplies; MixWords below uses it where
// the compiler has no 64 x 64 -> 128 multiply (WebAssembly: clang calls
// compiler-rt's __multi3 for an __int128 product there, 11.6% of the
// module's validate() of 10,000 short names in a profile). The same value
// as the __int128 form, so the same hash on every host (name_table_test).
[[nodiscard]] inline std::uint64_t MixWordsPortable(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kLow = 0xffffffffu;
  const std::uint64_t lo_lo = (a & kLow) * (b & kLow);
  const std::uint64_t hi_lo = (a >> 32) * (b & kLow);
  const std::uint64_t lo_hi = (a & kLow) * (b >> 32);
  const std::uint64_t hi_hi = (a >> 32) * (b >> 32);
  // Each term is below 2^32, 2^32 and 2^64 - 2^33 + 1: the sum cannot wrap.
  const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & kLow) + lo_hi;
  const std::uint64_t high = hi_hi + (hi_lo >> 32) + (cross >> 32);
  const std::uint64_t low = ((cross & kLow) << 32) | (lo_lo & kLow);  // no bit shifted out
  return low ^ high;
}

#if defined(__SIZEOF_INT128__)
[[nodiscard]] inline std::uint64_t MixWordsInt128(std::uint64_t a, std::uint64_t b) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return static_cast<std::uint64_t>(p) ^ static_cast<std::uint64_t>(p >> 64);
}
#endif

[[nodiscard]] inline std::uint64_t MixWords(std::uint64_t a, std::uint64_t b) {
#if defined(__SIZEOF_INT128__) && !defined(__wasm__)
  return MixWordsInt128(a, b);
#else
  return MixWordsPortable(a, b);
#endif
}

// The 8 bytes at p as a little-endian word, on any host (the hash below
// masks bytes off by their position in the name): base::LoadLe on them.
[[nodiscard]] inline std::uint64_t WordLe(const std::uint8_t* p) {
  return LoadLe<std::uint64_t, 0>(std::span<const std::uint8_t, 8>(p, 8));
}

// For k = 0..16: the masks that keep the last k bytes of a 16-byte window
// loaded as two little-endian words.
inline constexpr std::array<std::array<std::uint64_t, 2>, 17> kTailMasks = [] {
  std::array<std::array<std::uint64_t, 2>, 17> t{};
  for (std::size_t k = 0; k <= 16; ++k) {
    const std::size_t skip = 16 - k;
    t[k][0] = skip >= 8 ? 0 : ~std::uint64_t{0} << (8 * skip);
    t[k][1] =
        skip >= 8 ? (skip == 16 ? 0 : ~std::uint64_t{0} << (8 * (skip - 8))) : ~std::uint64_t{0};
  }
  return t;
}();

// A 64-bit hash of the name at [off, off + len) of the block. The name's
// last 16 bytes are loaded whole (when it is shorter, the bytes before it are
// masked off) and go through one 128-bit multiply with the length; each
// earlier 16-byte chunk, with its position, through a multiply of its own (no
// chain from chunk to chunk). A name of up to 16 bytes costs one multiply and
// no branch. Only the speed of N5 depends on the hash's quality: the probe
// budget, not the hash, keeps crafted collisions from making it quadratic.
// Precondition: 16 <= off, 1 <= len, off + len <= block.size(). A name in the
// heap meets it: the heap starts at 64 + 128 * tensor_count >= 192.
[[nodiscard]] inline std::uint64_t HashName(Bytes block, std::size_t off, std::size_t len) {
  constexpr std::uint64_t kA = 0xa0761d6478bd642full, kB = 0xe7037ed1a0b428dbull;
  const std::uint8_t* p = block.data() + off;
  std::uint64_t h = len;
  std::size_t i = 0;
  for (; len - i > 16; i += 16) {
    h ^= MixWords(WordLe(p + i) ^ kA ^ i, WordLe(p + i + 8) ^ kB);
  }
  // The last 16 bytes; of a shorter name, the first 16 - len are not the
  // name's and are masked off.
  const std::size_t keep = len < 16 ? len : 16;
  const std::uint64_t m0 = kTailMasks[keep][0], m1 = kTailMasks[keep][1];
  return h ^ MixWords((WordLe(p + len - 16) & m0) ^ kA ^ h, (WordLe(p + len - 8) & m1) ^ kB);
}

// Tensor i's name. Precondition: its slice lies inside the heap (N3 held, or
// the caller checked this slice).
[[nodiscard]] inline std::string_view NameOf(Bytes block, const HeaderInfo& h, std::uint32_t i) {
  const DescriptorBytes d = DescriptorAt(block, i);
  const Bytes name = block.subspan(
      base::ToSize(HeapStart(h.tensor_count) + LoadLe<std::uint16_t, desc::kNameOff>(d)),
      LoadLe<std::uint16_t, desc::kNameLen>(d));
  return {reinterpret_cast<const char*>(name.data()), name.size()};
}

// The default probe budget: 8 per tensor plus 1024. An honest table at most
// half full needs about 1.5 probes per name.
[[nodiscard]] constexpr std::uint64_t DefaultProbeBudget(std::uint32_t tensor_count) {
  return 8 * std::uint64_t{tensor_count} + 1024;
}

// One bit per slot of a group of four: *empty for the free slots (kNoTensor),
// *match for the slots holding a tensor whose hash carries `tag` in the bits
// of `tag_bits`. NameTable uses the SSE2 form (four compares at once; every
// x86-64 has SSE2) where it exists; tests check both forms agree.
inline void ScanGroupScalar(std::span<const std::uint32_t, 4> slots, std::uint32_t tag,
                            std::uint32_t tag_bits, unsigned* empty, unsigned* match) {
  *empty = 0;
  *match = 0;
  for (unsigned k = 0; k < 4; ++k) {
    const std::uint32_t s = slots[k];
    *empty |= static_cast<unsigned>(s == kNoTensor) << k;
    *match |= static_cast<unsigned>(s != kNoTensor && (s & tag_bits) == tag) << k;
  }
}

#if defined(__SSE2__)
[[gnu::always_inline]] inline void ScanGroupSse2(std::span<const std::uint32_t, 4> slots,
                                                 std::uint32_t tag, __m128i tag_bits,
                                                 unsigned* empty, unsigned* match) {
  const __m128i g = _mm_loadu_si128(reinterpret_cast<const __m128i*>(slots.data()));
  const auto free = static_cast<unsigned>(
      _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(g, _mm_set1_epi32(-1)))));
  const __m128i tags = _mm_and_si128(g, tag_bits);
  const auto same = static_cast<unsigned>(_mm_movemask_ps(
      _mm_castsi128_ps(_mm_cmpeq_epi32(tags, _mm_set1_epi32(static_cast<int>(tag))))));
  *empty = free;
  *match = same & ~free;
}
#endif

// Open addressing over groups of four slots (16 bytes): a name's hash picks
// a group; it goes into the first free slot of the first group, in order,
// that has one. A slot holds a tensor index in its low index_bits bits and,
// above them, that many high bits of the name's hash (a tag): only names
// whose tags agree are compared, so nearly every name costs one look at one
// group and no look at the heap, with no branch that depends on how full the
// table is. With index_bits = bit_width(tensor_count) an index is below
// 2^index_bits - 1, so no slot ever equals kNoTensor, the empty mark.
//
// Groups only fill up, so an earlier tensor with the same name sits in the
// first group (in probe order) that was not full when it went in: a group
// is only passed once it is full and holds no match.
class NameTable {
 public:
  enum class Added { kNew, kRepeat, kOverBudget };
  static constexpr std::size_t kGroup = 4;

  // `table`: ScratchWords(h.tensor_count) words, a power of two of at least
  // twice the tensors (so at most half full) and, as tensor_count >= 2, at
  // least one group.
  NameTable(Bytes block, const HeaderInfo& h, std::span<std::uint32_t> table, std::uint64_t budget)
      : block_(block),
        h_(h),
        table_(table),
        mask_((table.size() - 1) & ~(kGroup - 1)),
        budget_(budget),
        index_mask_(
            static_cast<std::uint32_t>((std::uint64_t{1} << std::bit_width(h.tensor_count)) - 1)) {
    std::fill(table_.begin(), table_.end(), kNoTensor);
#if defined(__SSE2__)
    tag_bits_ = _mm_set1_epi32(static_cast<int>(~index_mask_));
#endif
  }

  // Adds tensor i, whose name is [off, off + len) of the block, inside the
  // heap. Names must be added in index order. kRepeat: tensor *first has the
  // same name. kOverBudget: the table gives no verdict (every group looked at
  // past the first costs one unit of the budget).
  [[nodiscard, gnu::always_inline]] Added Add(std::uint32_t i, std::size_t off, std::size_t len,
                                              std::uint32_t* first) {
    const std::uint64_t hash = HashName(block_, off, len);
    const auto tag = static_cast<std::uint32_t>(hash >> 32) & ~index_mask_;
    for (std::size_t group = hash & mask_;; group = (group + kGroup) & mask_) {
      const std::span<std::uint32_t, kGroup> slots = table_.subspan(group).first<kGroup>();
      unsigned empty = 0, match = 0;
      Scan(slots, tag, &empty, &match);
      for (; match != 0; match &= match - 1) {  // rare: same tag
        const std::uint32_t j = slots[static_cast<unsigned>(std::countr_zero(match))] & index_mask_;
        if (NameOf(block_, h_, j) ==
            std::string_view(reinterpret_cast<const char*>(block_.data() + off), len)) {
          *first = j;
          return Added::kRepeat;
        }
      }
      if (empty != 0) {
        slots[static_cast<unsigned>(std::countr_zero(empty))] = tag | i;
        return Added::kNew;
      }
      if (budget_ == 0) return Added::kOverBudget;  // every group past the first costs 1
      --budget_;
    }
  }

 private:
  [[gnu::always_inline]] void Scan(std::span<const std::uint32_t, kGroup> slots, std::uint32_t tag,
                                   unsigned* empty, unsigned* match) const {
#if defined(__SSE2__)
    ScanGroupSse2(slots, tag, tag_bits_, empty, match);
#else
    ScanGroupScalar(slots, tag, ~index_mask_, empty, match);
#endif
  }

  Bytes block_;
  const HeaderInfo& h_;
  std::span<std::uint32_t> table_;
  std::size_t mask_;  // of the group's first slot
  std::uint64_t budget_;
  std::uint32_t index_mask_;
#if defined(__SSE2__)
  __m128i tag_bits_;  // ~index_mask_ in each lane
#endif
};

// The N5 rejection: tensor dup repeats the name of tensor first.
[[nodiscard]] Error DuplicateNameError(Bytes block, const HeaderInfo& h, std::uint32_t dup,
                                       std::uint32_t first);

// N5 by sorting the indices by (name, index): O(N log N) whatever the names
// are. Precondition: N3 held. Uses h.tensor_count words of scratch.
[[nodiscard]] Check UniqueNamesBySorting(Bytes block, const HeaderInfo& h,
                                         std::span<std::uint32_t> idx);

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_NAME_TABLE_H_
