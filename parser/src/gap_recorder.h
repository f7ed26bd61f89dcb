// The uncovered payload ranges CheckPayloads walks (rule P2), recorded for
// checking later: by StreamValidator as the bytes arrive, by RangeValidator
// as it reads them. Internal to the parser library.
#ifndef KILN_PARSER_SRC_GAP_RECORDER_H_
#define KILN_PARSER_SRC_GAP_RECORDER_H_

#include <cstdint>
#include <optional>

#include "kiln/internal/rules.h"

namespace kiln::internal {

// Appends each gap [from, to) (relative to payload_base, in offset order) to
// a list of structs with members `from` and `to`.
template <typename GapList>
class GapRecorder final : public GapVisitor {
 public:
  explicit GapRecorder(GapList& gaps) : gaps_(gaps) {}
  Check Gap(std::uint64_t from, std::uint64_t to) override {
    gaps_.push_back({from, to});
    return std::nullopt;
  }

 private:
  GapList& gaps_;
};

}  // namespace kiln::internal

#endif  // KILN_PARSER_SRC_GAP_RECORDER_H_
