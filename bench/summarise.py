"""Summarise `bench/results/*.json` (written by the harness) into the README's benchmark table.

    python bench/summarise.py            # print the table
    python bench/summarise.py --readme   # also replace the table between the README's markers

Each row: the command, the figure as a same-run ratio with its min–max over interleaved
rounds, the absolute value with its spread, and the machine and load it was measured at.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import RESULTS, relation, span

README = RESULTS.parent.parent / "README.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def row(rec: dict, f: dict) -> str:
    m = rec["machine"]
    where = (f"{m['cores']} cores, load {rec['load_before'][0]:g}→{rec['load_after'][0]:g}, "
             f"{rec['started'][:10]}")
    note = f" ({f['note']})" if f.get("note") else ""
    return f"| `{rec['command']}` | {f['figure']}{note} | {relation(f, bold=True)} | {span(f)} | {where} |"


def table() -> str:
    lines = ["| command | figure | same-run ratio (min–max) | absolute (min–max) | measured on |",
             "|---|---|---|---|---|"]
    cpus = set()
    for path in sorted(RESULTS.glob("*.json")):
        rec = json.loads(path.read_text())
        cpus.add(rec["machine"]["cpu"])
        lines += [row(rec, f) for f in rec["figures"]]
    lines.append("")
    lines.append("Machine: " + "; ".join(sorted(cpus)) + ". Ratios are per interleaved round (ours and the "
                 "baseline alternate), so both sides of a ratio share the machine's state at that moment.")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--readme", action="store_true", help="rewrite the table between the README's markers")
    args = ap.parse_args()
    text = table()
    print(text)
    if args.readme:
        readme = README.read_text()
        if START not in readme or END not in readme:
            sys.exit(f"README has no {START} ... {END} markers")
        head, rest = readme.split(START, 1)
        _, tail = rest.split(END, 1)
        README.write_text(f"{head}{START}\n{text}\n{END}{tail}")
        print(f"\nREADME table rewritten from {len(list(RESULTS.glob('*.json')))} result files")


if __name__ == "__main__":
    main()
