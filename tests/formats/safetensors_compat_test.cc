// The safetensors reader and writer against the reference crate's rules
// (safetensors/src/tensor.rs at 0.6.2 and at main; docs/compatibility.md):
// what the crate reads, kiln reads the same way, or refuses for a stated
// reason; what kiln writes, 0.6.2 reads. Its own binary: the heap counter
// (tests/support/alloc_counter.h) replaces operator new.
#include <string>
#include <vector>

#include "../fuzz/alloc_guard.h"
#include "formats/test_util.h"
#include "gtest/gtest.h"
#include "kiln/formats/safetensors.h"
#include "support/alloc_counter.h"
#include "support/paths.h"

namespace kiln::formats {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes St(std::string_view json, std::size_t data_bytes) {
  Bytes b;
  for (int k = 0; k < 8; ++k) b.push_back(static_cast<std::uint8_t>(json.size() >> (8 * k)));
  b.insert(b.end(), json.begin(), json.end());
  b.resize(b.size() + data_bytes, 0);
  return b;
}

struct Case {
  const char* rule;  // the crate's check, or why kiln is stricter
  std::string json;
  std::size_t data_bytes;
  bool crate_reads;  // 0.6.2 and main alike
  bool kiln_reads;
  const char* kiln_error = "";  // a part of kiln's message when it refuses
};

std::string Entry(std::string_view dtype, std::string_view shape, std::string_view offsets) {
  return R"({"t":{"dtype":")" + std::string(dtype) + R"(","shape":[)" + std::string(shape) +
         R"(],"data_offsets":[)" + std::string(offsets) + "]}}";
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      // validate(): checked_mul over every dimension from 1, in order, a zero
      // included, then times the bits.
      {"shape product overflows before the zero",
       Entry("U8", "1099511627776,1099511627776,0", "0,0"), 0, false, false,
       "exceeds 2^32"},  // the Hub's dimension bound comes first
      {"shape product overflows before the zero", Entry("U8", "4294967296,4294967296,0", "0,0"), 0,
       false, false, "overflows"},
      // The crate reads these; @huggingface/hub refuses any dimension above 2^32.
      {"shape: the zero comes first, no overflow (the Hub: 2^40 > 2^32)",
       Entry("U8", "0,1099511627776,1099511627776", "0,0"), 0, true, false,
       "dimension 1099511627776 exceeds 2^32, the largest @huggingface/hub reads"},
      {"shape: 2^64-1 then 0 fits (the Hub: > 2^32)", Entry("U8", "18446744073709551615,0", "0,0"),
       0, true, false, "exceeds 2^32"},
      {"shape: (2^32-1)(2^32+1) = 2^64-1 fits (the Hub: 2^32+1 > 2^32)",
       Entry("U8", "4294967295,4294967297,0", "0,0"), 0, true, false,
       "dimension 4294967297 exceeds 2^32"},
      {"the Hub's largest dimension, 2^32, beside a 0", Entry("U8", "4294967296,0", "0,0"), 0, true,
       true},
      {"2^32-1 beside a 0", Entry("U8", "0,4294967295", "0,0"), 0, true, true},
      {"2^32+1 beside a 0", Entry("U8", "0,4294967297", "0,0"), 0, true, false,
       "dimension 4294967297 exceeds 2^32"},
      {"count times bits overflows: 2^62 U64", Entry("U64", "4294967296,1073741824", "0,0"), 0,
       false, false, "overflows"},
      // serde_json: whitespace around the header object.
      {"leading tab and newline", "\t\n\r {}", 0, true, true},
      {"leading space before a tensor", " " + Entry("U8", "1", "0,1"), 1, true, true},
      {"leading vertical tab", "\v{}", 0, false, false, "not a JSON object"},
      {"leading byte order mark", "\xEF\xBB\xBF{}", 0, false, false, "not a JSON object"},
      {"trailing newline", "{}\n", 0, true, true},
      {"trailing NUL", std::string("{}\0", 3), 0, false, false, "unexpected text"},
      // serde reads a struct from a sequence of its fields, exactly three;
      // @huggingface/hub reads only the object ("tensor is malformed").
      {"tensor entry as an array", R"({"t":["U8",[2],[0,2]]})", 2, true, false,
       "written as the array [dtype, shape, data_offsets]: refused, @huggingface/hub reads only "
       "the object form"},
      {"tensor entry as an array, after whitespace", "{\"t\": \n [\"U8\",[2],[0,2]]}", 2, true,
       false, "@huggingface/hub reads only the object form"},
      {"tensor entry as an array of 2", R"({"t":["U8",[2]]})", 2, false, false,
       "written as the array"},
      {"tensor entry as an array of 4", R"({"t":["U8",[2],[0,2],1]})", 2, false, false,
       "written as the array"},
      // Dtype names of the crate, and the bits of sub-byte ones.
      // Names 0.6.2 does not know: main reads them, 0.6.2 refuses ("crate_reads"
      // is what both versions read).
      {"F8_E4M3FNUZ (after 0.7.0)", Entry("F8_E4M3FNUZ", "2", "0,2"), 2, false, false,
       "0.6.2 does not read it"},
      {"F8_E5M2FNUZ (after 0.7.0)", Entry("F8_E5M2FNUZ", "2", "0,2"), 2, false, false,
       "0.6.2 does not read it"},
      {"C64 (0.7.0)", Entry("C64", "1", "0,8"), 8, false, false, "added in 0.7.0"},
      {"F4: kiln does not guess the nibble order", Entry("F4", "2", "0,1"), 1, true, false,
       "\"F4\" is not supported"},
      {"F4 of 3 elements is 12 bits", Entry("F4", "3", "0,1"), 1, false, false,
       "\"F4\" is not supported"},
      {"F6_E2M3: kiln has no 6-bit dtype", Entry("F6_E2M3", "4", "0,3"), 3, true, false,
       "\"F6_E2M3\" is not supported"},
      {"F6_E3M2: kiln has no 6-bit dtype", Entry("F6_E3M2", "4", "0,3"), 3, true, false,
       "\"F6_E3M2\" is not supported"},
      {"a name neither version knows", Entry("F8_E4M3FN", "1", "0,1"), 1, false, false,
       "not a safetensors dtype"},
      // Where the crate takes what a Kiln block cannot hold, or guesses.
      {"empty name: Kiln's empty name means unnamed",
       R"({"":{"dtype":"U8","shape":[1],)"
       R"("data_offsets":[0,1]}})",
       1, true, false, "empty name"},
      {"9 dimensions", Entry("U8", "1,1,1,1,1,1,1,1,1", "0,1"), 1, true, false,
       "more than 8 dimensions"},
      {"duplicate tensor: the crate keeps the last",
       R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
       R"("\u0074":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}})",
       1, true, false, "key \"t\" repeats"},
      {"duplicate metadata key: the crate keeps the last",
       R"({"__metadata__":{"k":"a","\u006b":"b"}})", 0, true, false, "metadata key \"k\" repeats"},
      {"unknown field: the crate ignores it",
       R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":[{}]}})", 1, true, false,
       "unknown field \"x\""},
      {"dtype as a map: serde's externally tagged enum",
       R"({"t":{"dtype":{"U8":null},"shape":[1],"data_offsets":[0,1]}})", 1, true, false,
       "expected a string"},
  };
  return cases;
}

