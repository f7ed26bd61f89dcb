// Where the tests find what lies outside their binaries: the golden cases,
// the kiln command, the formats' fixture scripts and the library that
// stands for another process truncating a mapped file. Absolute paths of
// this checkout and build tree, compiled into one object (paths.cc) and
// nowhere else: every other test object is then the same from one clone to
// the next, so a compiler cache serves it (ccache's CCACHE_BASEDIR makes
// include paths relative, not the values of -D definitions).
#ifndef KILN_TESTS_SUPPORT_PATHS_H_
#define KILN_TESTS_SUPPORT_PATHS_H_

namespace kiln::testing {

// golden/ (manifest.tsv, cases/, maps/).
[[nodiscard]] const char* GoldenDir();
// The kiln command of this build ("" in a build without it).
[[nodiscard]] const char* KilnBinary();
// tests/formats/ (the NumPy and independent writers' scripts).
[[nodiscard]] const char* FormatsFixtures();
// support/fault_preload.cc built as an LD_PRELOAD library ("" without the
// command).
[[nodiscard]] const char* FaultPreloadLibrary();
// support/peak_rss.cc: runs a command and reports its peak RSS, forked from
// a small process ("" without the command).
[[nodiscard]] const char* PeakRssLauncher();

}  // namespace kiln::testing

#endif  // KILN_TESTS_SUPPORT_PATHS_H_
