// RangeValidator (kiln/random_access.h) against Parse on the whole buffer:
// the same verdict (class, rule, offset, tensor, message) for every golden
// case and for mutants of them (bit flips, truncations, appended bytes,
// random overwrites), in whole and prefix mode, with several merge and
// request sizes; and what it reads: requests inside the file, increasing,
// never starting or ending on a covered byte, no covered byte at all with
// merge_gap 0, merged as documented, and within the documented count.
#include "kiln/random_access.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/directory.h"
#include "support/block_builder.h"
#include "support/golden.h"

namespace kiln {
namespace {

using testing::Buffer;

struct Request {
  std::uint64_t offset;
  std::uint64_t length;
};

// A reader over `file` that records every request.
struct RecordingReader {
  std::span<const std::uint8_t> file;
  std::vector<Request> requests;

  bool operator()(std::uint64_t offset, std::span<std::uint8_t> out, std::string* why) {
    requests.push_back({offset, out.size()});
    if (offset > file.size() || out.size() > file.size() - offset) {
      *why = "read past the end";
      return false;
    }
    std::memcpy(out.data(), file.data() + offset, out.size());
    return true;
  }
};

// The uncovered payload ranges of a valid directory, absolute offsets.
std::vector<Request> GapsOf(const Directory& d) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (std::uint32_t i = 0; i < d.tensor_count(); ++i) {
    const Tensor t = d.tensor(i);
    if (t.byte_length != 0) ranges.emplace_back(t.byte_offset, t.byte_offset + t.byte_length);
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<Request> gaps;
  std::uint64_t cursor = 0;
  const std::uint64_t base = d.header().payload_base;
  for (const auto& [b, e] : ranges) {
    if (b > cursor) gaps.push_back({base + cursor, b - cursor});
    cursor = e;
  }
  if (d.header().payload_bytes > cursor) {
    gaps.push_back({base + cursor, d.header().payload_bytes - cursor});
  }
  return gaps;
}

// The gap holding byte `at`, if any (gaps are sorted and disjoint).
const Request* GapAt(const std::vector<Request>& gaps, std::uint64_t at) {
  auto it = std::upper_bound(gaps.begin(), gaps.end(), at,
                             [](std::uint64_t a, const Request& g) { return a < g.offset; });
  if (it == gaps.begin()) return nullptr;
  --it;
  return at < it->offset + it->length ? &*it : nullptr;
}

bool Covered(const std::vector<Request>& gaps, std::uint64_t payload_base, std::uint64_t at) {
  return at >= payload_base && GapAt(gaps, at) == nullptr;
}

void ExpectSameError(const Error& got, const Error& want, const std::string& what) {
  EXPECT_EQ(got.error_class, want.error_class) << what;
  EXPECT_EQ(got.rule, want.rule) << what << ": " << got.ToString() << " vs " << want.ToString();
  EXPECT_EQ(got.offset, want.offset) << what << ": " << got.ToString();
  EXPECT_EQ(got.tensor, want.tensor) << what << ": " << got.ToString();
  EXPECT_EQ(got.message, want.message) << what;
}

// The documented bound on the number of requests (kiln/random_access.h).
std::uint64_t ReadBound(const HeaderInfo& h, const std::vector<Request>& gaps,
                        const RangeOptions& o, std::uint64_t payload_requested) {
  const auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); };
  std::uint64_t runs = gaps.empty() ? 0 : 1;
  for (std::size_t k = 1; k < gaps.size(); ++k) {
    if (gaps[k].offset - (gaps[k - 1].offset + gaps[k - 1].length) >= o.merge_gap) ++runs;
  }
  return 1 + ceil_div(h.payload_base - kHeaderSize, o.max_range) + runs +
         ceil_div(payload_requested, o.max_range - o.merge_gap);
}

std::vector<RangeOptions> OptionSets(bool all) {
  std::vector<RangeOptions> sets(1);  // the defaults
  RangeOptions strict;
  strict.merge_gap = 0;
  strict.max_range = 7;
  sets.push_back(strict);
  if (all) {
    RangeOptions one;
    one.merge_gap = 0;
    one.max_range = 1;
    sets.push_back(one);
    RangeOptions small;
    small.merge_gap = 100;
    small.max_range = 256;
    sets.push_back(small);
  }
  return sets;
}

