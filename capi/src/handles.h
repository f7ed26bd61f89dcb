// The C ABI's handles (kiln/kiln_c.h's opaque structs) as C++ holds them,
// internal to capi/src: kiln_c.cc makes and reads them, map_c.cc draws a
// range validator's block from its own bytes and verdict.
#ifndef KILN_CAPI_HANDLES_H_
#define KILN_CAPI_HANDLES_H_

#include <cstdint>
#include <optional>

#include "kiln/directory.h"
#include "kiln/kiln_c.h"
#include "kiln/random_access.h"
#include "kiln/stream.h"

struct kiln_directory {
  kiln::Directory directory;
};

struct kiln_stream {
  explicit kiln_stream(const kiln::StreamOptions& options) : validator(options) {}
  kiln::StreamValidator validator;
  bool finished = false;
  // The validated directory once the status is kComplete (a copy of the
  // validator's, which refers to the validator's kept bytes).
  std::optional<kiln_directory> directory;
};

struct kiln_ranges {
  kiln_ranges(std::uint64_t file_size, const kiln::RangeOptions& options)
      : validator(file_size, options) {}
  kiln::RangeValidator validator;
  // The validated directory once the status is kComplete (as for streams).
  std::optional<kiln_directory> directory;
};

#endif  // KILN_CAPI_HANDLES_H_
