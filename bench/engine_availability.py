"""Engine benchmark: the same 10-block repairable plant (two parallel trains of 5 blocks in
series, exponential MTTF 1000 h, MTTR 10 h, 10,000 h) on the engine (1 thread and all
threads), a vectorised NumPy model of the same plant, and CERN's availsim4 and RePyability
where they are installed (in this interpreter, or in the venv named by BATHTUB_PEERS_PYTHON).

Prints events/s (failures + repairs), mean availability with its 95% interval, the ratios,
the engine's cost per event for 10, 100 and 1,000 blocks, and the cost per event of each
maintenance feature (proof tests, common cause, planned replacement, costs, Kijima repair,
capacity, initial states, network mode, phases) on the same plant against the plain plant.

The core path (no feature in the diagram) must keep >= 90% of the engine-core events/s
measured before those features: the figure recorded below is printed beside today's; with
`--baseline-binary` (the `two_trains` example built from the engine-core commit) both Rust
binaries run interleaved here and their medians are compared on this machine, now.

The physical limit: `bare_loop` (rust/engine/examples/bare_loop.rs) runs the same plant
with the same random draws and nothing but the event loop; it is built here and run
interleaved with the engine (through Python, and the `two_trains` Rust example), and the
engine's share of its events/s is the headline figure, written by the shared harness to
bench/results/engine_availability.json (`python bench/summarise.py` makes the README table).

    python bench/engine_availability.py [--replications 20000] [--repeats 3] [--baseline-binary PATH]
    python bench/engine_availability.py --limit-only [--repeats 11]
    BATHTUB_PEERS_PYTHON=/path/to/venv/bin/python python bench/engine_availability.py --peers-only
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine.numpy_model import simulate as numpy_simulate
from engine.plant import HORIZON, MTTF, MTTR, exact_mean_availability, two_trains
from harness import Bench
from harness import timed as harness_timed

from bathtub.engine import simulate_availability, simulate_mission

PEERS = Path(__file__).resolve().parent / "engine" / "peers.py"
ROOT = Path(__file__).resolve().parent.parent
# Engine core (commit 9a9885c, before the maintenance features), `two_trains 5 20000 1`
# interleaved with the feature build (commit 7eb02cb), 11 runs each, load average 1.7-2.5
# on the 2-core bench machine: median 19.23 M events/s (before) vs 18.61 M (now, core
# path), 96.8%; callgrind on `two_trains 5 4000 1`: 454.9 M vs 462.9 M instructions (+1.8%).
CORE_BEFORE_FEATURES = 19.23e6
# Core-path performance pass (commits c873820, 524d61f, 5f90220 after e3c64c1): callgrind on
# `two_trains 5 4000 1`: 462.9 M -> 402.9 M instructions (-13.0%); `two_trains 5 30000 1`
# interleaved with the e3c64c1 build, 11 runs each, load average 0.7-1.1: median 18.41 ->
# 20.16 M events per CPU-second (+9.5%, 54.3 -> 49.6 ns/event). Same numbers for a seed.


def timed(fn, repeats: int):
    """Median wall seconds, median CPU seconds (all threads of this process), last output.
    CPU time is printed too because the bench machine is shared: a busy neighbour slows
    the wall clock, not the work done per CPU-second."""
    times, cpus, out = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(times), statistics.median(cpus), out


def engine_row(reps: int, threads: int | None, repeats: int, per_train: int = 5):
    d = two_trains(per_train)
    secs, cpu, res = timed(lambda: simulate_availability(d, horizon=HORIZON, replications=reps, seed=1, grid=101,
                                                         threads=threads), repeats)
    lo, hi = res.mean_availability_interval
    return {"events": res.events, "secs": secs, "cpu": cpu, "a": res.mean_availability, "lo": lo, "hi": hi}


def numpy_row(reps: int, repeats: int):
    secs, cpu, (a, events) = timed(lambda: numpy_simulate(5, reps, HORIZON, MTTF, MTTR, seed=1), repeats)
    m, se = float(a.mean()), float(a.std(ddof=1) / np.sqrt(len(a)))
    return {"events": events, "secs": secs, "cpu": cpu, "a": m, "lo": m - 1.96 * se, "hi": m + 1.96 * se}


def peer_rows(reps: int) -> list[tuple[str, dict | str]]:
    python = os.environ.get("BATHTUB_PEERS_PYTHON", sys.executable)
    out = []
    for peer in ("availsim4", "repyability"):
        try:
            run = subprocess.run([python, str(PEERS), peer, str(reps)], capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as e:
            out.append((peer, f"did not run: {e}"))
            continue
        lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
        if run.returncode != 0 or not lines:
            why = (run.stderr.strip().splitlines() or run.stdout.strip().splitlines() or ["no output"])[-1]
            out.append((peer, f"did not run: {why[:160]}"))
            continue
        _, events, secs, a, lo, hi = lines[-1].split()
        out.append((peer, {"events": int(events), "secs": float(secs), "a": float(a), "lo": float(lo),
                           "hi": float(hi)}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replications", type=int, default=20_000)
    ap.add_argument("--peer-replications", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline-binary", default=None, help="two_trains example built at the engine-core commit")
    ap.add_argument("--only-features", action="store_true", help="skip the peers; core path and features only")
    ap.add_argument("--limit-only", action="store_true", help="only the engine against the bare-loop limit")
    ap.add_argument("--peers-only", action="store_true",
                    help="only the engine against the NumPy model and the peers (harness figures)")
    args = ap.parse_args()
    if args.peers_only:
        against_peers(args.replications, args.peer_replications, max(args.repeats, 3))
        return
    if args.limit_only:
        against_limit(args.replications, max(args.repeats, 5))
        return
    if args.only_features:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"machine: {os.cpu_count()} cores, load average {load}")
        core_vs_before(args.baseline_binary, args.repeats)
        feature_rows(max(200, args.replications // 10), args.repeats)
        return
    reps = args.replications
    cores = os.cpu_count() or 1
    exact = exact_mean_availability()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {cores} cores, load average {load} (a load near or above the core count slows the wall "
          f"clock and the thread speed-up; events per CPU-second are less sensitive)")
    print(f"plant: 2 trains x 5 exponential blocks, MTTF {MTTF:g} h, MTTR {MTTR:g} h, T = {HORIZON:g} h; "
          f"exact interval availability {exact:.6f}")
    rows: list[tuple[str, dict | str]] = [
        ("bathtub engine, 1 thread", engine_row(reps, 1, args.repeats)),
        (f"bathtub engine, {cores} threads", engine_row(reps, cores, args.repeats)),
        ("numpy vectorised model", numpy_row(reps, args.repeats)),
        *peer_rows(args.peer_replications),
    ]
    base = rows[0][1]
    assert isinstance(base, dict)
    base_rate = base["events"] / base["secs"]
    print(f"\n{'model':32} {'reps':>7} {'events':>10} {'median s':>9} {'events/s':>12} {'ev/CPU-s':>10} "
          f"{'engine-1t x':>11}  {'mean availability [95% interval]':34} {'covers exact':>12}")
    for name, r in rows:
        if isinstance(r, str):
            print(f"{name:32} {r}")
            continue
        rate = r["events"] / r["secs"]
        n = args.peer_replications if name in ("availsim4", "repyability") else reps
        covers = "yes" if r["lo"] <= exact <= r["hi"] else "no"
        cpu_rate = f"{r['events'] / r['cpu']:>10.3e}" if r.get("cpu") else f"{'-':>10}"
        print(f"{name:32} {n:>7} {r['events']:>10} {r['secs']:>9.3f} {rate:>12.3e} {cpu_rate} "
              f"{base_rate / rate:>11.2f}  {r['a']:.6f} [{r['lo']:.6f}, {r['hi']:.6f}]   {covers:>12}")
    multi = rows[1][1]
    nump = rows[2][1]
    assert isinstance(multi, dict) and isinstance(nump, dict)
    print(f"\nspeed-up 1 -> {cores} threads: {base['secs'] / multi['secs']:.2f}x (target >= 1.8x on 2 cores)")
    print(f"engine 1 thread vs numpy model: {base_rate / (nump['events'] / nump['secs']):.1f}x (target >= 3x)")
    print(f"engine 1 thread: {base_rate / 1e6:.1f} M events/s wall, {base['events'] / base['cpu'] / 1e6:.1f} M per "
          f"CPU-second (target >= 20 M/s, structure evaluated)")
    for name, r in rows[3:]:
        if isinstance(r, dict):
            print(f"engine 1 thread vs {name}: {base_rate / (r['events'] / r['secs']):,.0f}x")

    print("\ncost per event as the diagram grows (engine, 1 thread, 2 trains in series, same block models)")
    print(f"{'blocks':>7} {'reps':>6} {'events':>10} {'median s':>9} {'ns/event':>9} {'events/s':>12}")
    for per_train in (5, 50, 500):
        n = max(20, reps // per_train)
        r = engine_row(n, 1, args.repeats, per_train)
        print(f"{2 * per_train:>7} {n:>6} {r['events']:>10} {r['secs']:>9.3f} {1e9 * r['secs'] / r['events']:>9.1f} "
              f"{r['events'] / r['secs']:>12.3e}")
    core_vs_before(args.baseline_binary, args.repeats)
    feature_rows(max(200, reps // 10), args.repeats)
    against_limit(reps, max(args.repeats, 5))


def peer_case(peer: str, reps: int):
    """A harness case running a peer in its own interpreter (BATHTUB_PEERS_PYTHON): `rate` is
    events per wall second of the run the peer timed itself (its import and set-up excluded);
    its availability interval is kept to check it covers the exact value."""
    python = os.environ.get("BATHTUB_PEERS_PYTHON", sys.executable)

    def case() -> dict[str, float]:
        run = subprocess.run([python, str(PEERS), peer, str(reps)], capture_output=True, text=True, timeout=900)
        lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
        if run.returncode != 0 or not lines:
            why = (run.stderr.strip().splitlines() or run.stdout.strip().splitlines() or ["no output"])[-1]
            raise SystemExit(f"{peer} did not run: {why[:200]} (set BATHTUB_PEERS_PYTHON to a venv with "
                             "`pip install availsim4 repyability`)")
        _, events, secs, _a, lo, hi = lines[-1].split()
        return {"seconds": float(secs), "events": float(events), "rate": float(events) / float(secs),
                "lo": float(lo), "hi": float(hi)}

    return case


def against_peers(reps: int, peer_reps: int, repeats: int) -> None:
    """The engine (1 thread and all threads) against the NumPy model and the peers, interleaved
    rounds, events per wall second; each answer must cover the exact availability."""
    d = two_trains(5)
    cores = os.cpu_count() or 1
    exact = exact_mean_availability()
    bench = Bench("engine_peers", "python bench/engine_availability.py --peers-only")

    answers: dict[str, tuple[float, float]] = {}  # case -> (mean availability, its standard error)

    def engine(threads: int):
        def run():
            r = simulate_availability(d, horizon=HORIZON, replications=reps, seed=1, grid=101, threads=threads)
            answers[f"engine, {threads} thread(s)"] = (r.mean_availability, r.mean_availability_std_error)
            return r
        return harness_timed(run, work=lambda r: r.events)

    def numpy_case():
        def run():
            a, events = numpy_simulate(5, reps, HORIZON, MTTF, MTTR, seed=1)
            answers["NumPy model"] = (float(a.mean()), float(a.std(ddof=1) / np.sqrt(len(a))))
            return events
        return harness_timed(run, work=float)

    cases = {"engine, 1 thread": engine(1), f"engine, {cores} threads": engine(cores), "NumPy model": numpy_case(),
             "availsim4": peer_case("availsim4", peer_reps), "RePyability": peer_case("repyability", peer_reps)}
    rounds = bench.interleave(cases, repeats, warmup=0)
    for name in ("availsim4", "RePyability"):
        r = rounds[name][-1]
        answers[name] = ((r["lo"] + r["hi"]) / 2, (r["hi"] - r["lo"]) / (2 * 1.959964))
    # Every answer within 3.29 standard errors of the exact availability (99.9%: with five
    # answers checked, a 95% test would fail a correct run one time in four).
    for name, (m, se) in answers.items():
        bench.check(f"{name}: |mean availability - exact| in standard errors", abs(m - exact) / se, 3.29)
    plant = f"10-block plant, {reps} replications ({peer_reps} for the peers)"
    bench.figure(f"engine, 1 thread, events/s, {plant}", rounds, "engine, 1 thread", "NumPy model", key="rate",
                 unit="events/s", higher_is_better=True, note="the same plant as a vectorised NumPy model")
    bench.figure("engine, 1 thread, events/s", rounds, "engine, 1 thread", "availsim4", key="rate",
                 unit="events/s", higher_is_better=True, note="CERN's availsim4 on the same plant")
    bench.figure("engine, 1 thread, events/s", rounds, "engine, 1 thread", "RePyability", key="rate",
                 unit="events/s", higher_is_better=True, note="RePyability's repairable RBD simulation")
    bench.figure(f"engine, {cores} threads, events/s", rounds, f"engine, {cores} threads", "engine, 1 thread",
                 key="rate", unit="events/s", higher_is_better=True, note="thread speed-up")
    bench.write()


def example(name: str) -> Path:
    """A Rust example of the engine crate, built (release, as the wheel) if missing or stale."""
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", name, "-p", "bathtub-engine"], cwd=ROOT,
                   check=True)
    return ROOT / "target" / "release" / "examples" / name


def binary_case(path: Path, reps: int):
    """A harness case running a Rust example: `rate` is the one it timed itself (the run,
    without process start-up), events per wall second of one thread; `cpu_rate` is events
    per CPU second of the child process (user + system, from its rusage: start-up included,
    a millisecond or so against runs of tenths of a second, the same for every binary)."""

    def case() -> dict[str, float]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([str(path), "5", str(reps), "1"], capture_output=True, text=True, check=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        events = float(out.split("events ")[1].split()[0])
        secs = float(out.split(" in ")[1].split("s:")[0])
        return {"seconds": secs, "rate": events / secs, "events": events, "cpu_seconds": cpu,
                "cpu_rate": events / cpu if cpu > 0 else float("nan")}

    return case


def against_limit(reps: int, repeats: int) -> None:
    """The engine's events/s as a share of the bare event loop's, interleaved rounds."""
    bare, rust = example("bare_loop"), example("two_trains")
    d = two_trains(5)
    bench = Bench("engine_availability", "python bench/engine_availability.py --limit-only")
    engine = harness_timed(lambda: simulate_availability(d, horizon=HORIZON, replications=reps, seed=1, grid=101,
                                                         threads=1), work=lambda r: r.events)
    rounds = bench.interleave({"engine via Python": engine, "engine Rust example": binary_case(rust, reps),
                               "bare event loop": binary_case(bare, reps)}, repeats)
    print(f"\nthe engine against the bare event loop of the same plant (same draws, no structure or statistics), "
          f"1 thread, {reps} replications, {repeats} interleaved rounds")
    # Events per CPU second: what the work costs, whatever else the machine runs (a shared
    # machine slows the wall clock of whichever case a neighbour happens to overlap).
    note = "events per CPU second (user + system) of the process doing the run"
    bench.figure("engine through Python, events per CPU-second, 10-block plant, 1 thread", rounds,
                 "engine via Python", "bare event loop", key="cpu_rate", unit="events/CPU-s", higher_is_better=True,
                 note=note)
    bench.figure("engine Rust example (two_trains), events per CPU-second, 1 thread", rounds, "engine Rust example",
                 "bare event loop", key="cpu_rate", unit="events/CPU-s", higher_is_better=True, note=note)
    bench.write()


def feature_plants() -> list[tuple[str, dict, dict]]:
    """(name, diagram, run options) for the plain plant and each feature on it."""
    plain = two_trains(5)

    def each_block(**extra: object) -> dict:
        d = two_trains(5)
        for n in d["nodes"]:
            if n["type"] == "component":
                n.update(extra)
        return d

    ccf = two_trains(5)
    ccf["ccf"] = [{"members": [f"a{i}", f"b{i}"], "beta": 0.1} for i in range(5)]
    costs = each_block(costs={"repair": {"min": 100.0, "max": 300.0}, "downtime": 50.0})
    costs |= {"unit": "hours", "costs": {"downtime_rate": 1000.0, "discount_rate": 5.0}}
    weib = {"distribution_id": "weibull", "mean": MTTF, "given": {"beta": 2.5}}
    age = each_block(model=weib, preventive={"policy": "age", "interval": 600.0, "duration": 5.0, "cost": 50.0})
    kijima = each_block(model=weib, repair_quality={"model": "kijima1", "q": 0.3})
    capacity = each_block(capacity=5.0) | {"production": {"demand": 4.0}}
    states = each_block(state={"age": 500.0})
    tests = each_block(inspection={"interval": 500.0})
    network = two_trains(5) | {"network": True}
    return [
        ("plain plant (core path)", plain, {}),
        ("proof tests every 500 h", tests, {}),
        ("common cause, 5 beta pairs", ccf, {}),
        ("age replacement (Weibull)", age, {}),
        ("costs, ranges, discounting", costs, {}),
        ("Kijima I repair (Weibull)", kijima, {}),
        ("capacity and production", capacity, {}),
        ("initial ages", states, {}),
        ("network mode (same plant)", network, {}),
    ]


def feature_rows(reps: int, repeats: int) -> None:
    print("\ncost per event of each feature (engine, 1 thread, the 10-block plant with the feature on every block)")
    print(f"{'feature':30} {'reps':>6} {'events':>10} {'CPU s':>8} {'ns/event':>9} {'ev/CPU-s':>10} {'vs plain':>9}")
    base = None
    for name, d, _ in feature_plants():
        _secs, cpu, res = timed(lambda d=d: simulate_availability(d, horizon=HORIZON, replications=reps, seed=1,
                                                                  grid=101, threads=1), repeats)
        per = cpu / res.events
        base = base or per
        print(f"{name:30} {reps:>6} {res.events:>10} {cpu:>8.3f} {1e9 * per:>9.1f} {res.events / cpu:>10.3e} "
              f"{per / base:>8.2f}x")
    # Phases run in mission (non-repairable) mode: the plain mission against three phases.
    mission = two_trains(5)
    phased = two_trains(5) | {"phases": [{"name": "one", "duration": 300.0, "not_needed": ["b0", "b1"]},
                                         {"name": "two", "duration": 400.0},
                                         {"name": "three", "duration": 300.0, "not_needed": ["a4"]}]}
    rows = []
    for name, d in (("mission, plain", mission), ("mission, 3 phases", phased)):
        _secs, cpu, res = timed(lambda d=d: simulate_mission(d, mission_time=1000.0, replications=reps * 10, seed=1,
                                                             grid=101, threads=1), repeats)
        rows.append((name, res.events, cpu))
    first = rows[0][2] / rows[0][1]
    for name, events, cpu in rows:
        print(f"{name:30} {reps * 10:>6} {events:>10} {cpu:>8.3f} {1e9 * cpu / events:>9.1f} {events / cpu:>10.3e} "
              f"{cpu / events / first:>8.2f}x")


def core_vs_before(baseline: str | None, repeats: int) -> None:
    """Core path now against the engine before the features (recorded, or run here)."""
    print("\ncore path (no feature in the diagram) against the engine core before the features")
    example = ROOT / "target" / "release" / "examples" / "two_trains"
    if baseline and example.exists():
        rates: dict[str, list[float]] = {"before": [], "now": []}
        for _ in range(max(repeats, 5)):
            for key, binary in (("before", baseline), ("now", str(example))):
                out = subprocess.run([binary, "5", "20000", "1"], capture_output=True, text=True, check=True).stdout
                rates[key].append(float(out.split(": ")[1].split(" M")[0]) * 1e6)
        before, now = statistics.median(rates["before"]), statistics.median(rates["now"])
        print(f"Rust two_trains 5 20000 1, interleaved, median of {len(rates['now'])}: before {before / 1e6:.2f} M "
              f"events/s, now {now / 1e6:.2f} M events/s: {now / before:.1%} (target >= 90%)")
    else:
        print("(give --baseline-binary, the two_trains example built at the engine-core commit, to run both here; "
              "build this one with `cargo build --release --example two_trains -p bathtub-engine`)")
    d = two_trains(5)
    secs, cpu, res = timed(lambda: simulate_availability(d, horizon=HORIZON, replications=20_000, seed=1, grid=101,
                                                         threads=1), repeats)
    print(f"recorded before: {CORE_BEFORE_FEATURES / 1e6:.2f} M events/s (Rust example); now through Python: "
          f"{res.events / cpu / 1e6:.2f} M events/CPU-s, {res.events / secs / 1e6:.2f} M events/s wall")


if __name__ == "__main__":
    main()
