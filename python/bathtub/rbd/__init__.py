"""Reliability block diagrams: the stored diagram model, the compact stages form, the
atomic edit operations, resolution to the engine's input, exact closed forms where they
exist, the run-time quote, failure biasing for highly available Markovian diagrams, and two
runs compared figure by figure. Pure functions on plain dicts; no I/O.
"""

from bathtub.rbd.analysis import RunOptions, analyze, check_options, check_runnable, closed_form, plan, simulate
from bathtub.rbd.compare import compare_runs
from bathtub.rbd.diagram import SETTINGS, check_diagram, content_hash, placeholders, revision, view
from bathtub.rbd.edits import apply_edits
from bathtub.rbd.exact import Exactness, reliability, structure
from bathtub.rbd.quote import Quote, quote
from bathtub.rbd.rare import RareResult, simulate_failure_biasing
from bathtub.rbd.resolve import check_no_cycle, engine_form, referenced_ids
from bathtub.rbd.stages import stages_to_diagram
from bathtub.rbd.states import with_initial_states

__all__ = [
    "SETTINGS",
    "Exactness",
    "Quote",
    "RareResult",
    "RunOptions",
    "analyze",
    "apply_edits",
    "check_diagram",
    "check_no_cycle",
    "check_options",
    "check_runnable",
    "closed_form",
    "compare_runs",
    "content_hash",
    "engine_form",
    "placeholders",
    "plan",
    "quote",
    "referenced_ids",
    "reliability",
    "revision",
    "simulate",
    "simulate_failure_biasing",
    "stages_to_diagram",
    "structure",
    "view",
    "with_initial_states",
]
