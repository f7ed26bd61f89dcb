// The uncovered payload ranges CheckPayloads walks (rule P2), recorded for
// checking later: by StreamValidator as the bytes arrive, by RangeValidator
// as it reads them; and the directory-region check both run once they hold
// the first payload_base bytes. Internal to the parser library.
#ifndef KILN_PARSER_SRC_GAP_RECORDER_H_
#define KILN_PARSER_SRC_GAP_RECORDER_H_

#include <cstdint>
#include <optional>
#include <vector>

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

// Every rule from H9 to P1 on the directory region `kept` (the block's first
// payload_base bytes, the payloads absent), recording the gaps into `gaps`
// for P2. Releases the spare capacity of both once they are final.
template <typename GapList>
[[nodiscard]] Check CheckDirectoryRegion(std::vector<std::uint8_t>& kept, const HeaderInfo& h,
                                         GapList& gaps) {
  kept.shrink_to_fit();
  GapRecorder<GapList> recorder(gaps);
  Scratch scratch({});
  if (Check e = CheckBlock(kept, h, scratch, &recorder)) return e;
  gaps.shrink_to_fit();
  return std::nullopt;
}

}  // namespace kiln::internal

#endif  // KILN_PARSER_SRC_GAP_RECORDER_H_
