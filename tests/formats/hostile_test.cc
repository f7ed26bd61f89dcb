// The readers on hostile input: truncation, oversized lengths and counts,
// overflowing products, malformed headers. Each must fail with a message,
// never crash and never allocate by an unchecked number.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/formats/gguf.h"
#include "kiln/formats/npy.h"
#include "kiln/formats/safetensors.h"

namespace kiln::formats {
namespace {

// a + b in two steps: GCC 12 warns, falsely, of overlapping copies
// (-Wrestrict) in a literal + std::string inlined into a long test body.
std::string Cat(std::string a, const std::string& b) {
  a += b;
  return a;
}

using Bytes = std::vector<std::uint8_t>;

void PutLe(Bytes* b, std::uint64_t v, int size) {
  for (int k = 0; k < size; ++k) b->push_back(static_cast<std::uint8_t>(v >> (8 * k)));
}

void Append(Bytes* b, std::string_view s) { b->insert(b->end(), s.begin(), s.end()); }

// ---------------------------------------------------------------- npy

Bytes Npy(std::string_view dict, std::size_t data_bytes, std::uint8_t major = 1) {
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  PutLe(&b, dict.size(), major == 1 ? 2 : 4);
  Append(&b, dict);
  b.resize(b.size() + data_bytes, 0);
  return b;
}

std::string Dict(std::string_view shape, std::string_view descr = "<f4",
                 std::string_view fortran = "False") {
  return "{'descr': '" + std::string(descr) + "', 'fortran_order': " + std::string(fortran) +
         ", 'shape': " + std::string(shape) + ", }\n";
}

// Dict("(3,)") with `tail` in place of its final newline.
std::string DictEndingIn(std::string_view tail) {
  std::string d = Dict("(3,)");
  d.pop_back();
  return d + std::string(tail);
}

std::string NpyError(const Bytes& b) {
  const auto r = ReadNpy(b);
  return r.ok() ? "(accepted)" : r.error().message;
}

TEST(NpyHostile, EveryPrefixOfAValidFileIsRefused) {
  const std::vector<std::uint64_t> shape = {2, 3};
  const auto header = NpyHeader(Dtype::kF32, shape);
  ASSERT_TRUE(header.ok());
  Bytes file(header.value().begin(), header.value().end());
  EXPECT_EQ(file.size() % 64, 0u);  // data aligned as NumPy aligns it
  file.resize(file.size() + 24, 0);
  ASSERT_TRUE(ReadNpy(file).ok()) << NpyError(file);
  for (std::size_t n = 0; n < file.size(); ++n) {
    EXPECT_FALSE(ReadNpy(std::span(file).first(n)).ok()) << n;
  }
}

TEST(NpyHostile, OversizedAndTruncatedHeaders) {
  Bytes huge = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0xff};
  EXPECT_NE(NpyError(huge).find("header length 4294967295 exceeds the limit"), std::string::npos);
  Bytes cut = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xe8, 0x03, '{', '}'};
  EXPECT_NE(NpyError(cut).find("header of 1000 bytes is truncated"), std::string::npos);
  EXPECT_NE(NpyError(Npy(Dict("(1,)"), 4, 4)).find("version 4.0"), std::string::npos);
  const auto v4 = ReadNpy(Npy(Dict("(1,)"), 4, 4));
  ASSERT_FALSE(v4.ok());
  EXPECT_EQ(v4.error().offset, 6u);  // the major version byte
  EXPECT_NE(NpyError({'N', 'U', 'M', 'P', 'Y'}).find("not an npy file"), std::string::npos);
  // A file that is whole but for one byte of its magic is not an npy file.
  for (std::size_t at = 0; at < 6; ++at) {
    Bytes wrong = Npy(Dict("(1,)"), 4);
    ASSERT_TRUE(ReadNpy(wrong).ok());
    wrong[at] ^= 0x20;
    EXPECT_EQ(NpyError(wrong), "not an npy file: the magic \\x93NUMPY is missing") << at;
  }
}

TEST(NpyHostile, ShapeProductsThatOverflow) {
  EXPECT_NE(NpyError(Npy(Dict("(4294967296, 4294967296, 2)"), 0)).find("exceeds 2^63-1 bytes"),
            std::string::npos);
  EXPECT_NE(NpyError(Npy(Dict("(4611686018427387904,)"), 0)).find("exceeds 2^63-1 bytes"),
            std::string::npos);
  EXPECT_NE(NpyError(Npy(Dict("(99999999999999999999999,)"), 0)).find("exceeds 2^64-1"),
            std::string::npos);
}

// A header of `length` bytes (the dict, spaces, a newline) in format `major`.
Bytes PaddedNpy(std::size_t length, std::uint8_t major) {
  std::string dict = DictEndingIn("");
  dict.append(length - dict.size() - 1, ' ');
  return Npy(dict + "\n", 12, major);
}

// Each case is one of numpy.load's checks (NumPy 1.24, numpy/lib/format.py
// and the ndarray constructor), at its boundary: kiln reads a file exactly
// when numpy.load does, or is stricter on purpose (the cases marked
// "stricter:", listed in docs/compatibility.md). tests/loaders/numpy checks
// the same files against numpy.load itself.
struct NpyRuleCase {
  const char* rule;
  Bytes file;
  const char* refusal;  // nullptr: read
};

