#include "plain_descriptor.h"

namespace kiln::internal {
DescriptorFacts FactsOf(DescriptorBytes d) {
  return DescriptorFacts{LoadLe<std::uint64_t, desc::kByteOffset>(d),
                         LoadLe<std::uint64_t, desc::kByteLength>(d),
                         LoadLe<std::uint16_t, desc::kNameOff>(d),
                         LoadLe<std::uint16_t, desc::kNameLen>(d),
                         LoadLe<std::uint16_t, desc::kLayoutLen>(d) != 0,
                         LoadLe<std::uint16_t, desc::kQuantScheme>(d) != 0};
}

}  // namespace kiln::internal
