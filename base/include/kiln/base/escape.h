// The one function that makes untrusted text (tensor names, metadata keys
// and values, paths, anything a file or a command line supplies) safe and
// unambiguous on a terminal, in an error message or in a report.
#ifndef KILN_BASE_ESCAPE_H_
#define KILN_BASE_ESCAPE_H_

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace kiln::base {

inline constexpr std::size_t kNoCut = std::numeric_limits<std::size_t>::max();

// `text` with everything that could drive, repaint, reorder or disguise a
// terminal made visible, and the escape character itself escaped, so that
// two different inputs never print the same:
//   backslash              \\ (doubled)
//   C0 controls, DEL       \xNN      (bytes 0x00..0x1F, 0x7F)
//   bytes that are not well-formed UTF-8 (RFC 3629)   \xNN, one per byte
//   C1 controls U+0080..U+009F, bidi controls (U+061C, U+200E, U+200F,
//   U+202A..U+202E, U+2066..U+2069), zero-width characters (U+200B..U+200D,
//   U+2060, U+FEFF), U+2028, U+2029, tag characters U+E0000..U+E007F, every
//   other format character and character a terminal draws as nothing
//   (variation selectors, fillers, ...), and the noncharacters
//   (U+FDD0..U+FDEF, U+FFFE, U+FFFF, U+1FFFE, U+1FFFF, ..., U+10FFFF):
//                          \u{NNNN}  (the code point in hex, 4 to 6 digits)
// Every other well-formed character is copied unchanged, so the result
// holds no character XML 1.0 forbids (a writer of XML adds only its markup
// references). At most `max_bytes` bytes of `text` are escaped (never cutting
// a character in two); "..." marks a cut.
[[nodiscard]] std::string Escape(std::string_view text, std::size_t max_bytes = kNoCut);

// Escape(text, max_bytes) in double quotes, with a double quote inside
// written \x22, so a name in a message shows where it ends: `"a\x22b"`.
[[nodiscard]] std::string Quoted(std::string_view text, std::size_t max_bytes = 64);

// `text` as the inside of a JSON string literal (RFC 8259; no quotes), by
// the same classification as Escape:
//   " and backslash        \" and two backslashes
//   C0 controls, DEL       \u00NN
//   C1 controls, bidi controls, zero-width characters, U+2028, U+2029, tag
//   characters, noncharacters (the characters Escape writes \u{NNNN})
//                          \uNNNN, as a UTF-16 surrogate pair above U+FFFF
//                          (U+E0041 is \udb40\udc41)
//   a byte that is not part of well-formed UTF-8 (a file name can hold any
//   byte)                  \udcNN: the lone low surrogate U+DC00 + byte, as
//                          Python's "surrogateescape" decodes it (PEP 383), so
//                          os.fsencode(json.loads(s)) gives the bytes back and
//                          the byte 0xE9 (\udce9) never looks like the
//                          character U+00E9 (which is copied as it is)
// Every other well-formed character is copied unchanged (UTF-8).
[[nodiscard]] std::string JsonEscape(std::string_view text);

}  // namespace kiln::base

#endif  // KILN_BASE_ESCAPE_H_
