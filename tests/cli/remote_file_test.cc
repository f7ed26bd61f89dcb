// HttpStatusCode (cli/remote_file.h): the status line of every reply kiln
// validate URL reads. The hostile server (tests/http) sends the lines curl
// lets through; these are the rest, as a server could write them.
#include "remote_file.h"

#include <string>

#include "gtest/gtest.h"

namespace kiln::cli {
namespace {

TEST(HttpStatusCode, ThreeDigitsBetweenSpaces) {
  EXPECT_EQ(HttpStatusCode("HTTP/1.1 206 Partial Content\r\n"), 206);
  EXPECT_EQ(HttpStatusCode("HTTP/1.1 200 OK"), 200);
  EXPECT_EQ(HttpStatusCode("HTTP/2 404 \r\n"), 404);     // an empty reason phrase
  EXPECT_EQ(HttpStatusCode("HTTP/1.1 206\r\n"), 206);    // and none at all
  EXPECT_EQ(HttpStatusCode("HTTP/1.0 999 x\r\n"), 999);  // every digit
  EXPECT_EQ(HttpStatusCode("HTTP/1.1 000 x"), 0);
  EXPECT_EQ(HttpStatusCode("HTTP/1.1 123 \t\r\n"), 123);
  for (char d = '0'; d <= '9'; ++d) {
    const std::string line = std::string("HTTP/1.1 ") + d + d + d + " x";
    EXPECT_EQ(HttpStatusCode(line), (d - '0') * 111) << line;
  }
}

TEST(HttpStatusCode, AnythingElseHasNoCode) {
  for (const char* line : {
           "HTTP/1.1  206 Partial Content",  // two spaces
           "HTTP/1.1 206x Partial Content",  // a letter after the code
           "HTTP/1.1 2060 x",                // four digits
           "HTTP/1.1 2060",                  // four, at the end
           "HTTP/1.1 206x",                  // a letter, at the end
           "HTTP/1.1 20 OK",                 // two
           "HTTP/1.1 20",                    // two, at the end
           "HTTP/1.1 2",                     // one
           "HTTP/1.1 ",                      // none
           "HTTP/1.1",                       // no space
           "HTTP/1.1\t206 x",                // a tab, not SP
           "HTTP/1.1 2O6 x",                 // a letter O
           "HTTP/1.1 20/ x",                 // '/' is '0' - 1
           "HTTP/1.1 20: x",                 // ':' is '9' + 1
           "HTTP/1.1 +20 x",
           "HTTP/1.1 -20 x",
           "",
       }) {
    EXPECT_EQ(HttpStatusCode(line), 0) << line;
  }
}

}  // namespace
}  // namespace kiln::cli
