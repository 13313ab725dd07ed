"""Summarise `bench/results/*.json` (written by the harness) into the README's benchmark table.

    python bench/summarise.py            # print the table
    python bench/summarise.py --readme   # also replace the table between the README's markers

One table, one row per figure, grouped by bench in a fixed order (ORDER) with the command and
the machine and load on each group's first row: the figure as a same-run ratio with its min–max
over interleaved rounds, and the absolute value with its spread.
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


# The README table's order: the engine and its scale-out, then the library by domain, then the
# service. A results file not named here follows, alphabetically.
ORDER = [
    "engine_availability",
    "engine_peers",
    "scaleout",
    "decisions",
    "rbd_uncertainty",
    "life_fit",
    "life_nonparametric",
    "regression_cox",
    "recurrent",
    "alt_bootstrap",
    "strategy_calculators",
    "fleet",
    "service_load",
    "service_rbd_latency",
    "photo_memory_jpeg",
    "photo_memory_png",
    "loop_stall",
    "openapi_acceptance",
]


def where(rec: dict) -> str:
    m = rec["machine"]
    return f"{m['cores']} cores, load {rec['load_before'][0]:g}→{rec['load_after'][0]:g}, {rec['started'][:10]}"


def rows(rec: dict) -> list[str]:
    """One row per figure; the bench's command and machine on its first row only, so a group of
    figures from one run reads as one block, and a note only where it differs from the row above."""
    out, last = [], ""
    for k, f in enumerate(rec["figures"]):
        note = f" ({f['note']})" if f.get("note") and f["note"] != last else ""
        last = f.get("note", "")
        command, machine = (f"`{rec['command']}`", where(rec)) if k == 0 else ("", "")
        out.append(f"| {command} | {f['figure']}{note} | {relation(f, bold=True)} | {span(f)} | {machine} |")
    return out


def records() -> list[dict]:
    recs = [json.loads(p.read_text()) for p in RESULTS.glob("*.json")]
    rank = {name: k for k, name in enumerate(ORDER)}
    return sorted(recs, key=lambda r: (rank.get(r["bench"], len(ORDER)), r["bench"]))


def table() -> str:
    lines = ["| command | figure | same-run ratio (min–max) | absolute (min–max) | measured on |",
             "|---|---|---|---|---|"]
    cpus = set()
    for rec in records():
        cpus.add(rec["machine"]["cpu"])
        lines += rows(rec)
    lines.append("")
    lines.append("Machine: " + "; ".join(sorted(cpus)) + ". Ratios are per interleaved round (ours and the "
                 "baseline alternate), so both sides of a ratio share the machine's state at that moment; "
                 "each command's block of rows comes from one run of it.")
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
