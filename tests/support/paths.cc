#include "support/paths.h"

namespace kiln::testing {

const char* GoldenDir() { return KILN_GOLDEN_DIR; }
const char* KilnBinary() { return KILN_BINARY; }
const char* FormatsFixtures() { return KILN_FORMATS_FIXTURES; }
const char* FaultPreloadLibrary() { return KILN_FAULT_PRELOAD; }
const char* PeakRssLauncher() { return KILN_PEAK_RSS; }

}  // namespace kiln::testing