std::vector<NpyRuleCase> NumpyRuleCases() {
  const auto u1 = [](std::string_view shape) { return Npy(Dict(shape, "|u1"), 0); };
  const auto f4 = [](std::string_view shape) { return Npy(Dict(shape), 0); };
  const auto c16 = [](std::string_view shape) { return Npy(Dict(shape, "<c16"), 0); };
  const char* kTooBig = "more than NumPy can hold";
  return {
      // max_header_size: len(header) > 10000 is refused.
      {"header of 10,000 bytes, v1", PaddedNpy(10'000, 1), nullptr},
      {"header of 10,000 bytes, v3", PaddedNpy(10'000, 3), nullptr},
      {"header of 10,001 bytes, v1", PaddedNpy(10'001, 1), "exceeds the limit of 10000 bytes"},
      {"header of 10,001 bytes, v2", PaddedNpy(10'001, 2), "exceeds the limit of 10000 bytes"},
      {"header of 65,535 bytes, v1", PaddedNpy(65'535, 1), "exceeds the limit of 10000 bytes"},
      // The shape of an empty array: itemsize x nonzero dims <= 2^63-1.
      {"u1 (0, 2^63-1)", u1("(0, 9223372036854775807)"), nullptr},
      {"u1 (0, 2^63)", u1("(0, 9223372036854775808)"), kTooBig},
      {"u1 (2^63, 0)", u1("(9223372036854775808, 0)"), kTooBig},
      {"u1 (2^64-1, 0)", u1("(18446744073709551615, 0)"), kTooBig},
      {"u1 (2^40, 2^40, 0)", u1("(1099511627776, 1099511627776, 0)"), kTooBig},
      {"f4 (0, 2^61-1)", f4("(0, 2305843009213693951)"), nullptr},
      {"f4 (0, 2^61)", f4("(0, 2305843009213693952)"), kTooBig},
      {"f4 (0, 2^31, 2^29)", f4("(0, 2147483648, 536870912)"), nullptr},
      {"f4 (0, 2^31, 2^30)", f4("(0, 2147483648, 1073741824)"), kTooBig},
      {"c16 (0, 2^59-1)", c16("(0, 576460752303423487)"), nullptr},
      {"c16 (0, 2^59)", c16("(0, 576460752303423488)"), kTooBig},
      // _filter_header drops the L of a Python 2 long in versions 1.0 and 2.0.
      {"3L in v1", Npy(Dict("(3L,)"), 12, 1), nullptr},
      {"3L in v2", Npy(Dict("(3L,)"), 12, 2), nullptr},
      {"3L in v3", Npy(Dict("(3L,)"), 12, 3), "Python 2 long (\"3L\") in a version 3.0"},
      // Whitespace around the dict: Python's tokenizer refuses "\n {" and,
      // in version 3.0, "}\n ".
      {"stricter: space before {", Npy(Cat(" ", Dict("(3,)")), 12), "does not start with '{'"},
      {"stricter: newline before {", Npy(Cat("\n", Dict("(3,)")), 12), "does not start with '{'"},
      {"newline and space after }", Npy(DictEndingIn("\n "), 12, 3), "unexpected text after"},
      {"two newlines after }", Npy(DictEndingIn("\n\n"), 12), "unexpected text after"},
      {"stricter: CR LF after }", Npy(DictEndingIn("\r\n"), 12), "unexpected text after"},
      {"spaces and a tab after }", Npy(DictEndingIn("  \t\n"), 12), nullptr},
      {"nothing after }", Npy(DictEndingIn(""), 12), nullptr},
      {"CR, LF and tab inside",
       Npy("{'descr':\r'<f4',\n\t'fortran_order': False, 'shape': (\r\n3,\n) }", 12), nullptr},
      // Fortran order: an empty array has no bytes to transpose.
      {"Fortran (0, 2, 3)", Npy(Dict("(0, 2, 3)", "<f4", "True"), 0), nullptr},
      {"Fortran (2, 3)", Npy(Dict("(2, 3)", "<f4", "True"), 24), "Fortran order"},
      {"Fortran (1, 3, 1)", Npy(Dict("(1, 3, 1)", "<f4", "True"), 12), nullptr},
  };
}

TEST(NpyHostile, NumpyLoadBoundaries) {
  for (const NpyRuleCase& c : NumpyRuleCases()) {
    const auto r = ReadNpy(c.file);
    if (c.refusal == nullptr) {
      EXPECT_TRUE(r.ok()) << c.rule << ": " << r.error().message;
    } else if (r.ok()) {
      ADD_FAILURE() << c.rule << ": read, kiln refuses it (" << c.refusal << ")";
    } else {
      EXPECT_NE(r.error().message.find(c.refusal), std::string::npos)
          << c.rule << ": " << r.error().message;
    }
  }
}

TEST(NpyHostile, HeaderLimitIsAReaderLimit) {
  ReaderLimits limits;
  EXPECT_EQ(limits.max_npy_header_bytes, 10'000u);  // NumPy's max_header_size
  EXPECT_FALSE(ReadNpy(PaddedNpy(10'001, 1), limits).ok());
  limits.max_npy_header_bytes = 10'001;
  EXPECT_TRUE(ReadNpy(PaddedNpy(10'001, 1), limits).ok());
  limits.max_npy_header_bytes = 100;
  EXPECT_NE(NpyError(PaddedNpy(128, 1)).find("(accepted)"), std::string::npos);
  EXPECT_FALSE(ReadNpy(PaddedNpy(128, 1), limits).ok());
}

TEST(Npy, WriterRefusesWhatNumpyCannotHold) {
  const std::vector<std::uint64_t> edge = {0, 9223372036854775807u};
  const std::vector<std::uint64_t> past = {0, 9223372036854775808u};
  EXPECT_TRUE(NpyCanHold(Dtype::kU8, edge));
  EXPECT_TRUE(NpyHeader(Dtype::kU8, edge).ok());
  EXPECT_FALSE(NpyCanHold(Dtype::kU8, past));
  EXPECT_FALSE(NpyCanHold(Dtype::kU16, edge));
  EXPECT_FALSE(NpyCanHold(Dtype::kBf16, std::vector<std::uint64_t>{2}));
  const auto header = NpyHeader(Dtype::kU8, past);
  ASSERT_FALSE(header.ok());
  EXPECT_NE(header.error().message.find("more than NumPy can hold"), std::string::npos);
  // What it writes, it reads back.
  Bytes file;
  Append(&file,
         NpyHeader(Dtype::kF32, std::vector<std::uint64_t>{0, 2305843009213693951u}).value());
  const auto back = ReadNpy(file);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value().shape, (std::vector<std::uint64_t>{0, 2305843009213693951u}));
}

// The writer's helpers on what NumPy has no dtype for, and at the rank
// bound: 8 dimensions are held, 9 are not.
TEST(Npy, WriterHelpersAtTheirBounds) {
  EXPECT_EQ(NpyDescr(Dtype::kF32), "<f4");
  EXPECT_EQ(NpyDescr(Dtype::kBf16), std::nullopt);
  const auto bf16 = NpyHeader(Dtype::kBf16, std::vector<std::uint64_t>{2});
  ASSERT_FALSE(bf16.ok());
  EXPECT_EQ(bf16.error().message, "NumPy has no dtype for kiln's bf16");
  const std::vector<std::uint64_t> eight(8, 1), nine(9, 1);
  EXPECT_TRUE(NpyCanHold(Dtype::kF32, eight));
  EXPECT_TRUE(NpyHeader(Dtype::kF32, eight).ok());
  EXPECT_FALSE(NpyCanHold(Dtype::kF32, nine));
  const auto too_many = NpyHeader(Dtype::kF32, nine);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().message, "shape has more than 8 dimensions");
}

TEST(NpyHostile, DataMustMatchTheShapeExactly) {
  EXPECT_NE(NpyError(Npy(Dict("(3,)"), 11)).find("needs 12 data bytes, the file has 11"),
            std::string::npos);
  EXPECT_NE(NpyError(Npy(Dict("(3,)"), 13)).find("needs 12 data bytes, the file has 13"),
            std::string::npos);
}

// Each malformed header is refused for its own fault, named with its byte:
// the data (4 bytes, one f4; 16 for the (2, 2) array) fits every shape, so
// no refusal can come from the data instead.
TEST(NpyHostile, StrictHeaderSyntax) {
  const std::pair<const char*, const char*> bad[] = {
      {"{'descr': '<f4', 'shape': (1,), }",  // a missing key, each of the three
       "npy header lacks 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (1,), }", "npy header lacks 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, }", "npy header lacks 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",  // extra key
       "npy header byte 59: unexpected key \"x\""},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
       "npy header byte 24: key \"descr\" repeats"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}",  // an int
       "npy header byte 53: shape (n) is not a tuple; (n,) is"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 1)}",  // no comma
       "npy header byte 53: expected ',' or ')' in shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}",
       "npy header byte 67: shape has more than 8 dimensions"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
       "npy header byte 51: expected a non-negative integer"},
      {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}",
       "npy header byte 13: escape sequences in strings are not supported"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}",
       "npy header byte 34: expected True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (01,)}",
       "npy header byte 53: integer with a leading zero"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
       "npy header byte 56: unexpected text after the dict (only spaces or tabs, then one "
       "newline)"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
       "npy header byte 17: expected ',' or '}'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
       "npy header byte 16: expected ',' or '}'"},
      {"['descr', '<f4']", "npy header byte 0: the header does not start with '{'"},
      {"{'descr': '|f4', 'fortran_order': False, 'shape': (1,)}",  // no byte order
       "npy descr \"|f4\": byte order '|' is not '<' or '>'"},
      {"{'descr': '=f4', 'fortran_order': False, 'shape': (1,)}",
       "npy descr \"=f4\": byte order '=' is not '<' or '>'"},
      {"{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}",
       "npy dtype \"<f16\" has no kiln equivalent: not supported"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}",
       "npy array of shape (2, 2) is in Fortran order: not supported (save "
       "numpy.ascontiguousarray(a) instead)"},
      {"", "npy header byte 0: the header does not start with '{'"},
      // Text that ends where a string or a value is due.
      {"{", "npy header byte 1: expected a quoted string"},
      {"{'descr':", "npy header byte 9: expected a quoted string"},
      {"{'descr': ", "npy header byte 10: expected a quoted string"},
  };
  for (const auto& [dict, message] : bad) {
    const std::size_t data =
        std::string_view(dict).find("(2, 2)") != std::string_view::npos ? 16 : 4;
    EXPECT_EQ(NpyError(Npy(dict, data)), message) << dict;
  }
}

// A one-byte dtype has no byte order to swap: '|', '<' and '>' all read it
// unswapped; any other order character is refused.
TEST(NpyHostile, ByteOrdersAndSwapWidths) {
  for (const std::string_view descr : {"|u1", "<u1", ">u1", "|i1", ">b1"}) {
    const auto r = ReadNpy(Npy(Dict("(4,)", descr), 4));
    ASSERT_TRUE(r.ok()) << descr << ": " << r.error().message;
    EXPECT_EQ(r.value().swap_width, 0u) << descr;
  }
  // Little-endian wider types are not swapped either; big-endian ones are,
  // in units of their width (a complex number's halves each on its own).
  struct Wider {
    std::string_view descr;
    std::size_t bytes;  // one element
    unsigned swap_width;
  };
  const Wider wider[] = {{"<f4", 4, 0}, {"<c8", 8, 0}, {">f4", 4, 4}, {">i2", 2, 2}, {">c8", 8, 4}};
  for (const Wider& w : wider) {
    const auto r = ReadNpy(Npy(Dict("(1,)", w.descr), w.bytes));
    ASSERT_TRUE(r.ok()) << w.descr << ": " << r.error().message;
    EXPECT_EQ(r.value().swap_width, w.swap_width) << w.descr;
  }
  EXPECT_EQ(NpyError(Npy(Dict("(4,)", "=u1"), 4)),
            "npy descr \"=u1\": byte order '=' is not '<' or '>'");
}

// A dtype kiln has no equivalent for is named with why, by its kind (the
// descr's second character), and a descr too short to have a kind is
// refused all the same.
TEST(NpyHostile, UnsupportedDtypesSayWhy) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"|O", "npy dtype \"|O\" is an object array (Python objects, not numbers): not supported"},
      {"<U4", "npy dtype \"<U4\" is a string dtype: not supported"},
      {"|V8", "npy dtype \"|V8\" is a void (raw record) dtype: not supported"},
      {"x", "npy dtype \"x\" has no kiln equivalent: not supported"},
      {"", "npy descr is empty"},
  };
  for (const auto& [descr, why] : cases) {
    EXPECT_EQ(NpyError(Npy(Dict("(1,)", descr), 16)), why) << descr;
  }
  // A dtype's refusal points at the header dict (after 10 bytes in version 1).
  const auto r = ReadNpy(Npy(Dict("(1,)", "<f16"), 16));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().offset, 10u);
}

TEST(NpyHostile, WhatNumpyWritesIsAccepted) {
  EXPECT_TRUE(ReadNpy(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }", 12)).ok());
  EXPECT_TRUE(ReadNpy(Npy("{\"descr\": \"<f4\", \"shape\": (), \"fortran_order\": True}", 4)).ok());
  const auto be = ReadNpy(Npy(Dict("(2,)", ">c16"), 32, 2));
  ASSERT_TRUE(be.ok());
  EXPECT_EQ(be.value().swap_width, 8u);  // each f64 half on its own
  EXPECT_EQ(be.value().dtype, Dtype::kC128);
}

TEST(Npy, CopySwappedReversesEachUnit) {
  const Bytes b = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const Bytes swapped = {4, 3, 2, 1, 8, 7, 6, 5, 9};  // the partial unit as it is
  Bytes whole(b.size());
  CopySwapped(b, 0, whole, 4);
  EXPECT_EQ(whole, swapped);
  // In chunks that split units: the same bytes.
  for (std::size_t chunk = 1; chunk <= b.size(); ++chunk) {
    Bytes out(b.size());
    for (std::size_t at = 0; at < b.size(); at += chunk) {
      const std::size_t n = std::min(chunk, b.size() - at);
      CopySwapped(b, at, std::span(out).subspan(at, n), 4);
    }
    EXPECT_EQ(out, swapped) << "chunks of " << chunk;
  }
  Bytes copied(b.size());
  CopySwapped(b, 0, copied, 1);  // one-byte units: a copy
  EXPECT_EQ(copied, b);
}

// Every length against every width, whole and one byte at a time: full
// units reversed, a trailing partial unit of any length copied as it is
// (its mirrored positions fall at and past the end of the source), and
// widths 0 and 1 a plain copy.
TEST(Npy, CopySwappedOnEveryPartialUnit) {
  for (const unsigned width : {0u, 1u, 2u, 4u, 8u, 16u}) {
    for (std::size_t n = 0; n <= 40; ++n) {
      Bytes source(n);
      for (std::size_t i = 0; i < n; ++i) source[i] = static_cast<std::uint8_t>(i + 1);
      Bytes want = source;
      if (width >= 2) {
        for (std::size_t unit = 0; unit + width <= n; unit += width) {
          std::reverse(want.begin() + static_cast<std::ptrdiff_t>(unit),
                       want.begin() + static_cast<std::ptrdiff_t>(unit + width));
        }
      }
      Bytes whole(n);
      CopySwapped(source, 0, whole, width);
      EXPECT_EQ(whole, want) << "width " << width << ", " << n << " bytes";
      Bytes bytewise(n);
      for (std::size_t at = 0; at < n; ++at) {
        CopySwapped(source, at, std::span(bytewise).subspan(at, 1), width);
      }
      EXPECT_EQ(bytewise, want) << "width " << width << ", " << n << " bytes, one at a time";
    }
  }
}

// ---------------------------------------------------------------- safetensors

Bytes St(std::string_view json, std::size_t data_bytes) {
  Bytes b;
  PutLe(&b, json.size(), 8);
  Append(&b, json);
  b.resize(b.size() + data_bytes, 0);
  return b;
}

std::string StError(const Bytes& b) {
  const auto r = ReadSafetensors(b);
  return r.ok() ? "(accepted)" : r.error().message;
}

TEST(SafetensorsHostile, HeaderLengths) {
  Bytes big;
  PutLe(&big, std::uint64_t{1} << 63, 8);
  EXPECT_NE(StError(big).find("header length 9223372036854775808 exceeds the limit"),
            std::string::npos);
  Bytes limit;
  PutLe(&limit, 100'000'001, 8);
  EXPECT_NE(StError(limit).find("exceeds the limit of 100000000"), std::string::npos);
  Bytes hub;
  PutLe(&hub, 25'000'001, 8);
  EXPECT_NE(StError(hub).find("exceeds 25000000, the longest @huggingface/hub reads"),
            std::string::npos);
  Bytes cut;
  PutLe(&cut, 25'000'000, 8);
  Append(&cut, "{}");
  EXPECT_NE(StError(cut).find("only 2 bytes follow"), std::string::npos);
  EXPECT_NE(StError({1, 2, 3}).find("too short"), std::string::npos);
  // Each is refused at byte 0, where the header length is.
  for (const Bytes* b : {&big, &limit, &hub, &cut}) {
    const auto r = ReadSafetensors(*b);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().offset, 0u) << r.error().message;
  }
  const auto short_file = ReadSafetensors(Bytes{1, 2, 3});
  ASSERT_FALSE(short_file.ok());
  EXPECT_EQ(short_file.error().offset, 0u);
  // A caller's limit: a header of exactly that many bytes is read, one
  // more is refused.
  ReaderLimits forty;
  forty.max_header_bytes = 40;
  const std::string at_limit = "{}" + std::string(38, ' ');
  const auto read = ReadSafetensors(St(at_limit, 0), forty);
  EXPECT_TRUE(read.ok()) << read.error().message;
  const auto past = ReadSafetensors(St(at_limit + " ", 0), forty);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().message, "safetensors header length 41 exceeds the limit of 40");
  EXPECT_EQ(past.error().offset, 0u);
}

// The dtype table both ways: every name kiln reads maps to its dtype and
// back; a name the crate knows that kiln has no dtype for, and a name that
// is no dtype, map to none; a kiln dtype safetensors cannot name has no
// name.
TEST(Safetensors, DtypeNamesBothWays) {
  for (const char* name : {"F64", "F32", "BF16", "I8", "U64", "BOOL", "F8_E4M3", "F8_E8M0"}) {
    const auto dtype = DtypeFromSafetensors(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    EXPECT_EQ(SafetensorsDtypeName(*dtype), std::optional<std::string_view>(name));
  }
  EXPECT_EQ(DtypeFromSafetensors("F4"), std::nullopt);
  EXPECT_EQ(DtypeFromSafetensors("F6_E2M3"), std::nullopt);
  EXPECT_EQ(DtypeFromSafetensors("X"), std::nullopt);
  EXPECT_EQ(DtypeFromSafetensors(""), std::nullopt);
  EXPECT_EQ(SafetensorsDtypeName(Dtype::kF4E2m1), std::nullopt);
}

TEST(SafetensorsHostile, EveryPrefixOfAValidFileIsRefused) {
  const Bytes file =
      St(R"({"__metadata__":{"a":"b"},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
  ASSERT_TRUE(ReadSafetensors(file).ok()) << StError(file);
  for (std::size_t n = 0; n < file.size(); ++n) {
    EXPECT_FALSE(ReadSafetensors(std::span(file).first(n)).ok()) << n;
  }
}

TEST(SafetensorsHostile, LayoutChecks) {
  auto one = [](std::string_view entry) {
    return std::string(R"({"x":)") + std::string(entry) + "}";
  };
  EXPECT_NE(StError(St(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), 4))
                .find("do not lie in the 4-byte data section"),
            std::string::npos);
  EXPECT_NE(StError(St(one(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})"), 8))
                .find("is 12 bytes, data_offsets cover 8"),
            std::string::npos);
  EXPECT_NE(StError(St(one(R"({"dtype":"F32","shape":[4294967296,4294967296,2],)"
                           R"("data_offsets":[0,8]})"),
                       8))
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(
      StError(St(one(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})"), 8)).find("do not lie"),
      std::string::npos);
  const std::string two = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                          R"("b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})";
  EXPECT_NE(StError(St(two, 6)).find("overlap"), std::string::npos);
  const std::string gap = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                          R"("b":{"dtype":"U8","shape":[4],"data_offsets":[6,10]}})";
  EXPECT_NE(StError(St(gap, 10)).find("bytes [4, 6) belong to no tensor"), std::string::npos);
  EXPECT_NE(StError(St(one(R"({"dtype":"U8","shape":[4],"data_offsets":[0,4]})"), 5))
                .find("bytes [4, 5) belong to no tensor"),
            std::string::npos);
  EXPECT_NE(StError(St(one(R"({"dtype":"F4","shape":[2],"data_offsets":[0,1]})"), 1))
                .find("dtype \"F4\" is not supported"),
            std::string::npos);
}

TEST(SafetensorsHostile, StrictJson) {
  const char* bad[] = {
      "\f{}",  // form feed is not JSON whitespace
      R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"extra":1}})",
      R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"dtype":"U8"}})",
      R"({"x":{"dtype":"U8","shape":[1]}})",
      R"({"x":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})",
      R"({"x":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}})",
      R"({"x":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}})",
      R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,18446744073709551616]}})",
      R"({"x":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}})",
      R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})",
      R"({"\udc00":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      R"({"\ud800x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      "{\"a\x01\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
      "{\"\xff\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
      R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}} x)",
      R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},})",
      R"({"__metadata__":{"a":1},"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      R"({"__metadata__":{"a":"b","a":"c"},"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})",
      R"({"x":[1]})",
  };
  for (const char* json : bad) EXPECT_FALSE(ReadSafetensors(St(json, 1)).ok()) << json;
}

