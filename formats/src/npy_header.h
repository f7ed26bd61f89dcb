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
// each once, in any order. The text starts with '{'; spaces, tabs, CR and LF
// may separate the tokens inside the dict, and spaces or tabs then one LF
// may follow the closing brace (where NumPy's Python tokenizer takes other
// whitespace badly: "\n {" or "}\n " are refused by numpy.load). A Python 2
// long ("3L") is read only when `python2_longs` (versions 1.0 and 2.0).
[[nodiscard]] FormatResult<NpyHeaderFields> ParseNpyHeaderDict(std::string_view text,
                                                               bool python2_longs);

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_NPY_HEADER_H_