// The verdict and the requests for one input, mode and option set.
void ExpectMatchesParse(const Buffer& b, Mode mode, RangeOptions o, const std::string& what) {
  o.mode = mode;
  ParseOptions po;
  po.mode = mode;
  const Result<Directory> want = Parse(b, po);
  RecordingReader reader{b, {}};
  const RangeValidator v = ValidateRanges(b.size(), reader, o);
  ASSERT_NE(v.status(), RangeStatus::kReadFailed) << what << ": " << v.read_error();
  ASSERT_NE(v.status(), RangeStatus::kNeedRange) << what;
  if (want.ok()) {
    ASSERT_EQ(v.status(), RangeStatus::kComplete) << what << ": " << v.error().ToString();
    EXPECT_EQ(v.directory().block_length(), want.value().block_length()) << what;
    EXPECT_EQ(v.directory().tensor_count(), want.value().tensor_count()) << what;
    EXPECT_FALSE(v.directory().has_payloads());
  } else {
    ASSERT_EQ(v.status(), RangeStatus::kRejected) << what << ": " << want.error().ToString();
    ExpectSameError(v.error(), want.error(), what);
  }
  // Requests: inside the file, increasing and disjoint, at most max_range.
  std::uint64_t end = 0, total = 0;
  for (const Request& r : reader.requests) {
    EXPECT_GE(r.length, 1u) << what;
    // The header is one request of up to 64 bytes; max_range bounds the rest.
    EXPECT_LE(r.length,
              r.offset == 0 ? std::max<std::uint64_t>(o.max_range, kHeaderSize) : o.max_range)
        << what;
    EXPECT_GE(r.offset, end) << what;
    EXPECT_LE(r.offset + r.length, b.size()) << what;
    end = r.offset + r.length;
    total += r.length;
  }
  EXPECT_LE(total, b.size()) << what;
  EXPECT_EQ(v.reads(), reader.requests.size()) << what;
  EXPECT_EQ(v.bytes_read(), total) << what;
  if (!want.ok() && !(v.status() == RangeStatus::kRejected && v.error().rule == Rule::P2)) {
    // Rejected before the payload: nothing past payload_base (or the
    // header) was read.
    const std::uint64_t limit = v.header() ? v.header()->payload_base : kHeaderSize;
    EXPECT_LE(end, limit) << what;
  }
  if (!want.ok()) return;
  // A valid block: covered bytes are requested only inside merged requests
  // (never first or last), none with merge_gap 0; the count bound holds.
  const Directory& d = want.value();
  const std::vector<Request> gaps = GapsOf(d);
  const std::uint64_t base = d.header().payload_base;
  std::uint64_t payload_requested = 0;
  for (const Request& r : reader.requests) {
    if (r.offset < base) continue;
    payload_requested += r.length;
    EXPECT_FALSE(Covered(gaps, base, r.offset)) << what << " at " << r.offset;
    EXPECT_FALSE(Covered(gaps, base, r.offset + r.length - 1)) << what;
    if (v.options().merge_gap == 0) {
      // Inside one gap: no covered byte (gaps are the maximal uncovered runs).
      const Request* g = GapAt(gaps, r.offset);
      ASSERT_NE(g, nullptr) << what;
      EXPECT_LE(r.offset + r.length, g->offset + g->length)
          << what << ": request [" << r.offset << ", +" << r.length << ") reads covered bytes";
    }
  }
  // Merged as documented: two payload requests in a row are apart by at
  // least merge_gap covered bytes, or the second starts past the first's
  // max_range cap (a closer gap would have been taken into the first).
  for (std::size_t k = 1; k < reader.requests.size(); ++k) {
    const Request& a = reader.requests[k - 1];
    const Request& c = reader.requests[k];
    if (a.offset < base) continue;
    EXPECT_TRUE(c.offset - (a.offset + a.length) >= v.options().merge_gap ||
                c.offset >= a.offset + v.options().max_range)
        << what << ": requests at " << a.offset << " and " << c.offset << " not merged";
  }
  // Every gap byte was requested (P2 read it).
  std::uint64_t gap_bytes = 0;
  for (const Request& g : gaps) gap_bytes += g.length;
  EXPECT_GE(payload_requested, gap_bytes) << what;
  if (v.options().merge_gap == 0) {
    EXPECT_EQ(payload_requested, gap_bytes) << what;
  }
  EXPECT_LE(v.reads(), ReadBound(d.header(), gaps, v.options(), payload_requested)) << what;
}