TEST(Safetensors, ValidCornerCases) {
  EXPECT_TRUE(ReadSafetensors(St("{}      ", 0)).ok());
  const auto r = ReadSafetensors(
      St(R"({"__metadata__":null,"e":{"dtype":"F64","shape":[0,5],"data_offsets":[0,0]},)"
         R"("s":{"shape":[],"data_offsets":[0,2],"dtype":"BF16"},"\u00fc\ud83d\ude00":)"
         R"({"dtype":"U8","shape":[1],"data_offsets":[2,3]}})",
         3));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().tensors.size(), 3u);
  EXPECT_EQ(r.value().tensors[2].name, "\u00fc\U0001F600");
}

// A \u escape decodes to the shortest UTF-8 sequence: one byte below U+0080,
// two below U+0800, three below U+10000, four above. The code points on each
// side of those bounds, and hex digits in either case (a..f, A..F), are read.
TEST(Safetensors, EscapesAtTheUtf8LengthBoundaries) {
  const std::pair<std::string_view, std::string_view> names[] = {
      {R"(\u007f)", "\x7f"},         {R"(\u0080)", "\xc2\x80"},
      {R"(\u07FF)", "\xdf\xbf"},     {R"(\u0800)", "\xe0\xa0\x80"},
      {R"(\uffFd)", "\xef\xbf\xbd"}, {R"(\ud800\udc00)", "\xf0\x90\x80\x80"},
      {R"(\u00aA)", "\xc2\xaa"},     {R"(\u00Af)", "\xc2\xaf"},
  };
  std::string json = "{";
  std::size_t offset = 0;
  for (const auto& [escaped, utf8] : names) {
    if (offset > 0) json += ",";
    json += "\"" + std::string(escaped) + R"(":{"dtype":"U8","shape":[1],"data_offsets":[)" +
            std::to_string(offset) + "," + std::to_string(offset + 1) + "]}";
    ++offset;
  }
  json += "}";
  const auto r = ReadSafetensors(St(json, offset));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().tensors.size(), std::size(names));
  for (std::size_t i = 0; i < std::size(names); ++i) {
    EXPECT_EQ(r.value().tensors[i].name, names[i].second) << names[i].first;
  }
  // A letter past f, in either case, is not a hex digit.
  for (const std::string_view bad : {R"(\u00g0)", R"(\u00G0)", R"(\u00a`)", R"(\u00a@)"}) {
    const std::string one =
        "{\"" + std::string(bad) + R"(":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
    EXPECT_NE(StError(St(one, 1)).find("bad hex digit in \\u escape"), std::string::npos) << bad;
  }
}

// A number with a fraction or an exponent is refused as that, where it
// stands, not later as the punctuation after its integer part.
TEST(SafetensorsHostile, AFractionOrExponentIsNamed) {
  for (const std::string_view number : {"1.0", "1e3", "2E0"}) {
    const std::string json =
        R"({"x":{"dtype":"U8","shape":[)" + std::string(number) + R"(],"data_offsets":[0,1]}})";
    EXPECT_EQ(StError(St(json, 1)),
              "safetensors header byte 29: expected an integer, not a fraction or exponent")
        << number;
  }
}

// A header whose last byte is a digit ends inside an array: the byte after
// it belongs to the data, and an 'e' there is not read as an exponent.
TEST(SafetensorsHostile, AHeaderEndingInADigitIsTruncatedWhateverFollows) {
  const std::string_view json = R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1)";
  for (const char next : {'e', 'E', '.', ']', '0'}) {
    Bytes b = St(json, 0);
    b.push_back(static_cast<std::uint8_t>(next));
    EXPECT_EQ(StError(b), "safetensors header byte 50: data_offsets is not [begin, end]") << next;
  }
}

