"""kiln::base::Format checks its format string against its arguments when
the program is compiled (base/include/kiln/base/format.h): every string
that does not match must fail to compile, with the checker's own name in
the compiler's message (not some other error), and the strings that match,
conversions side by side included, must compile.

usage: format_compile_test.py CXX INCLUDE_DIR
"""
import os
import subprocess
import sys
import tempfile

# (format string, arguments) that match: one translation unit.
GOOD = [
    ('"%d"', "1"),
    ('"%d"', "-9223372036854775807LL - 1"),
    ('"%d %d %d"', "std::uint8_t{1}, short{2}, 3ull"),
    ('"%s"', 'std::string("x")'),
    ('"%s%s"', 'std::string_view("x"), "y"'),
    ('"%02x%04x%08x%d%s%%%d"', '1, 2u, 3ll, 4, "t", 5'),
    ('"%%"', ""),
    ('"100%% of %d"', "7"),
    ('"no conversion"', ""),
    ('"a %d b %s c"', '1, "x"'),
]

# (format string, arguments, why) that do not match: each on its own.
BAD = [
    ('"%d"', '"x"', "text for %d"),
    ('"%s"', "1", "an integer for %s"),
    ('"%02x"', '"x"', "text for %02x"),
    ('"%d"', "true", "a bool is no integer"),
    ('"%d"', "1.5", "a double"),
    ('"%d"', "", "a missing argument"),
    ('"%d %d"', "1", "a missing second argument"),
    ('"x"', "1", "an extra argument"),
    ('"%d"', "1, 2", "an extra second argument"),
    ('"%x"', "1", "%x without a width"),
    ('"%03x"', "1", "an unsupported width"),
    ('"%u"', "1u", "an unknown conversion"),
    ('"%"', "", "a lone percent sign at the end"),
    ('"%%d"', "1", "%% is a percent sign, then d: an extra argument"),
    ('"%02x%d"', "1", "a missing argument after a padded hex"),
]

PRELUDE = ('#include <cstdint>\n#include <string>\n#include <string_view>\n'
           '#include "kiln/base/format.h"\n')


def compile_unit(cxx, include, body):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "unit.cc")
        with open(path, "w") as f:
            f.write(PRELUDE + body)
        return subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-I", include, path],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def call(fmt, args):
    return "(void)kiln::base::Format(%s%s);\n" % (fmt, ", " + args if args else "")


def main():
    cxx, include = sys.argv[1], sys.argv[2]
    failures = []
    good = compile_unit(cxx, include, "void f() {\n" + "".join(call(f, a) for f, a in GOOD) + "}\n")
    if good.returncode != 0:
        failures.append("matching format strings do not compile:\n" + good.stdout[-3000:])
    for fmt, args, why in BAD:
        r = compile_unit(cxx, include, "void f() {\n" + call(fmt, args) + "}\n")
        if r.returncode == 0:
            failures.append("%s (%s) compiles: %s" % (fmt, args, why))
        elif "FormatStringDoesNotMatchItsArguments" not in r.stdout:
            failures.append("%s (%s) fails for another reason:\n%s" % (fmt, args, r.stdout[-2000:]))
    for f in failures:
        print(f)
    print("%d matching strings, %d that must not compile: %s" % (
        len(GOOD), len(BAD), "FAILED" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