class RangeGoldenTest : public ::testing::TestWithParam<testing::GoldenCase> {};

TEST_P(RangeGoldenTest, SameVerdictAsParse) {
  const Buffer b = testing::ReadFile(GetParam().path);
  for (const RangeOptions& o : OptionSets(true)) {
    for (Mode mode : {Mode::kWhole, Mode::kPrefix}) {
      ExpectMatchesParse(b, mode, o, GetParam().name + " max_range " + std::to_string(o.max_range));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, RangeGoldenTest, ::testing::ValuesIn(testing::LoadManifest()),
                         [](const auto& info) { return testing::TestName(info.param); });

// Mutants of every golden case: every single-bit flip and every truncation
// of the valid ones, appended bytes, and random overwrites of all of them.
TEST(RangeMutants, SameVerdictAsParse) {
  std::size_t mutants = 0;
  std::minstd_rand rng(23);
  const auto check = [&](const Buffer& b, const std::string& what) {
    ++mutants;
    for (const RangeOptions& o : OptionSets(false)) ExpectMatchesParse(b, Mode::kWhole, o, what);
  };
  for (const testing::GoldenCase& c : testing::LoadManifest()) {
    const Buffer original = testing::ReadFile(c.path);
    if (c.valid()) {
      for (std::size_t bit = 0; bit < original.size() * 8; ++bit) {
        Buffer b = original;
        b[bit / 8] = static_cast<std::uint8_t>(b[bit / 8] ^ (1u << (bit % 8)));
        check(b, c.name + " bit " + std::to_string(bit));
        if (::testing::Test::HasFailure()) return;
      }
      for (std::size_t n = 0; n < original.size(); ++n) {
        check(Buffer(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(n)),
              c.name + " cut to " + std::to_string(n));
      }
    }
    for (std::size_t extra : {1, 2, 63, 64, 1000}) {
      for (std::uint8_t fill : {0x00, 0xFF}) {
        Buffer b = original;
        b.insert(b.end(), extra, fill);
        check(b, c.name + " + " + std::to_string(extra));
      }
    }
    for (int k = 0; k < 40 && !original.empty(); ++k) {
      Buffer b = original;
      const int bytes = 1 + static_cast<int>(rng() % 4);
      for (int j = 0; j < bytes; ++j) {
        b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
      }
      if (rng() % 4 == 0) b.resize(rng() % (b.size() + 1));
      check(b, c.name + " random " + std::to_string(k));
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GE(mutants, 10'000u);
  std::printf("%zu mutants\n", mutants);
}

// The length examples of issue 23, where a stream and a parse differ: the
// size makes the range validator give the parse's H8.
TEST(RangeLength, TheSizeDecidesH8) {
  Buffer valid = testing::Build({{testing::TensorSpec{}}, std::nullopt, std::nullopt});
  Buffer longer = valid;
  longer.push_back(0);
  RecordingReader r1{longer, {}};
  const RangeValidator a = ValidateRanges(longer.size(), r1);
  ASSERT_EQ(a.status(), RangeStatus::kRejected);
  EXPECT_EQ(a.error().ToString(), "FRAME H8 at byte " + std::to_string(valid.size()) +
                                      ": 1 trailing bytes after the " +
                                      std::to_string(valid.size()) + "-byte block");
  EXPECT_EQ(r1.requests.size(), 1u);  // the header only
  // 65 bytes KLNT 02 03 0...: H9 in a stream, H8 for the whole file.
  Buffer b65(65, 0);
  std::memcpy(b65.data(), "KLNT\x02\x03", 6);
  RecordingReader r2{b65, {}};
  const RangeValidator c = ValidateRanges(b65.size(), r2);
  ASSERT_EQ(c.status(), RangeStatus::kRejected);
  EXPECT_EQ(c.error().rule, Rule::H8);
  EXPECT_EQ(c.error().offset, 64u);
  EXPECT_EQ(c.error().ToString(), Parse(b65).error().ToString());
  // A bad dtype and the last 2 bytes cut: FRAME H8, no directory read.
  Buffer cut = valid;
  cut[64] = 8;
  cut.resize(cut.size() - 2);
  RecordingReader r3{cut, {}};
  const RangeValidator d = ValidateRanges(cut.size(), r3);
  ASSERT_EQ(d.status(), RangeStatus::kRejected);
  EXPECT_EQ(d.error().ToString(), Parse(cut).error().ToString());
  EXPECT_EQ(d.error().rule, Rule::H8);
  ASSERT_EQ(r3.requests.size(), 1u);
  EXPECT_EQ(r3.requests[0].length, 64u);
  // No bytes at all: H1 without a read.
  const RangeValidator e = ValidateRanges(0, r3);
  ASSERT_EQ(e.status(), RangeStatus::kRejected);
  EXPECT_EQ(e.error().ToString(), Parse({}).error().ToString());
  EXPECT_EQ(e.reads(), 0u);
}

// 100,000 tensors of 1..63 bytes, each 64-byte aligned, so every gap is
// small: merged, the payload costs a few requests, not 100,000; with
// merge_gap 0 it costs one per gap and no covered byte.
TEST(RangeReads, HundredThousandTensorsWithSmallGaps) {
  testing::BlockSpec spec;
  for (std::uint64_t i = 0; i < 100'000; ++i) {
    testing::TensorSpec t;
    t.dtype = 2;  // u8
    t.shape = {1 + i % 63};
    spec.tensors.push_back(t);
  }
  const Buffer b = testing::Build(spec);
  ASSERT_TRUE(Parse(b).ok());
  ExpectMatchesParse(b, Mode::kWhole, RangeOptions{}, "100k merged");
  RecordingReader merged{b, {}};
  const RangeValidator v = ValidateRanges(b.size(), merged);
  ASSERT_EQ(v.status(), RangeStatus::kComplete);
  const std::uint64_t dir = v.header()->payload_base - kHeaderSize;
  const std::uint64_t payload = v.header()->payload_bytes;
  // Header, directory pieces, then the payload in requests of more than
  // max_range - merge_gap bytes each (every gap is closer than 64 KiB).
  const std::uint64_t mib = kDefaultMaxRange, step = kDefaultMaxRange - kDefaultMergeGap;
  EXPECT_LE(v.reads(), 1 + (dir + mib - 1) / mib + 1 + (payload + step - 1) / step);
  EXPECT_LT(v.reads(), 30u);
  std::printf("100,000 tensors, merged: %llu reads, %llu of %zu bytes\n",
              static_cast<unsigned long long>(v.reads()),
              static_cast<unsigned long long>(v.bytes_read()), b.size());

  RangeOptions strict;
  strict.merge_gap = 0;
  ExpectMatchesParse(b, Mode::kWhole, strict, "100k strict");
  RecordingReader each{b, {}};
  const RangeValidator s = ValidateRanges(b.size(), each, strict);
  ASSERT_EQ(s.status(), RangeStatus::kComplete);
  EXPECT_EQ(s.reads(), 1 + (dir + mib - 1) / mib + GapsOf(s.directory()).size());
}

// A hostile block: one tensor, then a gap of 1 GiB whose last byte is 1.
// P2 needs the whole gap, read in pieces of at most max_range; the verdict
// is Parse's on the same bytes (an anonymous mapping: untouched pages are
// the kernel's zero page, so the parse costs no memory either).
TEST(RangeReads, OneGibGapIsReadInBoundedPieces) {
  constexpr std::uint64_t kGap = std::uint64_t{1} << 30;
  Buffer head = testing::Build({{testing::TensorSpec{}}, std::nullopt, std::nullopt});
  testing::Put(head, 16, 64 + kGap, 8);  // payload_bytes: the tensor's 64 bytes, then the gap
  const std::size_t base = testing::PayloadBase(head);
  const std::size_t size = base + 64 + kGap;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* bytes = static_cast<std::uint8_t*>(p);
  std::memcpy(bytes, head.data(), std::min(head.size(), size));
  bytes[size - 1] = 1;
  const std::span<const std::uint8_t> file(bytes, size);
  const Result<Directory> want = Parse(file);
  ASSERT_FALSE(want.ok());
  std::uint64_t largest = 0;
  std::uint64_t reads = 0;
  const auto reader = [&](std::uint64_t offset, std::span<std::uint8_t> out, std::string*) {
    largest = std::max<std::uint64_t>(largest, out.size());
    ++reads;
    std::memcpy(out.data(), bytes + offset, out.size());
    return true;
  };
  const RangeValidator v = ValidateRanges(size, reader);
  ASSERT_EQ(v.status(), RangeStatus::kRejected);
  ExpectSameError(v.error(), want.error(), "1 GiB gap");
  EXPECT_EQ(v.error().rule, Rule::P2);
  EXPECT_EQ(largest, kDefaultMaxRange);
  // Header, descriptor, then the gap after the tensor's 8 bytes, 56 + 1 GiB
  // long, in 1 MiB pieces: every byte of the file but the tensor's.
  EXPECT_EQ(reads, 1 + 1 + (kGap + 56 + kDefaultMaxRange - 1) / kDefaultMaxRange);
  EXPECT_EQ(v.bytes_read(), size - 8);
  munmap(p, size);
}

// A reader that fails is an I/O outcome, never a verdict.
TEST(RangeReads, ReaderFailureIsNotAVerdict) {
  const Buffer b = testing::Build({{testing::TensorSpec{}, testing::TensorSpec{}}, {}, {}});
  for (int fail_at = 0; fail_at < 3; ++fail_at) {
    int n = 0;
    const auto reader = [&](std::uint64_t offset, std::span<std::uint8_t> out, std::string* why) {
      if (n++ == fail_at) {
        *why = "disk on fire";
        return false;
      }
      std::memcpy(out.data(), b.data() + offset, out.size());
      return true;
    };
    RangeOptions strict;
    strict.merge_gap = 0;
    const RangeValidator v = ValidateRanges(b.size(), reader, strict);
    EXPECT_EQ(v.status(), RangeStatus::kReadFailed) << fail_at;
    EXPECT_EQ(v.read_error(), "disk on fire");
    EXPECT_THROW((void)v.error(), std::bad_optional_access);
    EXPECT_THROW((void)v.directory(), std::bad_optional_access);
    EXPECT_FALSE(v.NextRange().has_value());
  }
  // Bytes of the wrong length handed over: a read failure too.
  RangeValidator short_read(b.size());
  ASSERT_EQ(short_read.NextRange(), (ByteRange{0, 64}));
  EXPECT_EQ(short_read.Provide(std::span(b).first(63)), RangeStatus::kReadFailed);
  EXPECT_EQ(short_read.read_error(), "the reader returned 63 bytes for the 64 bytes at offset 0");
  // And a failure after the verdict changes nothing.
  RecordingReader whole{b, {}};
  RangeValidator done = ValidateRanges(b.size(), whole);
  ASSERT_EQ(done.status(), RangeStatus::kComplete);
  EXPECT_EQ(done.ReaderFailed("late"), RangeStatus::kComplete);
  EXPECT_TRUE(done.read_error().empty());
}

// merge_gap is clamped to max_range / 2 (and max_range to at least 1): a
// request never spends more than half its length on covered bytes. Two gaps
// 400 covered bytes apart are read in one request when max_range is 1,000
// and merge_gap is anything from 401 up (clamped to 500), in two below.
TEST(RangeReads, MergeGapIsClampedToHalfTheMaxRange) {
  testing::TensorSpec small;  // f32 [2]: 8 bytes, then a gap of 56
  testing::TensorSpec large;  // f32 [100]: 400 bytes, then a gap of 48
  large.shape[0] = 100;
  const Buffer b = testing::Build({{small, large, small}, {}, {}});
  auto run = [&](std::uint64_t merge_gap, std::uint64_t max_range) {
    RangeOptions o;
    o.merge_gap = merge_gap;
    o.max_range = max_range;
    RecordingReader reader{b, {}};
    RangeValidator v = ValidateRanges(b.size(), reader, o);
    EXPECT_EQ(v.status(), RangeStatus::kComplete);
    return v;
  };
  const RangeValidator huge = run(UINT64_MAX, 1000);
  EXPECT_EQ(huge.options().merge_gap, 500u);
  EXPECT_EQ(huge.options().max_range, 1000u);
  const RangeValidator apart = run(400, 1000);
  const RangeValidator merged = run(401, 1000);
  // One read fewer and the 400 covered bytes more.
  EXPECT_EQ(huge.reads(), merged.reads());
  EXPECT_EQ(huge.bytes_read(), merged.bytes_read());
  EXPECT_EQ(merged.reads() + 1, apart.reads());
  EXPECT_EQ(merged.bytes_read(), apart.bytes_read() + 400);
  EXPECT_EQ(run(UINT64_MAX, 7).options().merge_gap, 3u);
  EXPECT_EQ(run(UINT64_MAX, 0).options().max_range, 1u);
  EXPECT_EQ(run(UINT64_MAX, 0).options().merge_gap, 0u);
}

// Once the status is not kNeedRange the validator wants nothing and takes
// nothing: no range, an empty Buffer(), and Filled()/Provide() that change
// neither the verdict nor the counts, whatever bytes a confused caller hands
// over (a complete block, a rejected one, a failed read).
TEST(RangeReads, AfterTheVerdictNothingIsWantedOrTaken) {
  testing::TensorSpec a;
  a.name = "alpha";
  testing::TensorSpec c;
  c.name = "gamma";
  const Buffer good = testing::Build({{a, c}, {}, {}});
  Buffer bad = good;
  bad[0] ^= 0xFF;  // not the magic: H1
  for (int outcome = 0; outcome < 3; ++outcome) {
    const Buffer& b = outcome == 1 ? bad : good;
    RangeValidator v(b.size());
    while (const auto want = v.NextRange()) {
      if (outcome == 2 && want->offset > 0) {
        v.ReaderFailed("gone");
        break;
      }
      const std::span<std::uint8_t> buf = v.Buffer();
      ASSERT_EQ(buf.size(), want->length);
      std::memcpy(buf.data(), b.data() + want->offset, buf.size());
      v.Filled();
    }
    const RangeStatus status = v.status();
    const RangeStatus expected[] = {RangeStatus::kComplete, RangeStatus::kRejected,
                                    RangeStatus::kReadFailed};
    ASSERT_EQ(status, expected[outcome]);
    const std::uint64_t reads = v.reads();
    const std::uint64_t bytes_read = v.bytes_read();
    for (int round = 0; round < 2; ++round) {
      EXPECT_FALSE(v.NextRange().has_value()) << outcome;
      EXPECT_TRUE(v.Buffer().empty()) << outcome;
      EXPECT_EQ(v.Filled(), status) << outcome;
      EXPECT_EQ(v.Provide(std::span(b).first(64)), status) << outcome;
      EXPECT_EQ(v.Provide({}), status) << outcome;
      EXPECT_EQ(v.ReaderFailed("late"), status) << outcome;
      EXPECT_EQ(v.status(), status);
      EXPECT_EQ(v.reads(), reads) << outcome;
      EXPECT_EQ(v.bytes_read(), bytes_read) << outcome;
    }
    if (outcome == 0) {
      EXPECT_EQ(v.directory().tensor_count(), 2u);
      EXPECT_EQ(v.directory().tensor(0).name, "alpha");
    } else if (outcome == 1) {
      EXPECT_EQ(v.error().rule, Rule::H1);
    } else {
      EXPECT_EQ(v.read_error(), "gone");
    }
  }
}

// The pull API by hand, with Buffer() and Filled(), and a validator moved
// after the verdict: the directory still refers to the kept bytes.
TEST(RangeReads, PullApiAndMove) {
  testing::TensorSpec a;
  a.name = "alpha";
  testing::TensorSpec c;
  c.name = "gamma";
  const Buffer b = testing::Build({{a, c}, {}, {}});
  RangeValidator v(b.size());
  std::vector<ByteRange> seen;
  while (const auto want = v.NextRange()) {
    seen.push_back(*want);
    const std::span<std::uint8_t> buf = v.Buffer();
    ASSERT_EQ(buf.size(), want->length);
    std::memcpy(buf.data(), b.data() + want->offset, buf.size());
    v.Filled();
  }
  ASSERT_EQ(v.status(), RangeStatus::kComplete);
  const std::uint64_t base = testing::PayloadBase(b);
  // Header, directory, then the one gap: after the first 8-byte f32[2]
  // payload, up to the second at 64.
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], (ByteRange{0, 64}));
  EXPECT_EQ(seen[1], (ByteRange{64, base - 64}));
  EXPECT_EQ(seen[2], (ByteRange{base + 8, 64 - 8}));
  const RangeValidator moved = std::move(v);
  EXPECT_EQ(moved.directory().tensor(1).name, "gamma");
  EXPECT_EQ(moved.directory().Find("alpha"), 0u);
}

}  // namespace
}  // namespace kiln