TEST(Safetensors, HeaderIsCompactAndPaddedToEight) {
  const std::vector<std::uint64_t> shape = {2, 3};
  const SafetensorsEntry entries[] = {{"a\tb", Dtype::kF32, shape, 24}, {"c", Dtype::kU8, {}, 1}};
  const auto h = SafetensorsHeader(entries);
  ASSERT_TRUE(h.ok());
  const std::string json = R"({"a\tb":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                           R"("c":{"dtype":"U8","shape":[],"data_offsets":[24,25]}})";
  EXPECT_EQ(h.value().substr(8, json.size()), json);
  EXPECT_EQ((h.value().size() - 8) % 8, 0u);
  EXPECT_EQ(static_cast<std::uint8_t>(h.value()[0]), h.value().size() - 8);
  const SafetensorsEntry reserved[] = {{"__metadata__", Dtype::kF32, {}, 4}};
  EXPECT_FALSE(SafetensorsHeader(reserved).ok());
}

// A header whose data_offsets disagree with dtype and shape is refused by
// every safetensors reader, so the writer does not write it: a byte_length
// one short, one over, or left out (a scalar U8 is one byte, not zero). A
// writer's error has no input file to point into: offset 0.
TEST(Safetensors, HeaderRefusesALengthThatDisagreesWithDtypeAndShape) {
  const std::vector<std::uint64_t> shape = {2, 3};
  for (const std::uint64_t length : {23u, 25u}) {
    const SafetensorsEntry entries[] = {{"w", Dtype::kF32, shape, length}};
    const auto h = SafetensorsHeader(entries);
    ASSERT_FALSE(h.ok()) << length;
    EXPECT_EQ(h.error().ToString(),
              "tensor \"w\": " + std::to_string(length) +
                  " bytes, but F32 of shape [2, 3] is 24 bytes; safetensors readers refuse "
                  "data_offsets that disagree with dtype and shape (at byte 0)");
  }
  SafetensorsEntry forgotten;  // byte_length not set
  forgotten.name = "c";
  forgotten.dtype = Dtype::kU8;
  const auto h = SafetensorsHeader(std::span(&forgotten, 1));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().offset, 0u);
  EXPECT_NE(h.error().message.find("0 bytes, but U8 of shape [] is 1 bytes"), std::string::npos)
      << h.error().message;
  const std::vector<std::uint64_t> empty = {4, 0};
  SafetensorsEntry none;
  none.name = "e";
  none.shape = empty;
  EXPECT_TRUE(SafetensorsHeader(std::span(&none, 1)).ok());
}

// A name holding every control character, a quote, a backslash, DEL and a
// two-byte character is written as json.dumps(ensure_ascii=False) writes it
// (short escapes where JSON has them, \\u00xx for the other control
// characters, the rest as is) and reads back as the same name.
TEST(Safetensors, HeaderEscapesEveryControlCharacter) {
  std::string name;
  for (char c = 1; c < 0x20; ++c) name += c;
  name += "\"\\\x7f\xc3\xa9";
  const SafetensorsEntry entries[] = {{name, Dtype::kU8, {}, 1}};
  const auto h = SafetensorsHeader(entries);
  ASSERT_TRUE(h.ok()) << h.error().message;
  const std::string quoted =
      "\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\\u00"
      "10\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001"
      "d\\u001e\\u001f\\\"\\\\\x7f\xc3\xa9\"";
  EXPECT_EQ(h.value().substr(9, quoted.size()), quoted);
  Bytes file(h.value().begin(), h.value().end());
  file.push_back(0);
  const auto back = ReadSafetensors(file);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back.value().tensors.size(), 1u);
  EXPECT_EQ(back.value().tensors[0].name, name);
}

// ---------------------------------------------------------------- gguf

struct Gguf {
  Bytes b;
  Gguf(std::uint32_t version, std::uint64_t tensors, std::uint64_t kvs) {
    Append(&b, "GGUF");
    U32(version).U64(tensors).U64(kvs);
  }
  Gguf& U32(std::uint32_t v) { return PutLe(&b, v, 4), *this; }
  Gguf& U64(std::uint64_t v) { return PutLe(&b, v, 8), *this; }
  Gguf& Str(std::string_view s) { return U64(s.size()), Append(&b, s), *this; }
  // A tensor info.
  Gguf& Info(std::string_view name, std::vector<std::uint64_t> ne, std::uint32_t type,
             std::uint64_t offset) {
    Str(name).U32(static_cast<std::uint32_t>(ne.size()));
    for (const std::uint64_t d : ne) U64(d);
    return U32(type).U64(offset);
  }
  Gguf& Pad(std::size_t align) {
    while (b.size() % align != 0) b.push_back(0);
    return *this;
  }
  Gguf& Zeros(std::size_t n) { return b.resize(b.size() + n, 0), *this; }
};

std::string GgufError(std::span<const std::uint8_t> b, const ReaderLimits& limits = {}) {
  const auto r = ReadGguf(b, limits);
  return r.ok() ? "(accepted)" : r.error().message;
}
std::string GgufError(const Bytes& b, const ReaderLimits& limits = {}) {
  return GgufError(std::span<const std::uint8_t>(b), limits);
}

std::vector<GgufKeyValue> Metadata(const GgufFile& f) {
  std::vector<GgufKeyValue> out;
  ForEachGgufMetadata(f, [&out](const GgufKeyValue& kv) {
    out.push_back(kv);
    return true;
  });
  return out;
}

TEST(GgufHostile, CountsAreBoundedByTheFileBeforeAllocation) {
  EXPECT_NE(GgufError(Gguf(3, std::uint64_t{1} << 40, 0).Zeros(64).b)
                .find("tensor_count 1099511627776 cannot fit in the 64 bytes that follow"),
            std::string::npos);
  EXPECT_NE(GgufError(Gguf(3, 0, std::uint64_t{1} << 60).b).find("metadata_kv_count"),
            std::string::npos);
  EXPECT_NE(GgufError(Gguf(3, ~std::uint64_t{0}, ~std::uint64_t{0}).b).find("cannot fit"),
            std::string::npos);
}

TEST(GgufHostile, LengthsInsideMetadata) {
  Gguf long_key(3, 0, 1);
  long_key.U64(std::uint64_t{1} << 63).Zeros(16);
  EXPECT_NE(GgufError(long_key.b).find("runs past the end"), std::string::npos);
  Gguf long_array(3, 0, 1);
  long_array.Str("k").U32(9).U32(10).U64(std::uint64_t{1} << 61).Zeros(16);
  EXPECT_NE(GgufError(long_array.b).find("cannot fit"), std::string::npos);
  Gguf unknown(3, 0, 1);
  unknown.Str("k").U32(13).Zeros(8);
  EXPECT_NE(GgufError(unknown.b).find("unknown value type 13"), std::string::npos);
  Gguf repeated(3, 0, 2);
  repeated.Str("k").U32(0).Zeros(1).Str("k").U32(0).Zeros(1);
  EXPECT_NE(GgufError(repeated.b).find("repeats"), std::string::npos);
}

TEST(GgufHostile, VersionsAndMagic) {
  EXPECT_NE(GgufError(Gguf(1, 0, 0).b).find("version 1 is not supported"), std::string::npos);
  EXPECT_NE(GgufError(Gguf(0x03000000, 0, 0).b).find("big-endian"), std::string::npos);
  EXPECT_NE(GgufError({'G', 'G', 'U', 'X'}).find("not a GGUF file"), std::string::npos);
}

TEST(GgufHostile, TensorInfos) {
  auto one = [](std::vector<std::uint64_t> ne, std::uint32_t type, std::uint64_t offset,
                std::size_t data) {
    return Gguf(3, 1, 0).Info("w", std::move(ne), type, offset).Pad(32).Zeros(data).b;
  };
  EXPECT_NE(GgufError(one({32}, 99, 0, 18)).find("tensor \"w\" has unknown ggml type 99"),
            std::string::npos);
  EXPECT_NE(GgufError(one({33}, 2, 0, 18)).find("row length 33 is not a multiple of the Q4_0"),
            std::string::npos);
  EXPECT_NE(GgufError(one({1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, 0, 4)).find("9 dimensions"),
            std::string::npos);
  EXPECT_NE(GgufError(one({4}, 0, 16, 32)).find("data offset 16, but gguf.cpp requires 0"),
            std::string::npos);
  EXPECT_NE(GgufError(one({4}, 0, 0, 15)).find("lie past the end"), std::string::npos);
  EXPECT_NE(GgufError(one({4294967296, 4294967296, 2}, 0, 0, 4)).find("element count reaches"),
            std::string::npos);
  // 2^62 I8 elements in two and three dimensions: below gguf.cpp's element
  // limit (its missing dimensions count 1), so refused for the 2^62 bytes
  // lying past the file, not for the count. (One dimension holds at most
  // 2^32, the most @huggingface/gguf reads.)
  for (const std::vector<std::uint64_t>& ne : std::vector<std::vector<std::uint64_t>>{
           {1ull << 31, 1ull << 31}, {1ull << 30, 1ull << 30, 4}}) {
    const std::string big_i8 = GgufError(one(ne, 24, 0, 4));
    EXPECT_NE(big_i8.find("lie past the end"), std::string::npos) << ne.size() << ": " << big_i8;
    EXPECT_EQ(big_i8.find("element count"), std::string::npos) << big_i8;
  }
  EXPECT_NE(GgufError(one({~std::uint64_t{0}}, 0, 0, 4)).find("exceeds 2^63-1"), std::string::npos);
  EXPECT_NE(GgufError(one({4}, 0, ~std::uint64_t{0} - 31, 16))
                .find("data offset 18446744073709551584, but gguf.cpp requires 0"),
            std::string::npos);
  const Bytes overlap =
      Gguf(3, 2, 0).Info("a", {16}, 0, 0).Info("b", {16}, 0, 32).Pad(32).Zeros(96).b;
  EXPECT_NE(GgufError(overlap).find("tensor \"b\": data offset 32, but gguf.cpp requires 64"),
            std::string::npos);
  const Bytes twice = Gguf(3, 2, 0).Info("a", {8}, 0, 0).Info("a", {8}, 0, 32).Pad(32).Zeros(64).b;
  EXPECT_NE(GgufError(twice).find("tensor name \"a\" repeats"), std::string::npos);
}

TEST(GgufHostile, Alignment) {
  auto with = [](std::uint32_t type, std::uint64_t value) {
    Gguf g(3, 0, 1);
    g.Str("general.alignment").U32(type);
    return type == 10 ? g.U64(value).b : g.U32(static_cast<std::uint32_t>(value)).b;
  };
  EXPECT_NE(GgufError(with(4, 48)).find("not a power of two"), std::string::npos);
  EXPECT_NE(GgufError(with(4, 0)).find("not a power of two"), std::string::npos);
  EXPECT_NE(GgufError(with(10, 64)).find("not a u32"), std::string::npos);
  const auto ok = ReadGguf(with(4, 256));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().alignment, 256u);
}

