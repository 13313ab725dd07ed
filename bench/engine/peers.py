"""Run the benchmark plant on a peer and print `RESULT events seconds A lo hi`.

    python bench/engine/peers.py availsim4|repyability REPLICATIONS

Run with an interpreter where the peer is installed (`pip install availsim4 repyability`,
ideally in a venv of their own: their pins differ from ours). Neither peer reports the
number of events it processed, so events are the plant's expected count per replication
(2 x blocks x renewals, from the renewal function of the exponential alternating process)
times the replications run: the same count the engine reports on average.
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plant import HORIZON, MTTF, MTTR

PER_TRAIN = 5


def expected_events() -> float:
    """Failures + repairs per replication: each block fails at rate lam while up, so
    E[failures] = lam * integral of A(t) over [0, T], and each finished repair is one more."""
    lam, mu = 1.0 / MTTF, 1.0 / MTTR
    s = lam + mu
    up_time = mu / s * HORIZON + lam / s**2 * (1 - math.exp(-s * HORIZON))
    failures = lam * up_time
    down_time = HORIZON - up_time
    repairs = mu * down_time
    return 2 * PER_TRAIN * (failures + repairs)


def report(events: float, secs: float, samples: list[float]) -> None:
    n = len(samples)
    m = sum(samples) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in samples) / (n - 1)) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(n)
    print(f"RESULT {round(events)} {secs:.6f} {m:.8f} {m - half:.8f} {m + half:.8f}")


def repyability(reps: int) -> None:
    import surpyval as surv
    from repyability import RepairableRBD

    comps, edges = {}, []
    for t in "ab":
        prev = "in"
        for i in range(PER_TRAIN):
            n = f"{t}{i}"
            comps[n] = {
                "reliability": surv.Exponential.from_params([1 / MTTF]),
                "repairability": surv.Exponential.from_params([1 / MTTR]),
            }
            edges.append((prev, n))
            prev = n
        edges.append((prev, "out"))
    rbd = RepairableRBD(edges, comps, input_node="in", output_node="out")
    t0 = time.perf_counter()
    res = rbd.availability(HORIZON, mc_samples=reps, seed=1)
    secs = time.perf_counter() - t0
    # Its `mean_availability` is the exact long-run value; the simulation's own estimate is
    # the per-replication up time.
    report(expected_events() * reps, secs, [float(u) / HORIZON for u in res.uptimes])


def availsim4(reps: int) -> None:
    import copy

    import openpyxl
    from availsim4core.src.analysis import Analysis
    from availsim4core.src.context.context import Context
    from availsim4core.src.context.phase.phase_manager import PhaseManager
    from availsim4core.src.context.system.component_tree.component_factory import ComponentFactory
    from availsim4core.src.discrete_event_simulation.discrete_event_simulation import DiscreteEventSimulation
    from availsim4core.src.reader.xlsx.simulation_reader import SimulationReader
    from availsim4core.src.reader.xlsx.system_template_reader import SystemTemplateReader

    tmp = Path(tempfile.mkdtemp())
    system = openpyxl.Workbook()
    sheets = {
        "ARCHITECTURE": [("COMPONENT_NAME", "COMPONENT_TYPE", "COMPONENT_NUMBER", "CHILDREN_NAME", "CHILDREN_LOGIC",
                          "IN_MRU", "TRIGGER_MRU"),
                         ("ROOT", "compound", 1, "TRAINA,TRAINB", "1OO2", "none", "none")],
        "FAILURE_MODE_ASSIGNMENTS": [("COMPONENT_NAME", "FAILURE_MODE_NAME")],
        "FAILURE_MODES": [("FAILURE_MODE_NAME", "FAILURE_LAW", "FAILURE_PARAMETERS", "REPAIR_LAW",
                           "REPAIR_PARAMETERS", "TYPE_OF_FAILURE", "HELD_BEFORE_REPAIR", "INSPECTION_NAME",
                           "PHASE_NAME", "NEXT_PHASE_IF_FAILURE", "PHASE_CHANGE_TRIGGER", "HELD_AFTER_REPAIR"),
                          ("wear", "EXP", MTTF, "EXP", MTTR, "detectable", "NEVER_HELD", "none", "none", "none",
                           "after_repair", "never_held")],
        "PHASES": [("PHASE_NAME", "PHASE_LAW", "PHASE_PARAMETERS", "NEXT_DEFAULT_PHASE", "FIRST_PHASE",
                    "NEXT_DEFAULT_PHASE_IF_FAILURE")],
        "MRU": [("MRU_NAME", "MRU_LAW", "MRU_PARAMETERS", "MRU_SCHEDULE", "LOWEST_COMMON_ANCESTOR_SCOPE",
                 "TRIGGERING_STATUS")],
        "INSPECTIONS": [("INSPECTION_NAME", "INSPECTION_PERIOD", "INSPECTION_DURATION")],
        "ROOT_CAUSE_ANALYSIS": [("TRIGGERING_COMPONENT_NAME", "TRIGGERED_BY_COMPONENT_STATUS", "TRIGGERED_IN_PHASE")],
        "PHASE_JUMP": [("TRIGGERING_COMPONENT_NAME", "TRIGGERED_BY_COMPONENT_STATUS", "FROM_PHASE", "TO_PHASE")],
    }
    for t in "AB":
        kids = ",".join(f"{t}{i}" for i in range(PER_TRAIN))
        sheets["ARCHITECTURE"].append((f"TRAIN{t}", "compound", 1, kids, "AND", "none", "none"))
        for i in range(PER_TRAIN):
            sheets["ARCHITECTURE"].append((f"{t}{i}", "basic", 1, "none", "none", "none", "none"))
            sheets["FAILURE_MODE_ASSIGNMENTS"].append((f"{t}{i}", "wear"))
    system.remove(system.active)
    for name, rows in sheets.items():
        ws = system.create_sheet(name)
        for r in rows:
            ws.append(r)
    system.save(tmp / "system.xlsx")
    sim = openpyxl.Workbook()
    ws = sim.active
    ws.title = "SIMULATION"
    ws.append(("SIMULATION_TYPE", "MIN_NUMBER_OF_SIMULATION", "MAX_NUMBER_OF_SIMULATION", "CONVERGENCE_MARGIN",
               "MAX_EXECUTION_TIME", "SEED", "DIAGNOSTICS", "SIMULATION_DURATION"))
    ws.append(("MONTE_CARLO", reps, reps, 2, 3600, 1, '["SUMMARY"]', HORIZON))
    sim.save(tmp / "simulation.xlsx")

    simulation = SimulationReader().read(tmp / "simulation.xlsx", 1)
    template = SystemTemplateReader("").read(tmp / "system.xlsx")
    analysis = Analysis(0, template, simulation)
    root = ComponentFactory(analysis.system_template).build()
    context = Context(root, PhaseManager(template.phase_set, template.phase_jump_trigger_set), None)
    # One replication at a time, so the per-replication availability of ROOT gives an interval.
    samples = []
    t0 = time.perf_counter()
    for r in range(reps):
        local = copy.deepcopy(context)
        des = DiscreteEventSimulation(1 + r, HORIZON, local, None, -1, 0)
        des.run()
        samples.append(_root_availability(local, HORIZON))
    secs = time.perf_counter() - t0
    report(expected_events() * reps, secs, samples)


def _root_availability(context, horizon: float) -> float:
    """Fraction of [0, T] the ROOT component is up (RUNNING or DEGRADED), from its timeline."""
    records = [r for r in context.timeline_record.record_list]
    up, last_t, last_up = 0.0, 0.0, True
    for rec in records:
        status = getattr(rec, "status", None) or getattr(rec, "component_status", None)
        comp = getattr(rec, "component", None)
        if comp is None or getattr(comp, "name", "") != "ROOT":
            continue
        t = float(rec.timestamp)
        if last_up:
            up += t - last_t
        last_t, last_up = t, str(status).upper().rsplit(".", 1)[-1] in ("RUNNING", "DEGRADED")
    if last_up:
        up += horizon - last_t
    return up / horizon


if __name__ == "__main__":
    {"availsim4": availsim4, "repyability": repyability}[sys.argv[1]](int(sys.argv[2]))