TEST(SafetensorsCompat, ReadsWhatTheCrateReadsOrSaysWhy) {
  for (const Case& c : Cases()) {
    const auto r = ReadSafetensors(St(c.json, c.data_bytes));
    EXPECT_EQ(r.ok(), c.kiln_reads) << c.rule << ": " << (r.ok() ? "" : r.error().message);
    EXPECT_TRUE(c.crate_reads || !c.kiln_reads) << c.rule << ": kiln would be looser";
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find(c.kiln_error), std::string::npos)
          << c.rule << ": " << r.error().message;
    }
  }
}

// @huggingface/hub refuses a header longer than 25,000,000 bytes (the crate
// allows 100,000,000): whitespace after the object, to lengths just under, at
// and just over, under the caller's default limit and a raised one.
TEST(SafetensorsCompat, HeaderLengthStopsAtTheHubs25000000) {
  const std::string json = Entry("U8", "2", "0,2");
  for (const std::size_t length : {24'999'999u, 25'000'000u, 25'000'001u}) {
    std::string text = json;
    text.resize(length, ' ');
    const Bytes file = St(text, 2);
    for (const ReaderLimits& limits :
         {ReaderLimits{}, ReaderLimits{.max_header_bytes = 0xFFFF'FFFF}}) {
      const auto r = ReadSafetensors(file, limits);
      if (length <= 25'000'000) {
        EXPECT_TRUE(r.ok()) << length << ": " << r.error().message;
      } else {
        ASSERT_FALSE(r.ok()) << length;
        EXPECT_NE(r.error().message.find("safetensors header length 25000001 exceeds 25000000, "
                                         "the longest @huggingface/hub reads"),
                  std::string::npos)
            << r.error().message;
      }
    }
  }
}

// What kiln writes, the Hub reads: no dimension above 2^32, no header above
// 25,000,000 bytes (sized here by the length of the last name).
TEST(SafetensorsCompat, WriterStaysInsideTheHubsBounds) {
  const std::vector<std::uint64_t> at = {0, 1ull << 32};
  const std::vector<std::uint64_t> over = {0, (1ull << 32) + 1};
  const SafetensorsEntry fits[] = {{"w", Dtype::kU8, at, 0}};
  EXPECT_TRUE(SafetensorsHeader(fits).ok());
  const SafetensorsEntry too_big[] = {{"w", Dtype::kU8, over, 0}};
  const auto h = SafetensorsHeader(too_big);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("dimension 4294967297 of shape [0, 4294967297] exceeds 2^32, "
                                   "the largest @huggingface/hub reads"),
            std::string::npos)
      << h.error().message;

  const std::vector<std::uint64_t> shape = {0};
  const auto header_of = [&shape](std::size_t name_bytes) {
    const std::string name(name_bytes, 'n');
    const SafetensorsEntry entries[] = {{name, Dtype::kU8, shape, 0}};
    return SafetensorsHeader(entries);
  };
  const auto small = header_of(1);
  ASSERT_TRUE(small.ok());
  std::string_view text(small.value());
  text.remove_prefix(8);
  const std::size_t unpadded = text.find_last_not_of(' ') + 1;  // JSON before the padding
  const std::size_t at_limit = 1 + 25'000'000 - unpadded;       // unpadded 25,000,000: no padding
  for (const std::size_t extra : {0u, 8u}) {
    const auto r = header_of(at_limit - extra);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value().size(), 8 + 25'000'000 - extra);
  }
  const auto past = header_of(at_limit + 1);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.error().message.find("the safetensors header would be 25000008 bytes, above "
                                      "25000000, the longest @huggingface/hub reads"),
            std::string::npos)
      << past.error().message;
}