TEST(GgufHostile, EveryPrefixOfAValidFileIsRefused) {
  Gguf g(2, 2, 2);
  g.Str("name").U32(8).Str("tiny");
  g.Str("list").U32(9).U32(8).U64(2).Str("a").Str("bc");
  g.Info("q", {32, 2}, 8, 0).Info("f", {3}, 0, 96).Pad(32).Zeros(68).Pad(32).Zeros(12);
  const auto r = ReadGguf(g.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().tensors[0].shape, (std::vector<std::uint64_t>{2, 32}));
  EXPECT_EQ(r.value().tensors[0].data.size(), 68u);
  ASSERT_EQ(r.value().metadata_count, 2u);
  EXPECT_EQ(FormatGgufValue(Metadata(r.value())[1]), R"(["a", "bc"])");
  for (std::size_t n = 0; n < g.b.size(); ++n) {
    EXPECT_FALSE(ReadGguf(std::span(g.b).first(n)).ok()) << n;
  }
}

TEST(Gguf, LongValuesAreShortened) {
  Gguf g(3, 0, 1);
  g.Str("tokens").U32(9).U32(4).U64(1000);
  for (std::uint32_t i = 0; i < 1000; ++i) g.U32(i);
  const auto r = ReadGguf(g.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string text = FormatGgufValue(Metadata(r.value()).at(0), 40);
  EXPECT_LT(text.size(), 70u);
  EXPECT_NE(text.find("... (1000 items)]"), std::string::npos) << text;
}

// An array's count is checked against the bytes left at the fewest bytes an
// element can take (8 for a string: its length): 1,000 empty strings in
// exactly 8,000 bytes are read, 1,001 in the same bytes are refused before
// any is.
TEST(Gguf, AnArrayOfEmptyStringsThatFillsTheFileIsRead) {
  for (const std::uint64_t count : {1000u, 1001u}) {
    Gguf g(3, 0, 1);
    g.Str("tokens").U32(9).U32(8).U64(count);
    for (int i = 0; i < 1000; ++i) g.U64(0);
    const auto r = ReadGguf(g.b);
    if (count == 1000) {
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(FormatGgufValue(Metadata(r.value()).at(0), 12),
                "[\"\", \"\", \"\",... (1000 items)]");
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.error().message.find("array of 1001 elements cannot fit in the 8000 bytes"),
                std::string::npos)
          << r.error().message;
    }
  }
}

// The limit is inclusive: a value of exactly max_chars characters is shown
// whole (no "..." that would tell a reader it was cut), one more is cut.
// The default limit (gguf.h) is 80.
TEST(Gguf, AValueOfExactlyTheLimitIsShownWhole) {
  for (const std::size_t n : {79u, 80u, 81u}) {
    const std::string s(n, 'x');
    Gguf g(3, 0, 1);
    g.Str("general.name").U32(8).Str(s);
    const auto r = ReadGguf(g.b);
    ASSERT_TRUE(r.ok()) << r.error().message;
    const std::string text = FormatGgufValue(Metadata(r.value()).at(0));
    if (n <= 80) {
      EXPECT_EQ(text, s) << n;
    } else {
      EXPECT_EQ(text, std::string(80, 'x') + "...") << n;
    }
  }
  // In an array the quotes count: ["x...x"] of 80 characters is whole.
  const std::string s(76, 'y');
  Gguf g(3, 0, 1);
  g.Str("list").U32(9).U32(8).U64(1).Str(s);
  const auto r = ReadGguf(g.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(FormatGgufValue(Metadata(r.value()).at(0), 80), "[\"" + s + "\"]");
  // One less and the closing bracket is what is cut.
  EXPECT_EQ(FormatGgufValue(Metadata(r.value()).at(0), 79), "[\"" + s + "\"...");
}

// Signed metadata is sign-extended from its own width: the top bit of an
// i8, i16 or i32 makes the value negative, alone or in an array.
TEST(Gguf, SignedIntegersAreShownWithTheirSign) {
  struct Scalar {
    std::uint32_t type;  // i8 1, i16 3, i32 5, i64 11
    std::uint64_t bits;
    int size;
    std::string_view shown;
  };
  const Scalar scalars[] = {
      {1, 0xFF, 1, "-1"},
      {1, 0x80, 1, "-128"},
      {1, 0x7F, 1, "127"},
      {3, 0xFFFE, 2, "-2"},
      {3, 0x8000, 2, "-32768"},
      {5, 0xFFFFFFFD, 4, "-3"},
      {11, ~std::uint64_t{3}, 8, "-4"},
  };
  Gguf g(3, 0, std::size(scalars) + 1);
  for (const Scalar& v : scalars) {
    g.Str(Cat("k", std::string(v.shown))).U32(v.type);
    PutLe(&g.b, v.bits, v.size);
  }
  g.Str("i8s").U32(9).U32(1).U64(3);  // an array of three i8
  for (const std::uint64_t bits : {0xFF, 0x7F, 0x80}) PutLe(&g.b, bits, 1);
  const auto r = ReadGguf(g.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::vector<GgufKeyValue> kv = Metadata(r.value());
  ASSERT_EQ(kv.size(), std::size(scalars) + 1);
  for (std::size_t i = 0; i < std::size(scalars); ++i) {
    EXPECT_EQ(FormatGgufValue(kv[i]), scalars[i].shown) << i;
  }
  EXPECT_EQ(FormatGgufValue(kv.back()), "[-1, 127, -128]");
}

// The type table (the mapping to kiln requests lives in the convert
// command; tests/formats/formats_test.cc checks it end to end).
TEST(Gguf, TypeTable) {
  ASSERT_NE(FindGgmlType(12), nullptr);
  EXPECT_EQ(FindGgmlType(12)->name, "Q4_K");
  EXPECT_EQ(FindGgmlType(12)->block_size, 256u);
  EXPECT_EQ(FindGgmlType(12)->dtype, std::nullopt);
  ASSERT_NE(FindGgmlType(30), nullptr);
  EXPECT_EQ(FindGgmlType(30)->dtype, Dtype::kBf16);
  EXPECT_EQ(FindGgmlType(4), nullptr);   // Q4_2, removed from ggml
  EXPECT_EQ(FindGgmlType(43), nullptr);  // GGML_TYPE_COUNT
}

// The types ggml added after MXFP4 (ids 40-42), with ggml.c's block sizes
// and block bytes; kiln refused them as unknown before.
TEST(GgufFollowsGgml, TypesFortyToFortyTwoAreRead) {
  struct Case {
    std::uint32_t id;
    std::string_view name;
    std::uint32_t block_size, type_size;
  };
  for (const Case& c :
       {Case{40, "NVFP4", 64, 36}, Case{41, "Q1_0", 128, 18}, Case{42, "Q2_0", 64, 18}}) {
    SCOPED_TRACE(c.name);
    const GgmlType* t = FindGgmlType(c.id);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->name, c.name);
    EXPECT_EQ(t->block_size, c.block_size);
    EXPECT_EQ(t->type_size, c.type_size);
    const auto r = ReadGguf(
        Gguf(3, 1, 0).Info("w", {c.block_size, 2}, c.id, 0).Pad(32).Zeros(2 * c.type_size).b);
    if (c.id == 42) {  // gguf-py's types end at Q1_0 (41)
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.error().message.find("ggml type 42 (Q2_0) is refused: gguf-py does not know it"),
                std::string::npos)
          << r.error().message;
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value().tensors[0].data.size(), 2 * c.type_size);
  }
}

// gguf-py (GGUFReader) builds a numpy array over each tensor: numpy refuses
// one whose itemsize times its nonzero dimensions exceeds 2^63-1, even empty;
// it sizes Q8_1 blocks at 40 bytes (ggml: 36); it does not know Q2_0; it has
// no innermost dimension for a BF16 tensor of no dimensions. Each bound just
// under, at and just over, as files.
TEST(GgufAgreesWithGgufPy, BoundsJustUnderAtAndOver) {
  const auto one = [](std::vector<std::uint64_t> ne, std::uint32_t type, std::size_t data) {
    return Gguf(3, 1, 0).Info("w", std::move(ne), type, 0).Pad(32).Zeros(data).b;
  };
  constexpr std::uint32_t kI8 = 24, kF32 = 0, kBf16 = 30, kQ8_1 = 9, kQ4_0 = 2;
  // 2^63-1 = 1532540863 * 47388607 * 127; 2^63-2 = 2147483647 * 2147483649 * 2.
  struct Case {
    std::string_view rule;
    Bytes file;
    std::string_view refused;  // empty: read
  };
  const std::string numpy = "gguf-py's numpy array would hold more than 2^63-1 bytes";
  const Case cases[] = {
      {"I8, nonzero dimensions 2^63-2", one({2147483647, 2147483649, 2, 0}, kI8, 0), ""},
      {"I8, nonzero dimensions 2^63-1", one({1532540863, 47388607, 127, 0}, kI8, 0), ""},
      {"I8, nonzero dimensions 2^63", one({2147483648, 2147483648, 2, 0}, kI8, 0), numpy},
      {"ne [2^32, 2^32, 0]", one({4294967296, 4294967296, 0}, kI8, 0), numpy},
      {"ne [0, 2^32, 2^32]", one({0, 4294967296, 4294967296}, kI8, 0), numpy},
      {"F32 (itemsize 4), nonzero dimensions 2^61-2^31", one({0, 2147483648, 1073741823}, kF32, 0),
       ""},
      {"F32 (itemsize 4), nonzero dimensions 2^61", one({0, 2147483648, 1073741824}, kF32, 0),
       numpy},
      {"Q4_0 as bytes: ne[0] 2^32 is 2^27 blocks of 18 bytes, times 2^32",
       one({4294967296, 0, 4294967296}, kQ4_0, 0), numpy},
      {"Q4_0 as bytes: 2^27 * 18 * 2^31 < 2^63", one({4294967296, 0, 2147483648}, kQ4_0, 0), ""},
      // Only ne[0] (numpy's last axis) is counted in blocks: 2^27 blocks of 18
      // bytes times an outer 3,817,748,707 is under 2^63, times 3,817,748,708
      // over it (2^63 / (2^27 * 18) is 3,817,748,707.6).
      {"Q4_0 as bytes: 2^27 * 18 * 3817748707 < 2^63", one({4294967296, 0, 3817748707}, kQ4_0, 0),
       ""},
      {"Q4_0 as bytes: 2^27 * 18 * 3817748708 > 2^63", one({4294967296, 0, 3817748708}, kQ4_0, 0),
       numpy},
      {"Q8_1 with no element", one({32, 0}, kQ8_1, 0), ""},
      {"Q8_1 with 32 elements", one({32}, kQ8_1, 36),
       "Q8_1 with elements is refused: gguf-py would misread it (it sizes a Q8_1 block at 40 "
       "bytes, ggml's block_q8_1 is 36)"},
      {"Q1_0 (41), the last type gguf-py knows", one({128}, 41, 18), ""},
      {"Q2_0 (42)", one({64}, 42, 18), "ggml type 42 (Q2_0) is refused: gguf-py does not know it"},
      {"BF16 of one dimension", one({1}, kBf16, 2), ""},
      {"BF16 of no dimensions", one({}, kBf16, 2),
       "a BF16 tensor of no dimensions is refused: gguf-py reads BF16 as bytes"},
      {"F32 of no dimensions", one({}, kF32, 4), ""},
  };
  for (const Case& c : cases) {
    const auto r = ReadGguf(c.file);
    if (c.refused.empty()) {
      EXPECT_TRUE(r.ok()) << c.rule << ": " << r.error().message;
    } else {
      ASSERT_FALSE(r.ok()) << c.rule;
      EXPECT_NE(r.error().message.find(c.refused), std::string::npos)
          << c.rule << ": " << r.error().message;
    }
  }
}

