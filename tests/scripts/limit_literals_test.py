#!/usr/bin/env python3
"""No bound is defined twice: every default limit kiln applies is a named
constant of the two policy headers (kiln/policy.h in core, and
kiln/formats/policy.h), and no other C++ or Python source of the project
spells one of their values as a literal (10 << 30, 100'000, 86400, 0x100000).

A second literal of a limit is how two edges drift apart (the idle timeout
in the command, a size bound in the Python scanner): the JS package has the
same lint for its own files (js/test/policy.test.mjs). Values below 1024 are
not looked for (5 redirects and 30 seconds are also a loop bound and a column
width elsewhere); comments and string literals do not count, so prose may
quote a limit. The few literals that equal a limit but mean something else
(a format's field width) are listed in ALLOWED with the reason.
"""
import io
import re
import sys
import tokenize
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POLICY = ["core/include/kiln/policy.h", "formats/include/kiln/formats/policy.h"]
CPP_DIRS = ["base", "core", "parser", "writer", "formats", "map", "capi", "cli", "python/src",
            "js/src"]
PY_DIRS = ["python/kiln"]
LEAST = 1024

# (file, value) -> why this literal is not a second definition of a limit.
ALLOWED = {
    ("core/include/kiln/block.h", 0xFFFF):
        "kNoHeapSlice and kNoAxis, the format's u16 markers (spec 2.3), not bounds",
    ("writer/src/writer.cc", 0xFFFF):
        "the u16 width of name_len (spec 2.3): a longer name cannot be encoded at all",
    ("base/src/escape.cc", 0xFFFF): "U+FFFF, a Unicode noncharacter the escaper names",
    ("base/src/escape.cc", 0x10000): "U+10000, the first code point UTF-8 writes in 4 bytes",
    ("formats/src/json_cursor.cc", 0x10000): "U+10000, where a JSON surrogate pair's code points start",
    ("core/internal/kiln/internal/name_table.h", 1024):
        "a term of the name table's probe budget (8 probes per name + 1024), not a bound of input",
    ("capi/include/kiln/kiln_c.h", 10000): "KILN_VERSION_NUMBER's digits: major * 10000",
    ("capi/include/kiln/kiln_c.h", 1024):
        "KILN_MESSAGE_CAPACITY, the size of kiln_error's message array: the ABI, not a bound",
}

# A constant expression: literals (any base, digit separators, suffixes,
# std::uint64_t{N}), + - * << and parentheses, and names of constants
# already read.
LITERAL = r"(?:0[xX][0-9a-fA-F'_]+|0[bB][01'_]+|[0-9][0-9'_]*)(?:[uUlL]{0,3})"
WRAPPED = r"(?:std::u?int(?:8|16|32|64)_t|u?int(?:8|16|32|64)_t)\{\s*(" + LITERAL + r")\s*\}"


def number(text):
    text = text.replace("'", "").replace("_", "").rstrip("uUlL")
    return int(text, 0) if not re.fullmatch(r"0[0-7]+", text) else int(text, 8)


def evaluate(expr, names):
    expr = re.sub(WRAPPED, r"\1", expr)
    out = []
    for tok in re.findall(LITERAL + r"|[A-Za-z_]\w*(?:::\w+)*|<<|[-+*()]|\S", expr):
        if re.fullmatch(LITERAL, tok):
            out.append(str(number(tok)))
        elif tok in ("<<", "+", "-", "*", "(", ")"):
            out.append(tok)
        elif tok.split("::")[-1] in names:
            out.append(str(names[tok.split("::")[-1]]))
        else:
            return None
    try:
        return eval("".join(out), {"__builtins__": {}})  # digits and operators only
    except (SyntaxError, TypeError, ZeroDivisionError):
        return None


def policy_limits():
    """{value: NAME} of the policy headers' integer constants >= LEAST."""
    names, limits = {}, {}
    for rel in POLICY:
        text = strip_cpp((ROOT / rel).read_text())
        for m in re.finditer(r"inline\s+constexpr\s+[\w:]+\s+(\w+)\s*=\s*([^;]+?)\s*;", text):
            value = evaluate(m.group(2), names)
            if value is None:
                continue
            names[m.group(1)] = value
            if value >= LEAST:
                limits.setdefault(value, m.group(1))
    return limits


