// Rule N5 through the hash table Parse fills in its descriptor pass (grouped
// slots, hash tags, a name's last 16 bytes loaded whole and masked) against
// a plain reference: a std::map from name to its first tensor. Names of
// every length around the 8- and 16-byte edges, sharing prefixes and
// suffixes, with repeats at random places; the first repeat (lowest index)
// and the tensor it repeats must be the ones reported, by the table and by
// the sorting fallback alike.
#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/directory.h"
#include "kiln/internal/name_table.h"
#include "kiln/internal/rules.h"
#include "support/block_builder.h"
#include "support/colliding_names.h"

namespace kiln {
namespace {

using testing::BlockSpec;
using testing::Buffer;
using testing::TensorSpec;

struct Repeat {
  std::uint32_t tensor;
  std::uint32_t first;
};

std::optional<Repeat> Reference(const std::vector<std::string>& names) {
  std::map<std::string, std::uint32_t> seen;
  for (std::uint32_t i = 0; i < names.size(); ++i) {
    const auto [it, added] = seen.emplace(names[i], i);
    if (!added) return Repeat{i, it->second};
  }
  return std::nullopt;
}

std::string RandomName(std::mt19937_64& rng) {
  // Lengths around the hash's edges (8, 16, 32), and a small alphabet with
  // shared prefixes and suffixes so that many names differ in one byte.
  static const std::vector<std::size_t> kLengths = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40};
  const std::size_t len = kLengths[rng() % kLengths.size()];
  std::string s = rng() % 2 == 0 ? "model.layers." : "";
  while (s.size() < len) s += static_cast<char>("ab.\x01"[rng() % 4]);
  s.resize(len);
  if (rng() % 3 == 0 && len > 4) s.replace(len - 4, 4, ".wt" + std::string(1, 'a' + rng() % 3));
  return s;
}

Buffer Block(const std::vector<std::string>& names) {
  BlockSpec spec;
  for (const std::string& n : names) {
    TensorSpec t;
    t.name = n;
    spec.tensors.push_back(t);
  }
  return testing::Build(spec);
}

TEST(NameTable, N5AgreesWithAMapOnRandomNames) {
  std::mt19937_64 rng(7);
  std::size_t repeats = 0, unique = 0;
  for (const std::size_t n : {2, 3, 4, 5, 9, 64, 300, 1200}) {
    for (int round = 0; round < 40; ++round) {
      std::vector<std::string> names;
      std::map<std::string, int> taken;
      while (names.size() < n) {
        std::string s = RandomName(rng);
        if (taken.emplace(s, 0).second) names.push_back(s);
      }
      // Half the rounds: copy one name over another, maybe a second pair.
      for (int k = 0; k < static_cast<int>(rng() % 3) && round % 2 == 0; ++k) {
        names[rng() % n] = names[rng() % n];
      }
      const Buffer b = Block(names);
      const std::optional<Repeat> want = Reference(names);
      const Result<Directory> r = Parse(b);
      if (!want) {
        ASSERT_TRUE(r.ok()) << r.error().ToString();
        ++unique;
        continue;
      }
      ++repeats;
      ASSERT_FALSE(r.ok()) << "n " << n << " round " << round;
      EXPECT_EQ(r.error().rule, Rule::N5);
      EXPECT_EQ(r.error().tensor, want->tensor);
      EXPECT_NE(r.error().message.find("repeats the name of tensor " + std::to_string(want->first)),
                std::string::npos)
          << r.error().message;
      // The sorting fallback reports the same.
      const Result<HeaderInfo> h = ReadHeader(b);
      ASSERT_TRUE(h.ok());
      internal::Scratch scratch({});
      const internal::Check sorted = internal::CheckUniqueNames(b, h.value(), scratch, 0);
      ASSERT_TRUE(sorted.has_value());
      EXPECT_EQ(sorted->tensor, r.error().tensor);
      EXPECT_EQ(sorted->message, r.error().message);
    }
  }
  EXPECT_GT(repeats, 50u);  // both outcomes were really exercised
  EXPECT_GT(unique, 50u);
}

#if defined(__SIZEOF_INT128__)
// The WebAssembly module hashes names with the 32-bit-multiply form of the
// product: it must give the __int128 form's value (else a name hashes one
// way in the page and another here), on the carries' edges and at random.
TEST(NameTable, PortableProductEqualsTheInt128One) {
  const std::uint64_t edges[] = {0,
                                 1,
                                 0xffffffffu,
                                 0x100000000u,
                                 0xffffffffffffffffull,
                                 0xfffffffe00000001ull,
                                 0x8000000000000000ull,
                                 0xa0761d6478bd642full};
  for (const std::uint64_t a : edges) {
    for (const std::uint64_t b : edges) {
      ASSERT_EQ(internal::MixWordsPortable(a, b), internal::MixWordsInt128(a, b)) << a << " " << b;
    }
  }
  std::mt19937_64 rng(23);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t a = rng(), b = rng() >> (rng() % 64);
    ASSERT_EQ(internal::MixWordsPortable(a, b), internal::MixWordsInt128(a, b)) << a << " " << b;
  }
}
#endif

