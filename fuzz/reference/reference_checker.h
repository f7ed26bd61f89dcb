// An independent, deliberately plain reference checker for the Kiln v2
// tensor directory rules (H1..P2), used as a differential oracle against
// kiln's parser. It is written straight from the rule table in the rule
// table's checking order and shares no code with parser/: it has its own
// little-endian reads, dtype table and UTF-8 check. It favours being
// obviously correct over being fast; there are no caller limits (every limit
// is at the format's maximum).
#ifndef KILN_FUZZ_REFERENCE_REFERENCE_CHECKER_H_
#define KILN_FUZZ_REFERENCE_REFERENCE_CHECKER_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln_ref {

struct Verdict {
  bool ok;
  std::string error_class;  // "FRAME", "TYPE", "LIMIT" or "UTF8"; empty when ok
  std::string rule;         // "H1" .. "P2"; empty when ok
};

// Checks data[0, size) against every rule and reports the first rule that
// fails in the checking order, or ok. whole_buffer = true: the buffer must be
// exactly the block (trailing bytes are FRAME H8); false: prefix mode, bytes
// after the block are allowed and not read.
Verdict Check(const std::uint8_t* data, std::size_t size, bool whole_buffer);

}  // namespace kiln_ref

#endif  // KILN_FUZZ_REFERENCE_REFERENCE_CHECKER_H_