// Every check of ggml's gguf.cpp (gguf_init_from_file, no_alloc) that kiln
// lacked, and the bounds of @huggingface/gguf 0.4.6 where it is tighter:
// kiln read each of these files before. Built as an attacker would.
TEST(GgufFollowsGgml, FilesTheReferencesRefuseAreRefused) {
  const auto g = [](std::uint64_t tensors, std::uint64_t kvs) { return Gguf(3, tensors, kvs); };
  const auto two = [&](std::uint64_t a, std::uint64_t b) {
    return g(2, 0).Info("a", {4}, 0, a).Info("b", {4}, 0, b).Pad(32).Zeros(96).b;
  };
  const auto key = [&](std::string_view k) { return g(0, 1).Str(k).U32(0).Zeros(1).b; };
  const auto name = [&](std::string_view n) {
    return g(1, 0).Info(n, {4}, 0, 0).Pad(32).Zeros(16).b;
  };
  Gguf long_key = g(0, 1);
  long_key.Str(std::string(65536, 'k')).U32(0).Zeros(1);
  Gguf long_string = g(0, 1);
  long_string.Str("k").U32(8).Str(std::string(1'000'001, 's'));
  Gguf long_array = g(0, 1);
  long_array.Str("k").U32(9).U32(0).U64(1'000'001).Zeros(1'000'001);
  Gguf many_keys = g(0, 100'001);
  for (int i = 0; i < 100'001; ++i) many_keys.Str(Cat("k", std::to_string(i))).U32(0).Zeros(1);
  Gguf past_eof = g(1, 1);
  past_eof.Str("general.alignment").U32(4).U32(4096).Info("z", {0}, 0, 0);
  Gguf bom_alignment = g(0, 2);
  bom_alignment.Str("general.alignment").U32(4).U32(32);
  bom_alignment.Str("\xEF\xBB\xBFgeneral.alignment").U32(4).U32(64);
  struct Case {
    std::string_view rule;
    Bytes file;
    std::string_view message;
  };
  const Case cases[] = {
      {"offsets: a gap", two(0, 64), "tensor \"b\": data offset 64, but gguf.cpp requires 32"},
      {"offsets: another order", two(32, 0),
       "tensor \"a\": data offset 32, but gguf.cpp requires 0"},
      {"offsets: the first not at 0", two(32, 64), "data offset 32, but gguf.cpp requires 0"},
      {"offsets: a zero-size tensor parked far away",
       g(2, 0).Info("a", {4}, 0, 0).Info("z", {0}, 0, 4096).Pad(32).Zeros(32).b,
       "tensor \"z\": data offset 4096, but gguf.cpp requires 32"},
      {"offsets: a zero-size tensor before its place",
       g(3, 0).Info("a", {8}, 0, 0).Info("z", {0}, 0, 0).Info("b", {4}, 0, 32).Pad(32).Zeros(64).b,
       "tensor \"z\": data offset 0, but gguf.cpp requires 32"},
      {"the data section starts past the end", past_eof.b,
       "the data section starts at 4096 (the end of the tensor infos padded to the alignment "
       "4096), past the end of the"},
      {"an empty key", key(""), "metadata key 0 is empty"},
      {"a NUL in a key", key(std::string_view("general.alignment\0x", 19)),
       "metadata key 0 \"general.alignment\\x00x\" holds a NUL byte at 17"},
      {"a key that is not UTF-8", key("k\xC0"), "is not well-formed UTF-8"},
      {"a key a TextDecoder reads as general.alignment", bom_alignment.b,
       "metadata key 1 \"\\u{feff}general.alignment\" starts with U+FEFF"},
      {"a key of 65536 bytes", long_key.b, "is 65536 bytes long, more than 65535"},
      {"a string of 1000001 bytes", long_string.b, "a string of 1000001 bytes, more than 1000000"},
      {"an array of 1000001 elements", long_array.b, "an array of 1000001 elements"},
      {"100001 key/value pairs", many_keys.b, "metadata_kv_count 100001 exceeds 100000"},
      {"general.alignment 2^31", g(0, 1).Str("general.alignment").U32(4).U32(0x80000000).b,
       "general.alignment 2147483648 exceeds 2^30"},
      {"an empty name (gguf.cpp reads it, Kiln has no empty name)", name(""),
       "tensor name 0 is empty"},
      {"a name of 64 bytes (GGML_MAX_NAME)", name(std::string(64, 'n')),
       "is 64 bytes long; ggml holds at most 63"},
      {"a NUL in a name", name(std::string_view("a\0b", 3)), "\"a\\x00b\" holds a NUL byte at 1"},
      {"a name that is not UTF-8", name("w\xFF"), "\"w\\xff\" is not well-formed UTF-8"},
      {"a name that starts with U+FEFF", name("\xEF\xBB\xBFw"), "starts with U+FEFF"},
      {"5 dimensions (GGML_MAX_DIMS)", g(1, 0).Info("w", {1, 1, 1, 1, 4}, 0, 0).Pad(32).Zeros(16).b,
       "tensor \"w\" has 5 dimensions; ggml holds at most 4"},
      {"a dimension of 2^32+1", g(1, 0).Info("w", {4294967297, 0}, 0, 0).Pad(32).b,
       "dimension 4294967297 exceeds 2^32"},
      {"an element count of 2^63", g(1, 0).Info("w", {2, 2147483648, 2147483648}, 0, 0).Pad(32).b,
       "tensor \"w\": its element count reaches 2^63-1"},
      // gguf.cpp refuses when INT64_MAX / ne[2] <= ne[0] * ne[1]: here the two
      // sides are equal (2^63-1 = 218934409 * 331720249 * 127 exactly).
      {"an element count of exactly 2^63-1",
       g(1, 0).Info("w", {218934409, 331720249, 127}, 0, 0).Pad(32).b,
       "tensor \"w\": its element count reaches 2^63-1"},
  };
  ReaderLimits raised;  // these bounds hold whatever the caller's limits
  raised.max_metadata_entries = 1'000'000'000;
  for (const Case& c : cases) {
    EXPECT_NE(GgufError(c.file, raised).find(c.message), std::string::npos)
        << c.rule << ": " << GgufError(c.file, raised);
  }
}

// The last values the same checks let through.
TEST(GgufFollowsGgml, FilesAtTheBoundariesAreRead) {
  const auto g = [](std::uint64_t tensors, std::uint64_t kvs) { return Gguf(3, tensors, kvs); };
  Gguf long_key = g(0, 1);
  long_key.Str(std::string(65535, 'k')).U32(0).Zeros(1);
  Gguf long_string = g(0, 1);
  long_string.Str("k").U32(8).Str(std::string(1'000'000, 's'));
  Gguf many_keys = g(0, 100'000);
  for (int i = 0; i < 100'000; ++i) many_keys.Str(Cat("k", std::to_string(i))).U32(0).Zeros(1);
  ReaderLimits raised;
  raised.max_metadata_entries = 100'000;
  struct Case {
    std::string_view rule;
    Bytes file;
    std::size_t tensors;
  };
  const Case cases[] = {
      {"a zero-size tensor at its place",
       g(3, 0)
           .Info("a", {4}, 0, 0)
           .Info("z", {0, 5}, 0, 32)
           .Info("b", {4}, 0, 32)
           .Pad(32)
           .Zeros(48)
           .b,
       3},
      {"the data section starts at the end of the file", g(1, 0).Info("z", {0}, 0, 0).Pad(32).b, 1},
      {"no tensors and the data section past the end",
       g(0, 1).Str("general.alignment").U32(4).U32(4096).b, 0},
      // An array of the last element type, f64 (12): u32 array type, u32
      // element type, u64 count 1, one element.
      {"an array of f64", g(0, 1).Str("k").U32(9).U32(12).U32(1).U32(0).Zeros(8).b, 0},
      {"a name of 63 bytes", g(1, 0).Info(std::string(63, 'n'), {4}, 0, 0).Pad(32).Zeros(16).b, 1},
      {"4 dimensions", g(1, 0).Info("w", {2, 1, 1, 2}, 0, 0).Pad(32).Zeros(16).b, 1},
      {"a dimension of 2^32", g(1, 0).Info("w", {4294967296, 0}, 0, 0).Pad(32).b, 1},
      {"general.alignment 2^30", g(0, 1).Str("general.alignment").U32(4).U32(1U << 30).b, 0},
      {"general.alignment 1 (2^0)", g(0, 1).Str("general.alignment").U32(4).U32(1).b, 0},
      {"a key of 65535 bytes", long_key.b, 0},
      {"a string of 1000000 bytes", long_string.b, 0},
      {"100000 key/value pairs", many_keys.b, 0},
      // u8 (0) elements: the count limit is inclusive.
      {"an array of 1000000 elements",
       g(0, 1).Str("k").U32(9).U32(0).U64(1'000'000).Zeros(1'000'000).b, 0},
  };
  for (const Case& c : cases) {
    const auto r = ReadGguf(c.file, raised);
    ASSERT_TRUE(r.ok()) << c.rule << ": " << r.error().message;
    EXPECT_EQ(r.value().tensors.size(), c.tensors) << c.rule;
  }
}

// A file of `size` zero bytes, as an anonymous mapping: only the pages a
// test writes (the header) or the reader touches are ever made.
class ZeroFile {
 public:
  explicit ZeroFile(std::size_t size)
      : map_(::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)),
        size_(size) {}
  ZeroFile(const ZeroFile&) = delete;
  ZeroFile& operator=(const ZeroFile&) = delete;
  ~ZeroFile() {
    if (ok()) ::munmap(map_, size_);
  }
  [[nodiscard]] bool ok() const { return map_ != MAP_FAILED; }
  // The file with `head` written over its first bytes.
  std::span<const std::uint8_t> With(const Bytes& head) {
    std::memcpy(map_, head.data(), head.size());
    return {static_cast<const std::uint8_t*>(map_), size_};
  }

 private:
  void* map_;
  std::size_t size_;
};

// @huggingface/gguf reads at most 10,000,000 tensor infos: a count of exactly
// that passes the check (and is refused next, by the header-bytes bound: its
// infos need 240,000,000 bytes), one more is refused by it. The file is long
// enough for either count's infos to fit.
TEST(GgufLimits, TensorCountAtTheHubLimitIsPastIt) {
  ZeroFile file((10'000'001 + 1) * (8 + 4 + 4 + 8));
  ASSERT_TRUE(file.ok());
  ReaderLimits raised;
  raised.max_tensors = 20'000'000;
  EXPECT_EQ(GgufError(file.With(Gguf(3, 10'000'000, 0).b), raised),
            "gguf: 0 key/value pairs and 10000000 tensor infos need at least 240000024 header "
            "bytes, more than the limit of 48000000 (@huggingface/gguf reads no GGUF header past "
            "the first 50,000,000 bytes)");
  EXPECT_EQ(GgufError(file.With(Gguf(3, 10'000'001, 0).b), raised),
            "gguf: tensor_count 10000001 exceeds 10000000, the most @huggingface/gguf reads");
}

// The header-bytes bound is inclusive: counts whose smallest header (24
// bytes, then 24 a tensor info) is exactly 48,000,000 bytes pass it and
// the first info is read (here refused: a name of 0 bytes); one tensor
// more is refused by it.
TEST(GgufLimits, CountsWhoseLeastHeaderIsTheLimitPass) {
  ZeroFile file(48'000'000 + 1'000);
  ASSERT_TRUE(file.ok());
  ReaderLimits raised;
  raised.max_tensors = 2'000'000;
  EXPECT_EQ(GgufError(file.With(Gguf(3, 1'999'999, 0).b), raised),
            "gguf: tensor name 0 is empty (a Kiln name is at least one byte)");
  const auto past = ReadGguf(file.With(Gguf(3, 2'000'000, 0).b), raised);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().message,
            "gguf: 0 key/value pairs and 2000000 tensor infos need at least 48000024 header "
            "bytes, more than the limit of 48000000 (@huggingface/gguf reads no GGUF header past "
            "the first 50,000,000 bytes)");
  EXPECT_EQ(past.error().offset, 8u);  // tensor_count
  // The hub's bound is named only when it is lower than the caller's own: a
  // caller's limit of exactly 48,000,000 bytes is the caller's.
  raised.max_header_bytes = 48'000'000;
  EXPECT_EQ(GgufError(file.With(Gguf(3, 2'000'000, 0).b), raised),
            "gguf: 0 key/value pairs and 2000000 tensor infos need at least 48000024 header "
            "bytes, more than the limit of 48000000");
}

// A header (metadata included) ending at exactly 48,000,000 bytes is read;
// one byte more is refused once the value that crosses the bound is read.
TEST(GgufLimits, AHeaderEndingAtTheLimitIsRead) {
  for (const std::size_t extra : {0u, 1u}) {
    // 24 header bytes, 48 entries of a 3-byte key (8 + 3), a type (4) and a
    // string (8 + its bytes): 1,128 bytes, and 47,998,872 of strings.
    Gguf g(3, 0, 48);
    for (int k = 0; k < 48; ++k) {
      const std::size_t length = (k < 47 ? 1'000'000 : 998'872) + (k == 47 ? extra : 0);
      g.Str(Cat(k < 10 ? "k0" : "k", std::to_string(k))).U32(8).Str(std::string(length, 's'));
    }
    ReaderLimits raised;
    raised.max_header_bytes = 100'000'000;
    ASSERT_EQ(g.b.size(), 48'000'000 + extra);
    if (extra == 0) {
      EXPECT_EQ(GgufError(g.b, raised), "(accepted)");
    } else {
      EXPECT_EQ(GgufError(g.b, raised),
                "gguf: the header exceeds the limit of 48000000 bytes (@huggingface/gguf reads "
                "no GGUF header past the first 50,000,000 bytes)");
    }
  }
}

// ggml's gguf.cpp reads each dimension as an int64_t and refuses a negative
// one; kiln reads u64 and refuses the same values, 2^63 and above.
TEST(GgufFollowsGgml, DimensionsFrom2Pow63AreRefusedAsGgufCppRefusesNegativeNe) {
  auto one = [](std::uint64_t d) { return Gguf(3, 1, 0).Info("w", {d}, 0, 0).Pad(32).Zeros(4).b; };
  const std::string at_top = GgufError(one(std::uint64_t{1} << 63));
  EXPECT_NE(at_top.find("dimension 9223372036854775808 exceeds 2^63-1"), std::string::npos)
      << at_top;
  const auto r = ReadGguf(one(std::uint64_t{1} << 63));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().offset, 24u + 8 + 1 + 4);  // the dimension's own bytes
  // 2^63-1 passes this check (and fails later: its bytes are not there).
  EXPECT_EQ(GgufError(one((std::uint64_t{1} << 63) - 1)).find("exceeds 2^63-1"), std::string::npos);
}

// gguf.cpp refuses arrays whose elements are arrays; so does kiln.
TEST(GgufFollowsGgml, ArraysOfArraysAreRefusedAsGgufCppRefusesThem) {
  Gguf nested(3, 0, 1);
  nested.Str("k").U32(9).U32(9).U64(1).U32(0).U64(1).Zeros(1);
  EXPECT_NE(GgufError(nested.b).find("an array of arrays"), std::string::npos);
  Gguf empty_nested(3, 0, 1);  // even with no element
  empty_nested.Str("k").U32(9).U32(9).U64(0);
  EXPECT_NE(GgufError(empty_nested.b).find("an array of arrays"), std::string::npos);
}

// More tensors than a Kiln block can name: refused at the header, before
// one tensor info is read.
TEST(GgufLimits, TensorCountPastWhatKilnCanNameIsRefusedAtTheHeader) {
  const Bytes b = Gguf(3, 65536, 0).Zeros(65536 * 24).b;
  const auto r = ReadGguf(b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("tensor_count 65536 exceeds the limit of 65535 tensors (a Kiln "
                                   "block names at most 65535)"),
            std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().offset, 8u);
  ReaderLimits few;
  few.max_tensors = 2;
  EXPECT_NE(GgufError(Gguf(3, 3, 0).Zeros(3 * 24).b, few).find("exceeds the limit of 2 tensors"),
            std::string::npos);
}

TEST(GgufLimits, MetadataEntriesAndHeaderBytes) {
  Gguf two(3, 0, 2);
  two.Str("a").U32(0).Zeros(1).Str("b").U32(0).Zeros(1);
  ReaderLimits one;
  one.max_metadata_entries = 1;
  EXPECT_NE(GgufError(two.b, one).find("metadata_kv_count 2 exceeds the limit of 1 entries"),
            std::string::npos);
  EXPECT_EQ(GgufError(two.b), "(accepted)");
  Gguf long_value(3, 0, 1);
  long_value.Str("k").U32(8).Str(std::string(100, 'v'));
  ReaderLimits small;
  small.max_header_bytes = 100;
  EXPECT_NE(GgufError(long_value.b, small).find("the header exceeds the limit of 100 bytes"),
            std::string::npos);
  small.max_header_bytes = 24 + 13 - 1;  // not even room for the smallest pair
  EXPECT_NE(GgufError(long_value.b, small).find("more than the limit of 36"), std::string::npos);
}

// Names a Kiln heap cannot address stop the reader at the tensor that
// crosses the line: 2081 names of 63 bytes (the longest ggml holds).
TEST(GgufLimits, NamesPastWhatAKilnHeapAddresses) {
  constexpr int kTensors = 2081;  // 2080 * 63 = 131040 fits in 131069, 2081 * 63 does not
  Gguf g(3, kTensors, 0);
  for (int i = 0; i < kTensors; ++i) {
    std::string name = std::to_string(i);
    name.insert(0, 63 - name.size(), 'n');
    g.Info(name, {0}, 0, 0);  // no bytes: each at offset 0
  }
  g.Pad(32);
  EXPECT_NE(GgufError(g.b).find("tensor names reach 131103 bytes"), std::string::npos);
}

// Repeated keys are found wherever they are; the error points at the later
// occurrence.
TEST(GgufHostile, RepeatedKeyFarApartAndItsOffset) {
  Gguf g(3, 0, 4);
  g.Str("k").U32(0).Zeros(1).Str("a").U32(0).Zeros(1).Str("b").U32(0).Zeros(1);
  const std::size_t last = g.b.size();
  g.Str("k").U32(0).Zeros(1);
  const auto r = ReadGguf(g.b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("metadata key \"k\" repeats"), std::string::npos);
  EXPECT_EQ(r.error().offset, last);
}

// ---------------------------------------------------------------- limits, safetensors

std::string StError(const Bytes& b, const ReaderLimits& limits) {
  const auto r = ReadSafetensors(b, limits);
  return r.ok() ? "(accepted)" : r.error().message;
}

TEST(SafetensorsLimits, TensorsAndMetadataEntries) {
  const Bytes three = St(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                         R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},)"
                         R"("c":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})",
                         3);
  ReaderLimits two;
  two.max_tensors = 2;
  EXPECT_NE(StError(three, two).find("more than the limit of 2 tensors"), std::string::npos);
  EXPECT_EQ(StError(three, {}), "(accepted)");
  const Bytes meta = St(
      R"({"__metadata__":{"a":"1","b":"2"},"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      1);
  ReaderLimits one;
  one.max_metadata_entries = 1;
  EXPECT_NE(StError(meta, one).find("more than the limit of 1 entries"), std::string::npos);
  const auto r = ReadSafetensors(meta);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().metadata_count, 2u);
  std::vector<std::string> seen;
  ForEachSafetensorsMetadata(r.value(), [&seen](std::string_view k, std::string_view v) {
    seen.push_back(std::string(k) + "=" + std::string(v));
    return true;
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"a=1", "b=2"}));
}