// 0.6.2 refuses C64 (added in 0.7.0) and the FNUZ names (after 0.7.0).
TEST(SafetensorsCompat, WriterRefusesDtypesThat062DoesNotRead) {
  const std::vector<std::uint64_t> shape = {2};
  for (const Dtype d : {Dtype::kC64, Dtype::kF8E4m3fnuz, Dtype::kF8E5m2fnuz}) {
    const SafetensorsEntry entries[] = {{"x", d, shape, 2 * GetDtypeInfo(d).bits / 8}};
    const auto h = SafetensorsHeader(entries);
    ASSERT_FALSE(h.ok()) << GetDtypeInfo(d).name;
    EXPECT_NE(h.error().message.find("0.6.2 refuses it"), std::string::npos) << h.error().message;
  }
  const SafetensorsEntry ok[] = {{"x", Dtype::kF8E4m3fn, shape, 2}};
  EXPECT_TRUE(SafetensorsHeader(ok).ok());
}

// A Kiln tensor of shape [2^40, 2^40, 0] is empty (rule D6 stops at the
// zero); the crate multiplies on and refuses the file. kiln wrote it.
TEST(SafetensorsCompat, WriterRefusesShapesTheCrateOverflowsOn) {
  const std::vector<std::uint64_t> huge = {1ull << 40, 1ull << 40, 0};
  const SafetensorsEntry entries[] = {{"w", Dtype::kU8, huge, 0}};
  const auto h = SafetensorsHeader(entries);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("the zero included, and overflow"), std::string::npos)
      << h.error().message;
  const std::vector<std::uint64_t> fine = {0, 1ull << 32, 1ull << 32};
  const SafetensorsEntry zero_first[] = {{"w", Dtype::kU8, fine, 0}};
  EXPECT_TRUE(SafetensorsHeader(zero_first).ok());
}

