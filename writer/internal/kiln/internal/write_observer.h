// A hook on the writer's two costly steps, for the test that holds it to one
// descriptor encode per tensor and one directory build per write
// (tests/writer/writer_test.cc). Nothing installs one outside the tests:
// the writer then pays one relaxed load and an untaken branch per step.
// Internal to the writer and its tests (kiln::writer_internal).
#ifndef KILN_INTERNAL_WRITE_OBSERVER_H_
#define KILN_INTERNAL_WRITE_OBSERVER_H_

#include <cstdint>

namespace kiln::internal {

enum class WriteStep : std::uint8_t {
  kDescriptorEncode,  // a descriptor encoded (BlockWriter::Add)
  kDirectoryBuild,    // a block laid out and sealed (BlockWriter::Plan)
};

// Called on each step, from the thread that takes it.
using WriteObserver = void (*)(WriteStep);

// Installs `observer` (nullptr removes it) for the whole process and returns
// the one it replaces.
WriteObserver SetWriteObserver(WriteObserver observer);

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_WRITE_OBSERVER_H_
