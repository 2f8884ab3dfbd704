#!/usr/bin/env python3
"""Writes the HTML report of scripts/compare_codegen.sh: one self-contained page (no scripts,
no external files) with the summary and, per changed kernel (and the preamble), a collapsible
side-by-side diff.

  codegen_report.py --a DIR_A --b DIR_B --changed CHANGED.txt --title T --summary S --output F

CHANGED.txt lists what differs, one "graph<TAB>file" per line ("." for the preamble), as
compare_codegen.sh wrote it; the files are DIR_A/graph/file and DIR_B/graph/file.
"""
import argparse
import difflib
import html
import os

CSS = """
body { font-family: sans-serif; margin: 1.5em; }
h1 { font-size: 1.3em; }
p.summary { font-size: 1.1em; font-weight: bold; }
details { margin: 0.4em 0; border: 1px solid #ccc; border-radius: 4px; }
summary { cursor: pointer; padding: 0.3em 0.6em; background: #f4f4f4; font-family: monospace; }
summary .counts { color: #666; margin-left: 1em; }
table.diff { font-family: monospace; font-size: 12px; border-collapse: collapse; width: 100%; }
table.diff td { padding: 0 0.4em; white-space: pre-wrap; vertical-align: top; }
table.diff th { background: #eee; }
.diff_header { background: #f0f0f0; color: #888; text-align: right; }
td.diff_header { width: 3em; }
.diff_next { display: none; }
.diff_add { background: #cfc; }
.diff_chg { background: #ffa; }
.diff_sub { background: #fcc; }
"""


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def section(label, a_lines, b_lines, a_name, b_name):
    added = removed = 0
    for line in difflib.unified_diff(a_lines, b_lines, lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    table = difflib.HtmlDiff(tabsize=4, wrapcolumn=90).make_table(
        a_lines, b_lines, a_name, b_name, context=True, numlines=3)
    return (f"<details><summary>{html.escape(label)}"
            f"<span class=\"counts\">+{added} &minus;{removed}</span></summary>\n"
            f"{table}\n</details>\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--a", "--b", "--changed", "--title", "--summary", "--output"):
        p.add_argument(name, required=True)
    args = p.parse_args()

    parts = []
    with open(args.changed, encoding="utf-8") as f:
        for row in f.read().splitlines():
            if not row:
                continue
            graph, file = row.split("\t", 1)
            rel = file if graph == "." else f"{graph}/{file}"
            label = "preamble (__preamble.cuh)" if graph == "." else rel
            a_path = os.path.join(args.a, rel)
            b_path = os.path.join(args.b, rel)
            a_name = f"a/{rel}" if os.path.exists(a_path) else "(absent in a)"
            b_name = f"b/{rel}" if os.path.exists(b_path) else "(absent in b)"
            parts.append(section(label, read_lines(a_path), read_lines(b_path), a_name, b_name))

    body = "".join(parts) if parts else "<p>Nothing differs.</p>\n"
    page = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(args.title)}</title>\n<style>{CSS}</style></head>\n<body>\n"
            f"<h1>{html.escape(args.title)}</h1>\n"
            f"<p class=\"summary\">{html.escape(args.summary)}</p>\n{body}</body></html>\n")
    tmp = args.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(tmp, args.output)


if __name__ == "__main__":
    main()
