// A read-only memory map of a whole input file (base::MappedInput, which
// says what it guards against), whose stable prefix (kiln/stable_prefix.h: a
// Kiln block's header, descriptors and name heap; a foreign file's first 16
// MiB) is this process's own copy. Validation then touches only the pages it
// reads: the header, the directory, the padding and the payload gaps.
//
// The payload bytes and gaps can still change under us: P2 reads each gap
// once, unpack and convert copy payloads once, and every size and offset
// comes from the private copy, so a change there cannot make kiln crash or
// read out of bounds; it can only make the output differ from the bytes
// that were checked. A file truncated while mapped turns cut() true, and no
// output is committed (base::AnyMappingCut).
#ifndef KILN_CLI_MAPPED_FILE_H_
#define KILN_CLI_MAPPED_FILE_H_

#include <string>

#include "kiln/base/mapped_input.h"
#include "kiln/stable_prefix.h"

namespace kiln::cli {

class MappedFile : public base::MappedInput {
 public:
  explicit MappedFile(const std::string& path) : MappedInput(path, &StablePrefixLength) {}
};

}  // namespace kiln::cli

#endif  // KILN_CLI_MAPPED_FILE_H_
