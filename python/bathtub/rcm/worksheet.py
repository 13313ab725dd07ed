"""RCM worksheets as plain data: validation, the merge of an update into a stored worksheet, the
outline of a large study and its scheduled tasks.

A worksheet is a list of functions {id, text, standard?, failures}; a failure {id, text, modes};
a mode {id, text, effects?, consequence?, notes?, decision?}; a decision {outcome, rtf_basis?,
task?, interval?, interval_unit?, notes?, evidence?: {type, id}}. The store may add `seen` to a
decision (the evidence item's version when the decision was written); `public` drops it.

Decision rules follow SAE JA1011 practice: run-to-failure names its basis (random: the hazard
does not rise, so no age-based task helps; uneconomic: a task costs more than the failures);
failure finding is only for hidden failures; run-to-failure is not acceptable where a failure has
safety or environmental consequences; a task interval needs its unit, and only tasks have one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from bathtub.errors import InputError
from bathtub.validate import check_number

TEXT_MAX = 2000
UNIT_MAX = 40
ID_MAX = 64
OUTLINE_MODES = 300  # a study with more failure modes than this reads as an outline

OUTCOMES = ("on_condition", "fixed_interval", "rtf", "failure_finding", "redesign", "accept")
RTF_BASES = ("random", "uneconomic")
CONSEQUENCES = ("safety", "environmental", "operational", "non_operational", "hidden")
EVIDENCE_TYPES = ("model", "strategy_analysis", "degradation_model")
TASKS = ("on_condition", "fixed_interval", "failure_finding")  # outcomes with an interval: scheduled tasks

# level: (its fields besides id, its children's key, the child level)
LEVELS: dict[str, tuple[tuple[str, ...], str | None, str | None]] = {
    "function": (("text", "standard"), "failures", "failure"),
    "failure": (("text",), "modes", "mode"),
    "mode": (("text", "effects", "consequence", "notes", "decision"), None, None),
}
DECISION_FIELDS = ("outcome", "rtf_basis", "task", "interval", "interval_unit", "notes", "evidence", "check")


def decision_rules() -> dict[str, Any]:
    """What `clean_decision` checks between a decision's own fields, as JSON Schema: one branch
    per outcome (rtf with its basis; an interval with its unit, only for a task; evidence of the
    type the decision can cite, with the interval it is checked against)."""
    null: dict[str, Any] = {"type": "null"}

    def evidence(kind: str | None) -> dict[str, Any]:
        return null if kind is None else {"anyOf": [null, {"type": "object", "properties": {"type": {"const": kind}}}]}

    branches = []
    for basis in RTF_BASES:
        branches.append({"required": ["outcome", "rtf_basis"], "properties": {
            "outcome": {"const": "rtf"}, "rtf_basis": {"const": basis}, "interval": null, "interval_unit": null,
            "evidence": evidence(evidence_type_for({"outcome": "rtf", "rtf_basis": basis}))}})
    for outcome in OUTCOMES:
        if outcome == "rtf":
            continue
        props: dict[str, Any] = {"outcome": {"const": outcome}, "rtf_basis": null,
                                 "evidence": evidence(evidence_type_for({"outcome": outcome}))}
        if outcome not in TASKS:
            branches.append({"required": ["outcome"], "properties": {**props, "interval": null,
                                                                     "interval_unit": null}})
            continue
        with_interval = {"required": ["outcome", "interval", "interval_unit"], "properties": {
            **props, "interval": {"type": "number"}, "interval_unit": {"type": "string"}}}
        without = {"required": ["outcome"], "properties": {**props, "interval": null, "interval_unit": null,
                                                             "evidence": null}}
        branches += [with_interval, without]
    return {"anyOf": branches}


def evidence_type_for(decision: Mapping[str, Any]) -> str | None:
    """The evidence type that can back a decision, or None (redesign, accept, rtf without basis)."""
    outcome = decision.get("outcome")
    if outcome == "rtf":
        return {"random": "model", "uneconomic": "strategy_analysis"}.get(decision.get("rtf_basis") or "")
    return {"on_condition": "degradation_model", "fixed_interval": "strategy_analysis",
            "failure_finding": "strategy_analysis"}.get(outcome or "")


def _text(value: Any, path: str, limit: int = TEXT_MAX, *, empty: bool = True) -> None:
    if not isinstance(value, str):
        raise InputError(path, "must be a string")
    if len(value) > limit:
        raise InputError(path, f"at most {limit} characters")
    if not empty and not value:
        raise InputError(path, "must not be empty")


def _node_id(value: Any, path: str) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= ID_MAX:
        raise InputError(path, f"must be a string of 1 to {ID_MAX} characters")
    return value


def check_decision(decision: Any, consequence: str | None, path: str) -> dict[str, Any]:
    """A decision as stored (the read-only `check` dropped), or InputError naming the field."""
    if not isinstance(decision, Mapping):
        raise InputError(path, "must be an object")
    for key in decision:
        if key not in DECISION_FIELDS:
            raise InputError(f"{path}.{key}", "unknown field")
    out = {k: v for k, v in decision.items() if k != "check" and v is not None}
    outcome = out.get("outcome")
    if outcome is None:
        raise InputError(f"{path}.outcome", "required field is missing")
    if outcome not in OUTCOMES:
        raise InputError(f"{path}.outcome", f"must be one of {', '.join(OUTCOMES)}")
    basis = out.get("rtf_basis")
    if outcome == "rtf" and basis is None:
        raise InputError(f"{path}.rtf_basis", "required when outcome is rtf (random or uneconomic)")
    if basis is not None:
        if outcome != "rtf":
            raise InputError(f"{path}.rtf_basis", "only with outcome rtf")
        if basis not in RTF_BASES:
            raise InputError(f"{path}.rtf_basis", f"must be one of {', '.join(RTF_BASES)}")
    for key in ("task", "notes"):
        if key in out:
            _text(out[key], f"{path}.{key}")
    interval, unit = out.get("interval"), out.get("interval_unit")
    if interval is not None:
        check_number(interval, f"{path}.interval", 0.0, lo_open=True)
        if outcome not in TASKS:
            raise InputError(f"{path}.interval", f"a {outcome} decision has no task to schedule; intervals go "
                                                 "with on_condition, fixed_interval or failure_finding")
        if unit is None:
            raise InputError(f"{path}.interval_unit", "required with an interval (hours, days, cycles, ...)")
    if unit is not None:
        _text(unit, f"{path}.interval_unit", UNIT_MAX, empty=False)
        if interval is None:
            raise InputError(f"{path}.interval_unit", "only with an interval")
    if outcome == "failure_finding" and consequence != "hidden":
        raise InputError(f"{path}.outcome", "failure finding applies only to hidden failures: set the mode's "
                                            "consequence to hidden")
    if outcome == "rtf" and consequence in ("safety", "environmental"):
        raise InputError(f"{path}.outcome", f"run to failure is not acceptable with {consequence} consequences "
                                            "(JA1011): choose a task that reduces the risk, or redesign")
    evidence = out.get("evidence")
    if evidence is not None:
        if not isinstance(evidence, Mapping):
            raise InputError(f"{path}.evidence", "must be an object")
        for key in evidence:
            if key not in ("type", "id"):
                raise InputError(f"{path}.evidence.{key}", "unknown field")
        if evidence.get("type") not in EVIDENCE_TYPES:
            raise InputError(f"{path}.evidence.type", f"must be one of {', '.join(EVIDENCE_TYPES)}")
        _node_id(evidence.get("id"), f"{path}.evidence.id")
        fits = evidence_type_for(out)
        if fits is None:
            raise InputError(f"{path}.evidence", f"a {outcome} decision cites no evidence")
        if evidence["type"] != fits:
            raise InputError(f"{path}.evidence.type", f"a {_label(out)} decision cites {fits} evidence")
        if outcome in TASKS and interval is None:
            raise InputError(f"{path}.interval", "required to check the evidence against")
        out["evidence"] = {"type": evidence["type"], "id": evidence["id"]}
    return out


def _label(decision: Mapping[str, Any]) -> str:
    return f"rtf ({decision['rtf_basis']})" if decision.get("outcome") == "rtf" else str(decision.get("outcome"))


class _Merge:
    def __init__(self, new_id: Callable[[str], str], taken: set[str]) -> None:
        self.new_id = new_id
        self.taken = taken
        self.seen: set[str] = set()
        self.written: set[str] = set()

    def fresh(self, level: str) -> str:
        for _ in range(100):
            node_id = self.new_id(level)
            if node_id not in self.taken:
                self.taken.add(node_id)
                return node_id
        raise RuntimeError("node id generator keeps repeating itself")

    def nodes(self, stored: list[dict[str, Any]], given: Any, level: str, path: str) -> None:
        if not isinstance(given, Sequence) or isinstance(given, (str, bytes)):
            raise InputError(path, "must be an array")
        by_id = {n["id"]: n for n in stored}
        for i, g in enumerate(given):
            self.node(stored, by_id, g, level, f"{path}.{i}")

    def node(self, stored: list[dict[str, Any]], by_id: dict[str, dict[str, Any]], given: Any, level: str,
             path: str) -> None:
        fields, children, child_level = LEVELS[level]
        if not isinstance(given, Mapping):
            raise InputError(path, "must be an object")
        for key in given:
            if key != "id" and key not in fields and key != children:
                raise InputError(f"{path}.{key}", "unknown field")
        if given.get("id") is not None:
            node_id = _node_id(given["id"], f"{path}.id")
            if node_id in self.seen:
                raise InputError(f"{path}.id", "this node appears twice in the request")
            node = by_id.get(node_id)
            if node is None:
                raise InputError(f"{path}.id", f"no {level} with this id here (ids come from get rcm_study; "
                                               "omit the id to add a new one)")
        else:
            if given.get("text") is None:
                raise InputError(f"{path}.text", f"required for a new {level}")
            node = {"id": self.fresh(level)}
            if children:
                node[children] = []
            stored.append(node)
            by_id[node["id"]] = node
        self.seen.add(node["id"])
        for key in fields:
            if key not in given or key == "decision":
                continue
            value = given[key]
            if value is None:
                if key == "text":
                    raise InputError(f"{path}.text", "cannot be cleared")
                node.pop(key, None)
            elif key == "consequence":
                if value not in CONSEQUENCES:
                    raise InputError(f"{path}.consequence", f"must be one of {', '.join(CONSEQUENCES)}")
                node[key] = value
            else:
                _text(value, f"{path}.{key}", empty=key != "text")
                node[key] = value
        if level == "mode":
            if "decision" in given:
                if given["decision"] is None:
                    node.pop("decision", None)
                else:
                    node["decision"] = check_decision(given["decision"], node.get("consequence"),
                                                      f"{path}.decision")
                    self.written.add(node["id"])
            elif node.get("decision") is not None:
                # The consequence may have changed under a kept decision: the change is refused.
                try:
                    check_decision(node["decision"], node.get("consequence"), f"{path}.decision")
                except InputError as e:
                    raise InputError(f"{path}.consequence", f"the mode's decision forbids it: {e.rule}") from None
        if children and given.get(children) is not None:
            self.nodes(node[children], given[children], child_level or "", f"{path}.{children}")


def walk(functions: Sequence[Mapping[str, Any]]) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any],
                                                                   Mapping[str, Any]]]:
    """Every (function, failure, mode) in worksheet order."""
    for f in functions:
        for ff in f.get("failures", ()):
            for m in ff.get("modes", ()):
                yield f, ff, m


def _ids(functions: Sequence[Mapping[str, Any]]) -> dict[str, tuple[list[Any], Mapping[str, Any]]]:
    """Each node id → (the list holding it, the node)."""
    out: dict[str, tuple[list[Any], Mapping[str, Any]]] = {}
    for f in functions:
        out[f["id"]] = (functions, f)  # type: ignore[assignment]
        for ff in f["failures"]:
            out[ff["id"]] = (f["failures"], ff)
            for m in ff["modes"]:
                out[m["id"]] = (ff["modes"], m)
    return out


def merge(stored: Sequence[Mapping[str, Any]], functions: Any, remove: Sequence[str] | None,
          new_id: Callable[[str], str]) -> tuple[list[dict[str, Any]], set[str]]:
    """Merge an update into a stored worksheet: the new worksheet and the ids of the modes whose
    decision was written (their evidence is stamped anew). Nodes with an id update that node
    (fields given replace, null clears an optional field, children merge the same way); nodes
    without one are added; `remove` deletes nodes with everything under them first. The stored
    worksheet is not modified."""
    out: list[dict[str, Any]] = copy.deepcopy(list(stored))  # type: ignore[arg-type]
    index = _ids(out)
    for i, node_id in enumerate(remove or ()):
        _node_id(node_id, f"remove.{i}")
        if node_id not in index:
            raise InputError(f"remove.{i}", "no node with this id in the study")
        holder, node = index[node_id]
        if not any(n is node for n in holder):
            raise InputError(f"remove.{i}", "listed twice")
        holder[:] = [n for n in holder if n is not node]
    m = _Merge(new_id, set(index))
    m.nodes(out, functions if functions is not None else [], "function", "functions")
    return out, m.written


def build(functions: Any, new_id: Callable[[str], str]) -> tuple[list[dict[str, Any]], set[str]]:
    """A new worksheet from the form `rcm create` takes (every node new; ids generated)."""
    for i, f in enumerate(functions if isinstance(functions, Sequence) else ()):
        if isinstance(f, Mapping) and f.get("id") is not None:
            raise InputError(f"functions.{i}.id", "a new study has no nodes yet: omit ids")
    return merge([], functions, None, new_id)


def mode_count(functions: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for _ in walk(functions))


def find_function(functions: Sequence[Mapping[str, Any]], function_id: str) -> Mapping[str, Any] | None:
    return next((f for f in functions if f["id"] == function_id), None)


def public(functions: Sequence[Mapping[str, Any]], checks: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The worksheet in the form `rcm create` takes, with ids and each decision's `check`."""
    out = []
    for f in functions:
        fo = {k: v for k, v in f.items() if k != "failures"}
        fo["failures"] = []
        for ff in f["failures"]:
            modes = []
            for m in ff["modes"]:
                mo = {k: v for k, v in m.items() if k != "decision"}
                if m.get("decision") is not None:
                    d = {k: v for k, v in m["decision"].items() if k != "seen"}
                    if m["id"] in checks:
                        d["check"] = dict(checks[m["id"]])
                    mo["decision"] = d
                modes.append(mo)
            fo["failures"].append({**{k: v for k, v in ff.items() if k != "modes"}, "modes": modes})
        out.append(fo)
    return out


