#!/usr/bin/env python3
"""Writes docs/rules.md: the rule table with traceability, from one list.

For each rule of core/include/kiln/rules.inc (the single list of rules) it
finds the parser code that reports it (every `Rule::ID` in parser/src, cited
by file and function, free or class method, never by line number), the
tests that name it (GoogleTest names and table rows that start with the id),
and the golden cases that expect it (golden/manifest.tsv). It fails when a
rule has no check, no test or no golden negative case.

    python3 scripts/gen_rules_doc.py          # rewrite docs/rules.md
    python3 scripts/gen_rules_doc.py --check  # fail if docs/rules.md is stale

Both also run a self-test of the function finder on a sample (free
functions, out-of-line methods, methods defined in a class body).
"""
import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLASS_NAMES = {"kFrame": "FRAME", "kType": "TYPE", "kLimit": "LIMIT", "kUtf8": "UTF8"}
# A function definition: a return type, then the name, which may be qualified
# (`BlockWriter::Add`, defined out of line) or indented (a method defined in
# its class body). Statements that look alike start with a keyword.
FUNC_RE = re.compile(
    r"^(\s*)(?:template <[^>]*>\s*)?(?:[\w:<>,*&]+\s+)+((?:\w+::)*~?\w+)\(")
CLASS_RE = re.compile(r"^(\s*)(?:class|struct)\s+(?:\[\[\w+\]\]\s+)?(\w+)\b[^;]*$")
NOT_A_TYPE = {"return", "co_return", "throw", "case", "else", "new", "delete", "goto", "using"}


def rules():
    text = (ROOT / "core/include/kiln/rules.inc").read_text()
    return re.findall(r'^KILN_RULE\((\w+),\s*(\w+),\s*"(.*)"\)$', text, re.M)


def functions(lines):
    """For each line, the name of the function whose body it is in ("?" when
    none): free functions, out-of-line methods (Class::Method) and methods
    defined inside a class body (Class::Method)."""
    classes = []  # (indent, name) of the enclosing class bodies
    func = "?"
    out = []
    for line in lines:
        if line.strip():
            indent = len(line) - len(line.lstrip())
            classes = [c for c in classes if c[0] < indent]  # `};` closes a body
        c = CLASS_RE.match(line)
        if c:
            classes.append((len(c.group(1)), c.group(2)))
        m = FUNC_RE.match(line)
        declaration = line.rstrip().endswith(";") and "{" not in line
        if (m and not declaration and line.split()[0] not in NOT_A_TYPE
                and "=" not in line.split("(")[0]):
            indent, name = len(m.group(1)), m.group(2)
            owner = [n for i, n in classes if i < indent]
            if indent == 0 or owner:
                func = "::".join(owner[-1:] + [name]) if "::" not in name else name
        out.append(func)
    return out


def checks(rule_id, srcs=None):
    """(file, function, count) for every function in the format core (core/src,
    core/internal/kiln/internal), parser/src and writer/src (.cc and .h) that reports rule_id: cited by name, not line, so moving code
    does not change the doc."""
    srcs = srcs or [ROOT / "core/src", ROOT / "core/internal/kiln/internal", ROOT / "parser/src",
                    ROOT / "writer/src"]
    found = {}
    paths = [p for src in srcs for p in sorted(list(src.glob("*.cc")) + list(src.glob("*.h")))]
    for path in paths:
        lines = path.read_text().splitlines()
        for line, func in zip(lines, functions(lines)):
            if re.search(r"Rule::%s\b" % rule_id, line):
                label = path.relative_to(ROOT) if path.is_relative_to(ROOT) else "parser/src/" + path.name
                key = (str(label), func)
                found[key] = found.get(key, 0) + 1
    return [(f, fn, n) for (f, fn), n in found.items()]


SELF_TEST = """\
Status CheckA(int x) {
  if (x) return Fail(Rule::H1, 0, "a");
}
Result<int> Writer::Add(const Request& r,
                        Payload p) {
  return Fail(Rule::H1, 0, "b");
}
class Checker {
 public:
  Status CheckB() const {
    const Error e = Make(Rule::H1);
    return Fail(Rule::H1, 1, "c");
  }
};
template <typename T>
Status CheckC(T t) { return Fail(Rule::H1, 2, "d"); }
"""