#if defined(__SSE2__)
// The SSE2 scan of a group and the scalar one (used where SSE2 is missing)
// give the same bits, on groups mixing free slots, tags that agree and tags
// that do not, and the all-ones tag.
TEST(NameTable, GroupScanSse2AgreesWithScalar) {
  std::mt19937_64 rng(11);
  std::size_t matches = 0;
  for (const std::uint32_t bits : {0u, 0xFFFFC000u, 0xFFFFFFF0u}) {
    for (int round = 0; round < 20000; ++round) {
      const std::uint32_t tag =
          (rng() % 4 == 0 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(rng() % 3) << 20) & bits;
      std::array<std::uint32_t, 4> g{};
      for (std::uint32_t& s : g) {
        switch (rng() % 3) {
          case 0:
            s = kNoTensor;
            break;
          case 1:
            s = tag | static_cast<std::uint32_t>(rng() % 1000);
            break;
          default:
            s = static_cast<std::uint32_t>(rng());
            break;
        }
      }
      unsigned e1 = 0, m1 = 0, e2 = 0, m2 = 0;
      internal::ScanGroupScalar(g, tag, bits, &e1, &m1);
      internal::ScanGroupSse2(g, tag, _mm_set1_epi32(static_cast<int>(bits)), &e2, &m2);
      ASSERT_EQ(e1, e2);
      ASSERT_EQ(m1, m2);
      matches += m1 != 0 ? 1 : 0;
    }
  }
  EXPECT_GT(matches, 1000u);
}
#endif

// HashName as its comment defines it, computed plainly: the length, each
// 16-byte chunk before the last 16 bytes (with its position) and then those
// last 16 bytes (zero bytes in front of a shorter name, and the hash so
// far), each pair of little-endian words folded from its 128-bit product.
std::uint64_t Fold(std::uint64_t a, std::uint64_t b) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return static_cast<std::uint64_t>(p) ^ static_cast<std::uint64_t>(p >> 64);
}

std::uint64_t WordAt(std::span<const std::uint8_t> bytes, std::size_t at) {
  std::uint64_t w = 0;
  for (std::size_t k = 0; k < 8; ++k) w |= std::uint64_t{bytes[at + k]} << (8 * k);
  return w;
}

std::uint64_t ReferenceHash(std::span<const std::uint8_t> name) {
  constexpr std::uint64_t kA = 0xa0761d6478bd642full, kB = 0xe7037ed1a0b428dbull;
  std::uint64_t h = name.size();
  std::size_t i = 0;
  for (; name.size() - i > 16; i += 16)
    h ^= Fold(WordAt(name, i) ^ kA ^ i, WordAt(name, i + 8) ^ kB);
  std::array<std::uint8_t, 16> last{};
  const std::size_t keep = std::min<std::size_t>(name.size(), 16);
  std::copy(name.end() - static_cast<std::ptrdiff_t>(keep), name.end(), last.end() - keep);
  return h ^ Fold(WordAt(last, 0) ^ kA ^ h, WordAt(last, 8) ^ kB);
}

TEST(NameTable, HashNameIsItsDefinition) {
  std::array<std::uint8_t, 16 + 80> bytes{};
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20; ++round) {
    for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(rng());
    for (std::size_t len = 1; len <= 80; ++len) {
      const std::span<const std::uint8_t> name = std::span(bytes).subspan(16, len);
      ASSERT_EQ(internal::HashName(internal::Bytes(bytes), 16, len), ReferenceHash(name))
          << "length " << len << ", round " << round;
    }
  }
}