TEST(SafetensorsCompat, ConvertRefusesC64WithExit1AndWritesNothing) {
  testing_formats::TempDir tmp;
  const std::string in = std::string(::kiln::testing::GoldenDir()) + "/cases/ok-all-dtypes.klnt";
  const std::string out = tmp / "out.safetensors";
  const auto r = testing_formats::Convert({in, out});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("needs safetensors 0.7.0 or later"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// fuzz_safetensors' finding: a 65,601-byte file holding one tensor with a
// 65,536-byte name asked for more than the input plus 64 KiB (the name was
// built byte by byte, then copied into a set). A name without escapes is now
// a view into the input.
TEST(SafetensorsCompat, LongNameIsAViewNotACopy) {
  const std::string name(65'536, 'n');
  const Bytes file = St("{\"" + name + R"(":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
  const alloc::Scope scope;
  const auto r = ReadSafetensors(
      file,
      ReaderLimits{.max_tensors = 1, .max_metadata_entries = 1, .max_header_bytes = 100'000'000});
  const std::size_t asked = scope.Read().bytes;
  ASSERT_TRUE(r.ok()) << r.error().message;  // a Kiln block refuses the name later
  EXPECT_EQ(r.value().tensors[0].name.data(), reinterpret_cast<const char*>(file.data()) + 10);
  EXPECT_LT(asked, 4096u);
  const Bytes escaped = St("{\"" + std::string(20'000, 'n') +
                               R"(\u0041":{"dtype":"U8",)"
                               R"("shape":[1],"data_offsets":[0,1]}})",
                           1);
  const alloc::Scope scope2;
  const auto e = ReadSafetensors(escaped);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e.value().tensors[0].name.size(), 20'001u);
  EXPECT_LT(scope2.Read().bytes, 20'001u + 4096u);  // one decoded copy, sized once
}

// The readers' memory, restated (fuzz/alloc_guard.h): the files that cost
// the most per byte, a tensor or a metadata entry in as few bytes as the
// syntax allows, stay within 16 bytes asked per input byte plus 64 KiB.
// Before, 10,000 object entries asked for ten times the input and a minimal
// array entry could not be read; a vector that doubles asked for up to four
// times the tensors' size, a stable sort for a buffer of all of them.
TEST(SafetensorsCompat, MemoryIsBoundedByTheInput) {
  std::vector<std::string> names;
  for (char a = 'a'; a <= 'z'; ++a) {
    names.push_back(std::string(1, a));
    for (char b = 'a'; b <= 'z'; ++b) {
      names.push_back(std::string{a, b});
      for (char c = 'a'; c <= 'e'; ++c) names.push_back(std::string{a, b, c});
    }
  }
  const auto header = [&names](std::string_view prefix, std::string_view entry) {
    std::string json = "{";
    for (const std::string& n : names) {
      json +=
          (json.size() > 1 ? ",\"" : "\"") + std::string(prefix) + n + "\":" + std::string(entry);
    }
    return json + "}";
  };
  const std::string cases[] = {
      header("", R"(["U8",[],[0,0]])"),
      header("\\n", R"(["U8",[],[0,0]])"),
      header("", R"(["U8",[0,0,0,0,0,0,0,0],[0,0]])"),
      header("", R"({"dtype":"U8","shape":[0],"data_offsets":[0,0]})"),
      "{\"__metadata__\":" + header("\\n", R"("")") + "}",
      "{\"__metadata__\":" + header("", R"("")") + "}",
  };
  for (const std::string& json : cases) {
    const Bytes file = St(json, 0);
    const alloc::Scope scope;
    { (void)ReadSafetensors(file); }
    const std::size_t asked = scope.Read().bytes;
    EXPECT_LE(asked,
              file.size() * kiln_fuzz::kSafetensorsBytesPerInputByte + kiln_fuzz::kReaderBudget)
        << json.substr(0, 80) << ": " << file.size() << " bytes";
  }
}

// Repeated __metadata__ keys written with escapes are found as before.
TEST(SafetensorsCompat, EscapedMetadataKeysAreComparedDecoded) {
  std::string json = R"({"__metadata__":{)";
  for (int i = 0; i < 200; ++i) json += "\"k\\u00e9" + std::to_string(i) + "\":\"v\",";
  json += R"("k\u00e9)"
          "7\":\"w\",\"plain\":\"x\"}}";
  const auto r = ReadSafetensors(St(json, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("metadata key \"k\u00e97\" repeats"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace kiln::formats
