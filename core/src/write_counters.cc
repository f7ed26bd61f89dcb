#include "kiln/internal/write_counters.h"

namespace kiln::internal {

WriteCounters& GetWriteCounters() {
  static WriteCounters counters;
  return counters;
}

}  // namespace kiln::internal