// A Kiln block names at most 65535 tensors, in a heap that addresses at most
// 131069 name bytes: a header past either stops the reader at the entry that
// crosses the line, however many follow.
TEST(SafetensorsLimits, MoreTensorsOrNamesThanKilnCanHoldStopTheReader) {
  std::string json = "{";
  for (int i = 0; i < 65536; ++i) {
    json += (i > 0 ? ",\"" : "\"") + std::to_string(i) +
            R"(":{"dtype":"U8","shape":[0],"data_offsets":[0,0]})";
  }
  json += "}";
  const auto r = ReadSafetensors(St(json, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("tensor names reach 131070 bytes at tensor \"28435\""),
            std::string::npos)
      << r.error().message;
  EXPECT_LT(r.error().offset, json.size() / 2);  // the rest is never read
  ReaderLimits few;
  few.max_tensors = 1000;
  const auto limited = ReadSafetensors(St(json, 0), few);
  ASSERT_FALSE(limited.ok());
  EXPECT_NE(limited.error().message.find("more than the limit of 1000 tensors"), std::string::npos);
  EXPECT_EQ(limited.error().offset, 8 + json.find("\"1000\""));
}

// The names' budget is the name heap's: names of exactly 131,069 bytes in
// all (the two longest a Kiln name can be) are read; one more byte is not.
TEST(SafetensorsLimits, NamesFillingTheHeapExactlyAreRead) {
  const auto entry = [](const std::string& name, int at) {
    return "\"" + name + "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[" +
           std::to_string(at) + "," + std::to_string(at + 1) + "]}";
  };
  const std::string full =
      "{" + entry(std::string(65535, 'a'), 0) + "," + entry(std::string(65534, 'b'), 1) + "}";
  const auto read = ReadSafetensors(St(full, 2));
  EXPECT_TRUE(read.ok()) << read.error().message;
  const std::string over = "{" + entry(std::string(65535, 'a'), 0) + "," +
                           entry(std::string(65534, 'b'), 1) + "," + entry("c", 2) + "}";
  const auto refused = ReadSafetensors(St(over, 3));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("tensor names reach 131070 bytes at tensor \"c\""),
            std::string::npos)
      << refused.error().message;
}

