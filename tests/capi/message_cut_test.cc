// kiln_error's message: a message longer than the buffer is cut at a UTF-8
// character boundary (capi/src/message_cut.h), never inside a character.
#include "message_cut.h"

#include <string>

#include "gtest/gtest.h"

namespace kiln::capi {
namespace {

struct CutCase {
  const char* name;
  std::string text;
  std::size_t capacity;
  std::string want;
  bool truncated;
};

TEST(MessageCut, CutsAtACharacterBoundary) {
  const CutCase cases[] = {
      {"fits", "abc", 4, "abc", false},
      {"empty", "", 1, "", false},
      {"ascii cut", "abcdef", 4, "abc", true},
      {"nothing fits", "abc", 1, "", true},
      // "é" is c3 a9: a cut after c3 would leave half a character.
      {"two-byte char across the cut", "ab\xc3\xa9", 4, "ab", true},
      {"two-byte char fits", "a\xc3\xa9z", 4, "a\xc3\xa9", true},
      // "€" is e2 82 ac.
      {"three-byte char, cut after 1", "a\xe2\x82\xac", 3, "a", true},
      {"three-byte char, cut after 2", "a\xe2\x82\xac", 4, "a", true},
      {"three-byte char fits exactly", "a\xe2\x82\xac", 5, "a\xe2\x82\xac", false},
      // U+1F600 is f0 9f 98 80.
      {"four-byte char, cut after 3", "\xf0\x9f\x98\x80", 4, "", true},
      {"four-byte char then ascii", "\xf0\x9f\x98\x80xy", 6, "\xf0\x9f\x98\x80x", true},
  };
  for (const CutCase& c : cases) {
    std::string out(c.capacity, '\x7f');
    bool truncated = !c.truncated;
    const std::size_t n = CopyCut(c.text, out.data(), c.capacity, &truncated);
    EXPECT_EQ(std::string(out.data(), n), c.want) << c.name;
    EXPECT_EQ(out[n], '\0') << c.name;
    EXPECT_EQ(truncated, c.truncated) << c.name;
  }
}

}  // namespace
}  // namespace kiln::capi