def outline(functions: Sequence[Mapping[str, Any]], checks: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A large study at a glance: functions and failures with their texts and counts, and each
    mode's id, text and outcome (no decision detail); per function, how many decisions are in
    each evidence state, so the planner knows which function to open with `function_id`."""
    out = []
    for f in functions:
        states: dict[str, int] = {}
        failures = []
        n_modes = decided = 0
        for ff in f["failures"]:
            modes = [{"id": m["id"], "text": m["text"],
                      "outcome": (m.get("decision") or {}).get("outcome")} for m in ff["modes"]]
            for m in ff["modes"]:
                if m.get("decision") is not None:
                    decided += 1
                if m["id"] in checks:
                    s = checks[m["id"]]["state"]
                    states[s] = states.get(s, 0) + 1
            n_modes += len(modes)
            failures.append({"id": ff["id"], "text": ff["text"], "mode_count": len(modes), "modes": modes})
        out.append({"id": f["id"], "text": f["text"], **({"standard": f["standard"]} if "standard" in f else {}),
                    "failure_count": len(failures), "mode_count": n_modes, "decided": decided,
                    "checks": states, "failures": failures})
    return out


def scheduled_tasks(functions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Decisions with an interval (on_condition, fixed_interval, failure_finding): the tasks a
    maintenance plan schedules, with where each comes from."""
    out = []
    for f, ff, m in walk(functions):
        d = m.get("decision")
        if d is None or d.get("interval") is None:
            continue
        out.append({"function_id": f["id"], "failure_id": ff["id"], "mode_id": m["id"], "mode": m["text"],
                    "outcome": d["outcome"], "task": d.get("task"), "interval": d["interval"],
                    "interval_unit": d["interval_unit"]})
    return out
