"""Writes the rule list as an HTML page (one anchor per rule id) from
`KILN rules` (id, class and summary, tab-separated), to standard output."""
import html
import subprocess
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: rules_page.py KILN", file=sys.stderr)
        return 2
    tsv = subprocess.run([sys.argv[1], "rules"], check=True, capture_output=True, text=True).stdout
    rows = []
    for line in tsv.splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        rule, cls, summary = (html.escape(p) for p in parts)
        rows.append(f'<tr id="{rule}"><td><a href="#{rule}">{rule}</a></td><td>{cls}</td><td>{summary}</td></tr>')
    print(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'self'; img-src 'self'\">\n"
        "<title>Kiln v2 rules</title>\n<link rel=\"icon\" href=\"../favicon.svg\">\n<link rel=\"stylesheet\" href=\"../style.css\">\n</head>\n<body>\n"
        "<h1>Kiln v2 rules</h1>\n<p>The rules a block is checked against, in the rule set's order "
        "(docs/spec.md gives the checking order and docs/rules.md the tests of each).</p>\n"
        "<table>\n<thead><tr><th>rule</th><th>class</th><th>statement</th></tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n<p><a href=\"../index.html\">back to the page</a></p>\n</body>\n</html>"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
