// libFuzzer target: kiln::Parse against the independent reference checker
// (fuzz/reference), in whole-buffer and prefix mode. Any difference in the
// verdict (valid or not, error class, rule id) is printed and traps.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "kiln/directory.h"
#include "reference_checker.h"

namespace {

void Compare(const std::uint8_t* data, std::size_t size, kiln::Mode mode) {
  const bool whole = mode == kiln::Mode::kWhole;
  kiln::ParseOptions options;
  options.mode = mode;
  const kiln::Result<kiln::Directory> r = kiln::Parse(std::span(data, size), options);
  const kiln_ref::Verdict ref = kiln_ref::Check(data, size, whole);

  std::string kiln_class, kiln_rule;
  if (!r.ok()) {
    kiln_class = std::string(kiln::ErrorClassName(r.error().error_class));
    kiln_rule = std::string(kiln::RuleName(r.error().rule));
  }
  if (r.ok() == ref.ok && kiln_class == ref.error_class && kiln_rule == ref.rule) return;

  std::fprintf(stderr,
               "fuzz_differential: DISAGREEMENT in %s mode on a %zu-byte input\n"
               "  kiln:      %s\n"
               "  reference: %s\n",
               whole ? "whole-buffer" : "prefix", size,
               r.ok() ? "ok" : r.error().ToString().c_str(),
               ref.ok ? "ok" : (ref.error_class + " " + ref.rule).c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Compare(data, size, kiln::Mode::kWhole);
  Compare(data, size, kiln::Mode::kPrefix);
  return 0;
}