// HashName reads the name's bytes and no other: flipping any one bit of a
// name of any length up to 48 (across the 8- and 16-byte edges of its
// masked last window and of the chunks before it) changes the hash, and
// changing any byte before or after the name does not. Only N5's speed
// rests on the first (a byte the masks dropped would make names differing
// there collide), its verdict on neither; both are what the masks promise.
TEST(NameTable, HashNameSeesEveryBitOfTheNameAndNothingElse) {
  constexpr std::size_t kOff = 24;  // HashName needs 16 bytes before a name
  std::array<std::uint8_t, kOff + 48 + 24> bytes{};
  std::mt19937_64 rng(7);
  for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(rng());
  const internal::Bytes block(bytes);
  for (std::size_t len = 1; len <= 48; ++len) {
    const std::uint64_t h = internal::HashName(block, kOff, len);
    for (std::size_t at = 0; at < bytes.size(); ++at) {
      const bool inside = at >= kOff && at < kOff + len;
      for (unsigned bit = 0; bit < 8; ++bit) {
        bytes[at] = static_cast<std::uint8_t>(bytes[at] ^ (1u << bit));
        const std::uint64_t flipped = internal::HashName(block, kOff, len);
        bytes[at] = static_cast<std::uint8_t>(bytes[at] ^ (1u << bit));
        if (inside) {
          ASSERT_NE(flipped, h) << "length " << len << ", name byte " << at - kOff << " bit "
                                << bit;
        } else {
          ASSERT_EQ(flipped, h) << "length " << len << ", byte " << at << " outside the name";
        }
      }
    }
  }
}

// A one-byte name repeated far apart: the bytes before each copy (read with
// the name and masked off) differ, the verdict must not.
TEST(NameTable, ShortNamesAreComparedWithoutTheBytesBeforeThem) {
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) {
    names.emplace_back("n");  // not "n" + to_string(i): GCC 12's false -Wrestrict
    names.back() += std::to_string(i);
  }
  names.push_back("x");
  for (int i = 0; i < 50; ++i) names.push_back(std::string(1 + i % 20, 'q') + std::to_string(i));
  names.push_back("x");
  const Result<Directory> r = Parse(Block(names));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().rule, Rule::N5);
  EXPECT_EQ(r.error().tensor, 251u);
}

// Overlapping names (tensor i claims the heap from byte i to its end, the
// heap not all ASCII) are distinct, so only N3 can reject them: it must, at
// tensor 1, whose name does not start where tensor 0's ends. (The pass
// hashes and UTF-8-checks no name past that point; BM_KilnHostileOverlapping
// Names measures that the work stays linear.)
TEST(NameTable, OverlappingNamesAreN3AtTheFirstThatDoesNotFollowOn) {
  std::vector<std::string> names;
  for (int i = 0; i < 64; ++i) names.push_back("layer." + std::to_string(i) + ".w\xC3\xA9");
  Buffer b = Block(names);
  const Result<HeaderInfo> h = ReadHeader(b);
  ASSERT_TRUE(h.ok());
  const std::uint32_t name_bytes = h.value().name_bytes;
  for (std::uint32_t i = 0; i < names.size(); ++i) {
    testing::Put(b, testing::Desc(i, testing::kNameOff), i, 2);
    testing::Put(b, testing::Desc(i, testing::kNameLen), name_bytes - i, 2);
  }
  const Result<Directory> r = Parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().rule, Rule::N3);
  EXPECT_EQ(r.error().tensor, 1u);
  EXPECT_EQ(r.error().offset, testing::Desc(1, testing::kNameOff));
}

// Two distinct names whose hashes agree in every bit a table of two or
// three tensors looks at first: the group (bit 2: 8 slots in two groups for
// three tensors, one group for two) and the tag (bits 34 to 63, above the
// two index bits). Found by search among "t0", "t1", ...: the table must
// compare such names byte by byte and pass over the slot whose tag matches
// and whose name does not (the group's first slot or its second), and still
// find a real repeat behind it.
TEST(NameTable, DistinctNamesWithTheSameTagAreToldApart) {
  // The table's shape the key below rests on (name_table.h): 4 and 8 words
  // in groups of 4, and index_bits = bit_width(2) = bit_width(3) = 2.
  ASSERT_EQ(ScratchWords(2), 4u);
  ASSERT_EQ(ScratchWords(3), 8u);
  ASSERT_EQ(internal::NameTable::kGroup, 4u);
  ASSERT_EQ(std::bit_width(3u), 2);
  std::array<std::uint8_t, 16 + 16> buf{};  // HashName reads 16 bytes before a name
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keys;
  for (std::uint32_t i = 0; i < (1u << 18); ++i) {
    std::string name = "t";
    name += std::to_string(i);
    std::copy(name.begin(), name.end(), buf.begin() + 16);
    const std::uint64_t h = internal::HashName(internal::Bytes(buf), 16, name.size());
    keys.emplace_back(((h >> 34) << 1) | ((h >> 2) & 1), i);
  }
  std::sort(keys.begin(), keys.end());
  const auto same = std::adjacent_find(
      keys.begin(), keys.end(), [](const auto& x, const auto& y) { return x.first == y.first; });
  ASSERT_NE(same, keys.end()) << "no two names share a tag";
  std::string a = "t", b = "t";
  a += std::to_string(same->second);
  b += std::to_string(std::next(same)->second);

  for (const std::vector<std::string>& names :
       {std::vector<std::string>{a, b}, {b, a}, {a, b, "u"}, {b, a, "u"}}) {
    const Result<Directory> r = Parse(Block(names));
    EXPECT_TRUE(r.ok()) << a << " " << b << ": " << r.error().ToString();
  }
  for (const auto& [names, first] : std::vector<std::pair<std::vector<std::string>, std::uint32_t>>{
           {{a, b, b}, 1}, {{a, b, a}, 0}, {{b, a, a}, 1}, {{b, a, b}, 0}}) {
    const Result<Directory> r = Parse(Block(names));
    ASSERT_FALSE(r.ok()) << names[0] << " " << names[1] << " " << names[2];
    EXPECT_EQ(r.error().rule, Rule::N5);
    EXPECT_EQ(r.error().tensor, 2u);
    EXPECT_NE(r.error().message.find("repeats the name of tensor " + std::to_string(first)),
              std::string::npos)
        << r.error().message;
  }
}

