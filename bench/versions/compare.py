"""Two engine versions side by side: runs the pytest-benchmark suite in bench/versions under each,
saves each run under its engine's version and build in bench/results/versions, then prints
`pytest-benchmark compare` grouped by benchmark name, the speed ratio per benchmark, and the
figures each benchmark computed, checked between the two runs.

A side is either a Python interpreter with a version installed (a venv's `bin/python`, e.g. from
`pip install 'dist/bathtub-<version>.whl[test]'`: the suite needs pytest and pytest-benchmark
there too) or a source tree's `python/` folder with a built engine in it (run with this
interpreter and that folder first on PYTHONPATH):

    python bench/versions/compare.py --a /tmp/venv-old/bin/python --b python
    python bench/versions/compare.py --a /tmp/old-checkout/python --b python --rounds 7

Timings are CPU seconds of the process (`time.process_time`; the engine runs on one thread in
every benchmark), so a neighbour's load slows both sides less than wall time would; still, run
both on the same machine, one after the other, and read the load average saved with each run.

Figures: a figure with `<name>_std_error` beside it is Monte Carlo: the two values are compared
on z = (b - a) / sqrt(se_a² + se_b²) with Holm's correction over all such figures at 5%
(`bathtub.rbd.compare.holm`): `same` or `changed`. The suite runs fixed seeds, so both runs share
random numbers when the engines draw alike (then the independent-runs error is conservative).
Other figures (fits, calculators, event counts) have no noise to weigh: `equal` to 1e-9
relative, else `differs`. Bit-equal values of either kind are `identical` (left out of Holm's
family: they cannot be a false alarm).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
STORAGE = ROOT / "bench" / "results" / "versions"
IDENTITY = ("import sys; sys.path.insert(0, {here!r}); from conftest import engine_identity; "
            "i = engine_identity(); print(i['engine_version'] + '-' + i['engine_build'])")
COLUMNS = "min,median,iqr,rounds"
ALPHA = 0.05


def side_command(spec: str) -> tuple[list[str], dict[str, str]]:
    """(interpreter argv, environment) for a side given as an interpreter or a `python/` folder."""
    path = Path(spec).resolve()
    env = dict(os.environ)
    if path.is_dir():
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        return [sys.executable], env
    return [str(path)], env


def label_of(spec: str) -> str:
    argv, env = side_command(spec)
    out = subprocess.run([*argv, "-c", IDENTITY.format(here=str(HERE))], env=env, check=True, capture_output=True,
                         text=True, cwd=ROOT)
    return out.stdout.strip()


def run_suite(spec: str, label: str, rounds: int, extra: list[str]) -> Path:
    """Run the suite under one side, saved as `<label>`; answers the saved JSON file."""
    argv, env = side_command(spec)
    before = set(STORAGE.rglob("*.json"))
    # -o addopts= : one process (pyproject's addopts run the tests on a worker per CPU, under which
    # pytest-benchmark turns itself off), and a side that has pytest and pytest-benchmark but no xdist
    cmd = [*argv, "-m", "pytest", str(HERE), "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--benchmark-only",
           f"--benchmark-storage=file://{STORAGE}", f"--benchmark-save={label}",
           "--benchmark-timer=time.process_time", f"--benchmark-min-rounds={rounds}", *extra]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, env=env, check=True, cwd=ROOT)
    made = sorted(set(STORAGE.rglob("*.json")) - before, key=lambda p: p.stat().st_mtime)
    if not made:
        raise SystemExit(f"the run of {spec} saved nothing in {STORAGE}")
    return made[-1]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def benchmark_compare(a: Path, b: Path) -> None:
    """pytest-benchmark's own table: each benchmark's two runs one above the other."""
    code = "import sys; from pytest_benchmark.cli import main; sys.argv[0] = 'pytest-benchmark'; main()"
    cmd = [sys.executable, "-c", code, "compare", str(a), str(b), "--group-by=name", f"--columns={COLUMNS}",
           "--sort=name", "--name=short"]
    print("$ pytest-benchmark compare", _shown(a), _shown(b),
          f"--group-by=name --columns={COLUMNS} --sort=name --name=short", flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)


def _holm(p_values: list[float]) -> list[float]:
    try:
        from bathtub.rbd.compare import holm
    except ImportError:  # this interpreter has no bathtub: Bonferroni (Holm's upper bound) instead
        return [min(1.0, p * len(p_values)) for p in p_values]
    return holm(p_values)


def figure_rows(run_a: dict[str, Any], run_b: dict[str, Any]) -> list[dict[str, Any]]:
    by_a = {x["fullname"]: x for x in run_a["benchmarks"]}
    rows: list[dict[str, Any]] = []
    for x in run_b["benchmarks"]:
        if x["fullname"] not in by_a:
            continue
        fa, fb = by_a[x["fullname"]]["extra_info"].get("figures", {}), x["extra_info"].get("figures", {})
        for key, va in fa.items():
            if key.endswith("_std_error") or key not in fb:
                continue
            vb, se_key = fb[key], f"{key}_std_error"
            row = {"benchmark": x["name"], "figure": key, "a": va, "b": vb}
            if va == vb:
                row["verdict"] = "identical"  # the same draws, or the same deterministic answer, to the bit
            elif se_key in fa and se_key in fb and math.hypot(fa[se_key], fb[se_key]) > 0:
                z = (vb - va) / math.hypot(fa[se_key], fb[se_key])
                row |= {"z": z, "p": math.erfc(abs(z) / math.sqrt(2.0))}
            else:
                row["verdict"] = "equal" if abs(vb - va) <= 1e-9 * max(1.0, abs(va), abs(vb)) else "differs"
            rows.append(row)
    tested = [r for r in rows if "p" in r]
    for r, adjusted in zip(tested, _holm([r["p"] for r in tested]), strict=True):
        r["verdict"] = "changed" if adjusted <= ALPHA else "same"
    return rows


def report(a: Path, b: Path) -> None:
    run_a, run_b = json.loads(a.read_text()), json.loads(b.read_text())
    for name, run in (("a", run_a), ("b", run_b)):
        ident, load = run["machine_info"].get("bathtub", {}), run["machine_info"].get("load_average")
        print(f"{name}: engine {ident.get('engine_version')} build {ident.get('engine_build')} "
              f"({ident.get('library_version')}), load average {load}, {a.name if name == 'a' else b.name}")
    medians = {x["fullname"]: x["stats"]["median"] for x in run_a["benchmarks"]}
    print("\nspeed: median CPU time of a over b (above 1: b is faster)")
    for x in run_b["benchmarks"]:
        if x["fullname"] in medians:
            print(f"  {x['name']:<45} {medians[x['fullname']] / x['stats']['median']:6.3f}x")
    rows = figure_rows(run_a, run_b)
    print(f"\nfigures ({sum('z' in r for r in rows)} Monte Carlo figures that differ, Holm at {ALPHA:g}; "
          "identical: equal to the bit; equal/differs: no noise to weigh)")
    for r in rows:
        z = f"z {r['z']:+.2f}" if "z" in r else ""
        print(f"  {r['benchmark']:<40} {r['figure']:<34} {r['a']:<14.8g} {r['b']:<14.8g} {z:<9} {r['verdict']}")
    bad = [r for r in rows if r["verdict"] in ("changed", "differs")]
    print(f"\n{len(bad)} of {len(rows)} figures changed or differ" if bad else f"\nall {len(rows)} figures agree")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", help="the baseline: a Python interpreter, or a source tree's python/ folder")
    ap.add_argument("--b", help="the version compared with it, likewise")
    ap.add_argument("--label-a", help="name the run of a is saved under (default: engine version-build)")
    ap.add_argument("--label-b", help="likewise for b")
    ap.add_argument("--rounds", type=int, default=5, help="at least this many timed rounds a benchmark (default 5)")
    ap.add_argument("--compare-only", nargs=2, metavar=("RUN_A", "RUN_B"),
                    help="skip the runs: compare two saved JSON files of bench/results/versions")
    ap.add_argument("pytest_args", nargs="*", help="passed to pytest (after --), e.g. -k sample_bulk")
    args = ap.parse_args()
    if args.compare_only:
        a, b = (Path(p).resolve() for p in args.compare_only)
    elif args.a and args.b:
        a = run_suite(args.a, args.label_a or label_of(args.a), args.rounds, args.pytest_args)
        b = run_suite(args.b, args.label_b or label_of(args.b), args.rounds, args.pytest_args)
    else:
        ap.error("give --a and --b, or --compare-only RUN_A RUN_B")
    benchmark_compare(a, b)
    report(a, b)


if __name__ == "__main__":
    main()
