// Parses the file named on the command line with the installed library,
// writes it again with the installed writer, and prints its tensor count;
// exit 1 when it is invalid.
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/writer.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                        std::istreambuf_iterator<char>()};
  const kiln::Result<kiln::Directory> r = kiln::Parse(bytes);
  if (!r.ok()) {
    std::cout << r.error().ToString() << "\n";
    return 1;
  }
  const kiln::Result<kiln::BlockWriter> w = kiln::BlockWriter::From(r.value());
  if (!w.ok()) return 1;
  const kiln::Result<kiln::BlockPlan> plan = w.value().Plan();
  if (!plan.ok() || !plan.value().WriteToMemory().ok()) return 1;
  std::cout << "tensors: " << r.value().tensor_count() << "\n";
  return 0;
}