// Keys are compared decoded: "a" and "\u0061" are the same key.
TEST(SafetensorsHostile, RepeatedMetadataKeyAfterDecodingAndItsOffset) {
  const std::string json = R"({"__metadata__":{"a":"1","b":"2","\u0061":"3"},)"
                           R"("x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  const auto r = ReadSafetensors(St(json, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("metadata key \"a\" repeats"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().offset, 8 + json.find(R"("\u0061")"));
}

// The empty key is a key like any other: twice is a repeat, whatever
// whitespace follows each (the key's text ends at its closing quote).
TEST(SafetensorsHostile, RepeatedEmptyMetadataKey) {
  const std::string json = R"({"__metadata__":{"":"1", "" :"2"},)"
                           R"("x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  const auto r = ReadSafetensors(St(json, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("metadata key \"\" repeats"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().offset, 8 + json.find(R"("" :)"));
}

// Each tensor's entry_offset is where its name's opening quote is in the
// file (8 bytes of header length, then the JSON); a repeated name and an
// entry lacking a field are refused, the repeat at the second name.
TEST(SafetensorsHostile, EntryOffsetsRepeatsAndMissingFields) {
  const std::string json = R"({"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}, )"
                           R"("a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  const Bytes file = St(json, 2);  // the names are views into it
  const auto r = ReadSafetensors(file);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().tensors.size(), 2u);
  EXPECT_EQ(r.value().tensors[0].name, "a");  // in data order
  EXPECT_EQ(r.value().tensors[0].entry_offset, 8 + json.find(R"("a")"));
  EXPECT_EQ(r.value().tensors[1].entry_offset, 8 + json.find(R"("b")"));

  const std::string twice = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                            R"( "a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  const auto repeated = ReadSafetensors(St(twice, 2));
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.error().message.find("key \"a\" repeats"), std::string::npos)
      << repeated.error().message;
  EXPECT_EQ(repeated.error().offset, 8 + twice.rfind(R"("a")"));

  for (const char* entry :
       {R"({"x":{"shape":[1],"data_offsets":[0,1]}})",
        R"({"x":{"dtype":"U8","data_offsets":[0,1]}})", R"({"x":{"dtype":"U8","shape":[1]}})"}) {
    EXPECT_NE(StError(St(entry, 1)).find("tensor \"x\" needs dtype, shape and data_offsets"),
              std::string::npos)
        << entry << ": " << StError(St(entry, 1));
  }

  // A dtype error points at the dtype's opening quote, past any whitespace;
  // the empty name is no dtype.
  for (const std::string dtype : {"\"XX\"", "\"\""}) {
    const std::string bad = R"({"x":{"dtype": )" + dtype + R"(,"shape":[1],"data_offsets":[0,1]}})";
    const auto refused = ReadSafetensors(St(bad, 1));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "safetensors header byte " + std::to_string(bad.find(dtype)) +
                  ": tensor \"x\": dtype " + dtype + " is not a safetensors dtype");
    EXPECT_EQ(refused.error().offset, 8 + bad.find(dtype));
  }
}

// Where the safetensors crate (0.6.2 and main) is looser, kiln keeps
// refusing; each decision is in docs/compatibility.md.
TEST(SafetensorsHostile, ReferenceDifferencesAreDeliberate) {
  const std::string entry = R"("x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  // The crate parses the header with serde_json, which skips leading JSON
  // whitespace (main tests that it must: writers may pad before the '{'), so
  // kiln reads it too; a vertical tab is not JSON whitespace.
  EXPECT_EQ(StError(St(" \t\n\r{" + entry + "}", 1)), "(accepted)");
  EXPECT_NE(StError(St("\v{" + entry + "}", 1)).find("not a JSON object"), std::string::npos);
  // The crate ignores unknown keys in an entry; kiln would drop them silently.
  EXPECT_NE(StError(St(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"q":1}})", 1))
                .find("unknown field \"q\""),
            std::string::npos);
  // A repeated "__metadata__": which one counts differs between JSON parsers.
  EXPECT_NE(StError(St(R"({"__metadata__":{},"__metadata__":{},)" + entry + "}", 1))
                .find("\"__metadata__\" repeats"),
            std::string::npos);
  // F4 (new in the crate 0.6): its nibble order is unspecified, so it is not
  // mapped onto kiln f4_e2m1.
  EXPECT_NE(StError(St(R"({"x":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", 1))
                .find("dtype \"F4\" is not supported"),
            std::string::npos);
}

// Every reader error carries the offset where the reader stopped.
TEST(AllReaders, ErrorsCarryTheirOffset) {
  const auto st =
      ReadSafetensors(St(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]} ?)", 1));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().offset, 8u + 53);
  const auto gguf = ReadGguf(Gguf(3, 1, 0).Info("w", {32}, 99, 0).Pad(32).Zeros(18).b);
  ASSERT_FALSE(gguf.ok());
  EXPECT_EQ(gguf.error().offset, 24u + 9 + 4 + 8);  // the type field
  EXPECT_NE(gguf.error().ToString().find("(at byte 45)"), std::string::npos);
  const auto npy =
      ReadNpy(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 8));
  ASSERT_FALSE(npy.ok());
  EXPECT_GT(npy.error().offset, 10u);
}

// ---------------------------------------------------------------- all three

// Random byte flips, insertions of extreme values and truncations of a valid
// file of each format (fixed seed, a few thousand variants, well under a
// second): no reader may crash, and what one accepts must lie inside the
// buffer.
template <typename Read, typename Check>
void Mutate(const Bytes& valid, Read read, Check check) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 3000; ++round) {
    Bytes b = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % b.size();
      switch (rng() % 4) {
        case 0:
          b[at] = static_cast<std::uint8_t>(rng());
          break;
        case 1:
          b[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
          break;
        case 2:
          b[at] = (rng() % 2) != 0 ? 0xff : 0x00;
          break;
        default:
          b.resize(std::max<std::size_t>(1, at));
          break;
      }
    }
    const auto r = read(b);
    if (r.ok()) check(r.value(), b);
  }
}

bool Inside(std::span<const std::uint8_t> part, const Bytes& whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

TEST(AllReaders, MutatedFilesNeverCrash) {
  const std::vector<std::uint64_t> shape = {2, 3};
  const auto header = NpyHeader(Dtype::kI16, shape);
  ASSERT_TRUE(header.ok());
  Bytes npy(header.value().begin(), header.value().end());
  npy.resize(npy.size() + 12, 7);
  Mutate(
      npy, [](const Bytes& b) { return ReadNpy(b); },
      [](const NpyArray& a, const Bytes& b) { EXPECT_TRUE(Inside(a.data, b)); });

  const Bytes st = St(R"({"__metadata__":{"k":"v"},"a":{"dtype":"F16","shape":[2],)"
                      R"("data_offsets":[0,4]},"b":{"dtype":"I8","shape":[1,3],)"
                      R"("data_offsets":[4,7]}})",
                      7);
  Mutate(
      st, [](const Bytes& b) { return ReadSafetensors(b); },
      [](const SafetensorsFile& f, const Bytes& b) {
        for (const auto& t : f.tensors) EXPECT_TRUE(Inside(t.data, b));
      });

  Gguf g(3, 2, 2);
  g.Str("name").U32(8).Str("tiny");
  g.Str("list").U32(9).U32(4).U64(2).U32(5).U32(0);
  g.Info("q", {32, 2}, 8, 0).Info("f", {3}, 0, 96).Pad(32).Zeros(68).Pad(32).Zeros(12);
  ASSERT_TRUE(ReadGguf(g.b).ok());
  Mutate(
      g.b, [](const Bytes& b) { return ReadGguf(b); },
      [](const GgufFile& f, const Bytes& b) {
        for (const auto& t : f.tensors) EXPECT_TRUE(Inside(t.data, b));
        for (const auto& kv : Metadata(f)) {
          EXPECT_TRUE(Inside(kv.raw, b));
          (void)FormatGgufValue(kv);
        }
      });
}

}  // namespace
}  // namespace kiln::formats
