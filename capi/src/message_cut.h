// Copying a message into the fixed buffer of kiln_error (internal to the C
// ABI; tests/capi/message_cut_test.cc).
#ifndef KILN_CAPI_MESSAGE_CUT_H_
#define KILN_CAPI_MESSAGE_CUT_H_

#include <cstddef>
#include <cstring>
#include <string_view>

namespace kiln::capi {

// Copies text into out[0, capacity) with a NUL after it, cut at a UTF-8
// character boundary when it does not fit (capacity - 1 bytes at most).
// Returns the bytes copied; *truncated says whether the text was cut.
// Precondition: capacity >= 1.
inline std::size_t CopyCut(std::string_view text, char* out, std::size_t capacity,
                           bool* truncated) {
  std::size_t n = text.size();
  *truncated = false;
  if (n > capacity - 1) {
    *truncated = true;
    n = capacity - 1;
    // text[n] is the first byte left out: while it continues a character
    // (10xxxxxx), that character started before n; drop it whole.
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0U) == 0x80U) --n;
  }
  if (n > 0) std::memcpy(out, text.data(), n);
  out[n] = '\0';
  return n;
}

}  // namespace kiln::capi

#endif  // KILN_CAPI_MESSAGE_CUT_H_