def strip_cpp(text):
    """Comments and the contents of string and character literals blanked
    (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            j = text.find(")" + m.group(1) + '"', i) + len(m.group(1)) + 2
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def strip_py(text):
    """Comments and strings blanked, by Python's own tokenizer."""
    lines = text.splitlines(keepends=True)
    for tok in reversed(list(tokenize.generate_tokens(io.StringIO(text).readline))):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                line = lines[r - 1]
                a = c0 if r == r0 else 0
                b = c1 if r == r1 else len(line.rstrip("\n"))
                lines[r - 1] = line[:a] + " " * (b - a) + line[b:]
    return "".join(lines)


# Expressions worth evaluating: runs of literals joined by << or *, or one
# literal (the widest match first, so 10 << 30 is one value, not 10 and 30).
EXPR = re.compile(r"(?:" + WRAPPED + "|" + LITERAL + r")(?:\s*(?:<<|\*\*|\*)\s*(?:" + WRAPPED + "|"
                  + LITERAL + r"))*")


def literals(code):
    """(line, text, value) of each constant expression in stripped code."""
    for m in EXPR.finditer(code):
        start = m.start()
        if start > 0 and (code[start - 1].isalnum() or code[start - 1] in "_."):
            continue  # part of a name (x86_64) or a float
        text = m.group(0)
        value = evaluate(text.replace("**", "<<") if "**" in text else text, {})
        if "**" in text:
            a, b = (number(p) for p in text.split("**"))
            value = a ** b
        if value is not None:
            yield code.count("\n", 0, start) + 1, text, value


def findings(limits):
    out = []
    files = []
    for d in CPP_DIRS:
        files += [(p, strip_cpp) for p in sorted((ROOT / d).rglob("*")) if p.suffix in (".h", ".cc")]
    for d in PY_DIRS:
        files += [(p, strip_py) for p in sorted((ROOT / d).rglob("*.py"))]
    for path, strip in files:
        rel = str(path.relative_to(ROOT))
        if rel in POLICY:
            continue
        for line, text, value in literals(strip(path.read_text())):
            if value in limits and (rel, value) not in ALLOWED:
                out.append("%s:%d: %s is %s (%s)" % (rel, line, text.strip(), limits[value], POLICY))
    return out


class LimitLiterals(unittest.TestCase):
    def test_the_policy_headers_define_limits(self):
        limits = policy_limits()
        for name in ("kUploadMaxBlockBytes", "kMaxIdleTimeoutSeconds", "kHttpMaxRequests",
                     "kMaxSafetensorsHeaderBytes", "kGgufMaxTensors"):
            self.assertIn(name, limits.values())
        self.assertEqual(limits[10 << 30], "kUploadMaxBlockBytes")
        self.assertEqual(limits[86400], "kMaxIdleTimeoutSeconds")

    def test_no_source_spells_a_limit(self):
        self.assertEqual(findings(policy_limits()), [])

    def test_the_lint_finds_a_limit_in_code_not_in_comments_or_strings(self):
        limits = {10 << 30: "kUploadMaxBlockBytes", 86400: "kMaxIdleTimeoutSeconds",
                  100000: "kUploadMaxTensors", 1 << 20: "kUploadMaxNameBytes"}
        cpp = strip_cpp('int a = 86\'400;  // 86400\nauto b = std::uint64_t{10} << 30;\n'
                        'const char* s = "100000"; char c = \'1\';\nauto d = R"x(1 << 20)x";\n'
                        'auto e = 0x100000ull; int f = x86_64 + 1.5e10;\n')
        found = [(line, value) for line, _, value in literals(cpp) if value in limits]
        self.assertEqual(found, [(1, 86400), (2, 10 << 30), (5, 1 << 20)])
        py = strip_py('A = 100_000  # 86400\nB = "1 << 20"\nC = 2 ** 20\nD = """\n86400\n"""\n')
        found = [(line, value) for line, _, value in literals(py) if value in limits]
        self.assertEqual(found, [(1, 100000), (3, 1 << 20)])


if __name__ == "__main__":
    sys.exit(unittest.main())