// 256 crafted names whose probes all start in one group: the table runs
// past its probe budget (shown below by filling a table as Parse does), so
// N5 is left to the sorting fallback, which must still accept the distinct
// names and find a repeat that the table never saw (tensor 255 repeating
// tensor 200, both past the point where the table gave up).
TEST(NameTable, CraftedCollisionsPastTheProbeBudgetStillDecideN5) {
  constexpr std::uint32_t kN = 256;
  BlockSpec spec = testing::CollidingNamesSpec(kN);
  const Buffer distinct = testing::Build(spec);
  const Result<HeaderInfo> h = ReadHeader(distinct);
  ASSERT_TRUE(h.ok());
  // The first tensor the table gives no verdict on, with a budget.
  const auto gave_up_at = [&](std::uint64_t budget) {
    std::vector<std::uint32_t> words(ScratchWords(kN));
    internal::NameTable table(distinct, h.value(), words, budget);
    for (std::uint32_t i = 0; i < kN; ++i) {
      const std::string_view name = internal::NameOf(distinct, h.value(), i);
      const auto off = static_cast<std::size_t>(reinterpret_cast<const std::uint8_t*>(name.data()) -
                                                distinct.data());
      std::uint32_t first = 0;
      const auto added = table.Add(i, off, name.size(), &first);
      EXPECT_NE(added, internal::NameTable::Added::kRepeat) << i;
      if (added == internal::NameTable::Added::kOverBudget) return i;
    }
    return kN;
  };
  // Where the budget runs out: name k goes into the first group with a
  // free slot, group k / 4 (every probe starts in group 0), and each group
  // past the first costs one unit; the first name whose cost exceeds what
  // is left gets no verdict.
  const auto expected_at = [](std::uint64_t left) {
    for (std::uint32_t k = 0; k < kN; ++k) {
      const std::uint64_t cost = k / internal::NameTable::kGroup;
      if (cost > left) return k;
      left -= cost;
    }
    return kN;
  };
  const std::uint64_t budget = internal::DefaultProbeBudget(kN);
  EXPECT_EQ(budget, 8u * kN + 1024u);  // the documented default
  ASSERT_LT(gave_up_at(budget), 200u) << "the crafted names did not exhaust the probe budget";
  EXPECT_EQ(gave_up_at(budget), expected_at(budget));
  // A budget that name 100 spends to its last unit: it still gets a verdict.
  std::uint64_t spent_by_100 = 0;
  for (std::uint32_t k = 0; k <= 100; ++k) spent_by_100 += k / internal::NameTable::kGroup;
  EXPECT_EQ(gave_up_at(spent_by_100), 101u);
  EXPECT_EQ(gave_up_at(spent_by_100 - 1), 100u);

  const Result<Directory> ok = Parse(distinct);
  EXPECT_TRUE(ok.ok()) << ok.error().ToString();

  spec.tensors[kN - 1].name = spec.tensors[200].name;
  const Result<Directory> r = Parse(testing::Build(spec));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(RuleName(r.error().rule), "N5") << r.error().ToString();
  EXPECT_EQ(r.error().tensor, kN - 1);
  EXPECT_NE(r.error().message.find("repeats the name of tensor 200"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace kiln