def self_test():
    """The function finder on free functions, out-of-line and in-class methods."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sample.cc").write_text(SELF_TEST)
        got = sorted(checks("H1", [Path(tmp)]))
    want = [("parser/src/sample.cc", "CheckA", 1), ("parser/src/sample.cc", "CheckC", 1),
            ("parser/src/sample.cc", "Checker::CheckB", 2),
            ("parser/src/sample.cc", "Writer::Add", 1)]
    if got != want:
        return ["self-test: function finder gives %s, want %s" % (got, want)]
    return []


def cite(check):
    path, func, n = check
    return "`%s` %s()%s" % (path, func, " x%d" % n if n > 1 else "")


def test_names():
    """Every test and table-row name in tests/, with its file."""
    names = []
    tests = ROOT / "tests"
    for path in sorted(p for p in tests.rglob("*.cc") if "node_modules" not in p.parts):
        text = path.read_text()
        name = str(path.relative_to(tests))
        for m in re.finditer(r"TEST(?:_P)?\((\w+),\s*(\w+)\)", text):
            names.append((name, "%s.%s" % (m.group(1), m.group(2)), m.group(2)))
        for m in re.finditer(r'(?:add\(\{|^\s*\{)"(\w+)"', text, re.M):
            names.append((name, m.group(1), m.group(1)))
    return names


def tests_for(rule_id, names):
    pattern = re.compile(r"^%s(?![0-9])" % rule_id)
    return ["%s: %s" % (f, full) for f, full, short in names if pattern.match(short)]


def golden_for(rule_id):
    cases = []
    for line in (ROOT / "golden/manifest.tsv").read_text().splitlines():
        cols = line.split("\t")
        if len(cols) == 6 and not line.startswith("#") and cols[2] == rule_id:
            cases.append(cols[0])
    return cases


def render():
    names = test_names()
    problems = []
    out = [
        "# Kiln v2 rules: checks, tests and golden cases",
        "",
        "Generated by `python3 scripts/gen_rules_doc.py` from the single rule list",
        "`core/include/kiln/rules.inc`; CI fails when this file is stale. The",
        "rules in prose, with the checking order and kiln's decisions, are in",
        "[spec.md](spec.md). Each check is cited by file and function (xN: the",
        "function reports the rule in N places), not by line, so moving code",
        "does not change this file.",
        "",
        "| id | class | rule | checked in | tests | golden cases |",
        "|---|---|---|---|---|---|",
    ]
    for rule_id, cls, summary in rules():
        where = checks(rule_id)
        tests = tests_for(rule_id, names)
        golden = golden_for(rule_id)
        if not where:
            problems.append("rule %s: no check in core/, parser/src or writer/src" % rule_id)
        if not tests:
            problems.append("rule %s: no test names it" % rule_id)
        if not golden:
            problems.append("rule %s: no golden negative case" % rule_id)
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            rule_id, CLASS_NAMES[cls], summary.replace("|", "\\|"),
            "<br>".join(cite(w) for w in where),
            "<br>".join("`%s`" % t for t in tests),
            "%d: %s" % (len(golden), ", ".join("`%s`" % g for g in golden))))
    out.append("")
    return "\n".join(out), problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text, problems = render()
    problems += self_test()
    target = ROOT / "docs/rules.md"
    for p in problems:
        print("error: " + p, file=sys.stderr)
    if args.check:
        if not target.exists() or target.read_text() != text:
            print("error: docs/rules.md is stale: run python3 scripts/gen_rules_doc.py",
                  file=sys.stderr)
            return 1
        print("docs/rules.md: up to date, every rule has a check, a test and a golden case"
              if not problems else "docs/rules.md: up to date")
        return 1 if problems else 0
    target.write_text(text)
    print("wrote docs/rules.md")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
