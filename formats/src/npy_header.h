// The header dict of an .npy file, read by a strict parser of the tiny subset
// of Python literals NumPy writes: a dict with string keys, strings, True,
// False and tuples of non-negative integers. Nothing else is accepted, and
// nothing is evaluated.
#ifndef KILN_FORMATS_SRC_NPY_HEADER_H_
#define KILN_FORMATS_SRC_NPY_HEADER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/formats/result.h"

namespace kiln::formats::internal {

struct NpyHeaderFields {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
};

// Parses the dict; exactly the keys 'descr', 'fortran_order' and 'shape',
// each once, in any order. Whitespace may follow the closing brace.
[[nodiscard]] FormatResult<NpyHeaderFields> ParseNpyHeaderDict(std::string_view text);

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_NPY_HEADER_H_
