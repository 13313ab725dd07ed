"""Diagram files into this service's diagram form ({name, unit, repairable, nodes, edges}).

Three formats, told apart by content:

- **bathtub JSON**: one diagram as `rbd create` takes it, a list of them, or {"diagrams": [...]}.
- **Block list** (a workbook or CSV sheet, one row per block): `id` (required), `type` (component
  by default; series, parallel, knode, standby), `label`, `after` (the ids feeding this block,
  comma-separated; blank: fed by the input; aliases parent, inputs, from, predecessors), `n`, `k`,
  `spares`, `cold`; the life as `life` (a distribution id, default exponential) with `mtbf` (the
  mean) and an optional shape (`beta`/`shape` for weibull, `sigma` for lognormal/normal), or the
  parameters by name (failure_rate, alpha, beta, mu, sigma); the repair the same way with `repair`,
  `mttr`, `repair_beta`, `repair_sigma`. Blocks no one lists in `after` feed the output.
- **AvailSim4 system workbook** (CERN's availability simulator): sheets ARCHITECTURE (COMPONENT_NAME,
  COMPONENT_TYPE basic/compound, COMPONENT_NUMBER, CHILDREN_NAME, CHILDREN_LOGIC), FAILURE_MODE_ASSIGNMENTS
  and FAILURE_MODES (FAILURE_LAW/REPAIR_LAW with their parameters). A compound `AND` becomes a chain,
  `XooY`, `XRC` (X required) and `XTF` (X tolerated failures) a k-of-n gate (`knode`) fed by its
  branches; a basic component with COMPONENT_NUMBER n becomes n blocks `name_1..name_n` (a compound,
  n copies `name_i.child`). Laws: exp [mean, shift], normal [mean, sd], weibull [scale, shape,
  location]. What has no counterpart (deterministic `fix` or on-demand laws, held states, phases,
  MRUs, custom logic, blind failures without an inspection) is named in `unmapped` with what was
  done instead; a structure that cannot be drawn faithfully (a shared child) is refused.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bathtub.errors import InputError
from bathtub.imports.tables import Sheet

AVAILSIM4_SHEETS = ("ARCHITECTURE", "FAILURE_MODE_ASSIGNMENTS", "FAILURE_MODES")
NONE_WORDS = {"", "none", "null", "nan"}
_AFTER = ("after", "parent", "parents", "inputs", "from", "predecessors", "fed_by")


# --- bathtub JSON ----------------------------------------------------------------------------------


def from_json(path: str | Path) -> list[dict[str, Any]]:
    """Diagrams from this service's own JSON (one, a list, or {"diagrams": [...]})."""
    try:
        doc = json.loads(Path(path).read_text("utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError("upload_id", f"not valid JSON ({e})") from None
    items = doc.get("diagrams") if isinstance(doc, Mapping) and "diagrams" in doc else doc
    items = items if isinstance(items, list) else [items]
    out = []
    for i, d in enumerate(items):
        if not isinstance(d, Mapping) or "nodes" not in d:
            raise InputError(f"diagrams[{i}]", "a diagram needs nodes (and edges), as rbd create takes it")
        out.append({k: v for k, v in d.items() if k not in ("id", "url", "revision", "created_at", "updated_at")})
    return out


# --- block list -------------------------------------------------------------------------------------


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(name).strip().lower()).strip("_")


def _model(row: Mapping[str, Any], prefix: str, field: str) -> dict[str, Any] | None:
    """A BlockModel from a row: `<prefix>` (distribution id), `<mean>` and a shape, or named params."""
    mean_key = "mtbf" if prefix == "" else "mttr"
    dist_key = "life" if prefix == "" else "repair"
    pre = "" if prefix == "" else "repair_"
    dist = row.get(dist_key)
    dist = str(dist).strip().lower() if dist not in (None, "") else None
    mean = row.get(mean_key) if row.get(mean_key) not in (None, "") else row.get(f"{pre}mean")
    named = {p: row[f"{pre}{p}"] for p in ("failure_rate", "alpha", "beta", "mu", "sigma", "gamma")
             if row.get(f"{pre}{p}") not in (None, "")}
    shape = row.get(f"{pre}shape")
    if dist is None and mean in (None, "") and not named:
        return None
    dist = dist or "exponential"
    if mean not in (None, ""):
        given = {}
        if shape not in (None, "") or named:
            key = {"weibull": "beta", "lognormal": "sigma", "normal": "sigma", "gamma": "alpha",
                   "loglogistic": "beta"}.get(dist)
            value = shape if shape not in (None, "") else named.get(key or "")
            if key and value not in (None, ""):
                given[key] = value
        return {"distribution_id": dist, "mean": mean, **({"given": given} if given else {})}
    if not named:
        raise InputError(field, f"give {mean_key} or the parameters of {dist}")
    return {"distribution_id": dist, "params": [{"name": k, "value": v} for k, v in named.items()]}


def from_block_list(sheet: Sheet, name: str, unit: str | None) -> dict[str, Any]:
    """One diagram from a block-list sheet (see the module docstring for the columns)."""
    cols = {_norm(h): h for h in sheet.header}
    if "id" not in cols:
        raise InputError("upload_id", f"sheet {sheet.name!r}: a block list needs an `id` column")
    after_col = next((cols[a] for a in _AFTER if a in cols), None)
    nodes: list[dict[str, Any]] = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}]
    edges: list[dict[str, str]] = []
    fed: set[str] = set()
    ids = []
    repairable = False
    for i, raw in enumerate(sheet.rows):
        row = {_norm(h): v for h, v in zip(sheet.header, raw, strict=True)}
        field = f"{sheet.name}.rows[{i}]"
        nid = row.get("id")
        if nid in (None, ""):
            raise InputError(f"{field}.id", "required")
        nid = str(nid).strip()
        if nid in ("in", "out"):
            raise InputError(f"{field}.id", "in and out are the diagram's own input and output")
        ids.append(nid)
        node: dict[str, Any] = {"id": nid, "type": str(row.get("type") or "component").strip().lower()}
        for key in ("label",):
            if row.get(key) not in (None, ""):
                node[key] = str(row[key])
        for key in ("n", "k", "spares"):
            if row.get(key) not in (None, ""):
                node[key] = row[key]
        if row.get("cold") not in (None, ""):
            node["cold"] = str(row["cold"]).strip().lower() in ("1", "true", "yes", "y")
        life = _model(row, "", f"{field}.mtbf")
        if life is not None:
            node["model"] = life
        repair = _model(row, "repair", f"{field}.mttr")
        if repair is not None:
            node["repair"] = repair
            repairable = True
        nodes.append(node)
        sources = [] if after_col is None else [s.strip() for s in str(raw[sheet.header.index(after_col)] or "")
                                                .split(",") if s.strip()]
        for s in sources or ["in"]:
            edges.append({"source": s, "target": nid})
            fed.add(s)
    known = set(ids) | {"in"}
    for e in edges:
        if e["source"] not in known:
            raise InputError(f"{sheet.name}.{after_col}", f"block {e['target']!r} is fed by {e['source']!r}, which is "
                                                          "no block of the list")
    edges += [{"source": nid, "target": "out"} for nid in ids if nid not in fed]
    return {"name": name, "unit": unit, "repairable": repairable, "nodes": nodes, "edges": edges}


# --- AvailSim4 ---------------------------------------------------------------------------------------


def is_availsim4(sheets: Sequence[Sheet]) -> bool:
    names = {s.name.upper() for s in sheets}
    return all(n in names for n in AVAILSIM4_SHEETS)


def _params(value: Any, field: str) -> list[float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    text = str(value or "").strip().strip("[]")
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(field, f"parameters {value!r} are not numbers") from None


def _law(law: Any, params: Any, field: str, unmapped: list[dict[str, str]]) -> dict[str, Any]:
    name = str(law or "").strip().upper()
    p = _params(params, f"{field}_PARAMETERS")
    if not p:
        raise InputError(f"{field}_PARAMETERS", "required")
    if name in ("EXP", "EXPONENTIAL", "EXPONENTIALLAW", "EXPONENTIAL_LAW"):
        if p[0] <= 0:
            raise InputError(f"{field}_PARAMETERS", "the exponential mean must be > 0")
        model: dict[str, Any] = {"distribution_id": "exponential", "params": [{"name": "failure_rate",
                                                                              "value": 1.0 / p[0]}]}
        if len(p) > 1 and p[1]:
            model["params"].append({"name": "gamma", "value": p[1]})
        return model
    if name in ("NORMAL", "NORMALLAW", "NORMAL_LAW") and len(p) >= 2:
        return {"distribution_id": "normal", "params": [{"name": "mu", "value": p[0]}, {"name": "sigma",
                                                                                         "value": p[1]}]}
    if name in ("WEIBULL", "WEIBULLLAW", "WEIBULL_LAW") and len(p) >= 2:
        model = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": p[0]},
                                                          {"name": "beta", "value": p[1]}]}
        if len(p) > 2 and p[2]:
            model["params"].append({"name": "gamma", "value": p[2]})
        return model
    mean = p[0]
    if mean <= 0:
        raise InputError(f"{field}_LAW", f"{law} {p} has no counterpart here and no positive mean to stand in")
    unmapped.append({"item": field, "what": f"{law} law {p}",
                     "done": f"exponential with mean {mean:g}, marked placeholder: replace it with a real model"})
    return {"distribution_id": "exponential", "mean": mean, "placeholder": True}


def _rows(sheet: Sheet) -> list[dict[str, Any]]:
    return [{h.strip().upper(): v for h, v in zip(sheet.header, r, strict=True)} for r in sheet.rows]


def _word(value: Any) -> str:
    return "" if value is None else str(value).strip()


def from_availsim4(sheets: Sequence[Sheet], name: str, unit: str | None) -> tuple[dict[str, Any], list[dict[str,
                                                                                                              str]]]:
    """A diagram from an AvailSim4 system workbook, and what could not be mapped."""
    by = {s.name.upper(): s for s in sheets}
    unmapped: list[dict[str, str]] = []
    arch = {}
    for i, r in enumerate(_rows(by["ARCHITECTURE"])):
        cname = _word(r.get("COMPONENT_NAME"))
        if not cname:
            raise InputError(f"ARCHITECTURE.rows[{i}].COMPONENT_NAME", "required")
        arch[cname] = r
    modes = {_word(r.get("FAILURE_MODE_NAME")): r for r in _rows(by["FAILURE_MODES"])}
    assigned: dict[str, list[str]] = {}
    for r in _rows(by["FAILURE_MODE_ASSIGNMENTS"]):
        comp, mode = _word(r.get("COMPONENT_NAME")), _word(r.get("FAILURE_MODE_NAME"))
        if comp in arch:
            assigned.setdefault(comp, []).append(mode)
    for extra in ("MRU", "PHASES", "PHASE_JUMP"):
        if extra in by and by[extra].rows:
            unmapped.append({"item": extra, "what": f"{len(by[extra].rows)} row(s)", "done": "not imported"})
    children_of: dict[str, list[str]] = {}
    for cname, r in arch.items():
        kids = [] if _word(r.get("CHILDREN_NAME")).lower() in NONE_WORDS else [
            c.strip() for c in _word(r.get("CHILDREN_NAME")).split(",") if c.strip()]
        for kid in kids:
            if "(" in kid:
                raise InputError("ARCHITECTURE.CHILDREN_NAME", f"{cname}: shared child {kid!r} cannot be drawn "
                                                               "faithfully as a block diagram; import refused")
            if kid not in arch:
                raise InputError("ARCHITECTURE.CHILDREN_NAME", f"{cname}: child {kid!r} is not a component")
        children_of[cname] = kids
    roots = [c for c in arch if not any(c in kids for kids in children_of.values())]
    if len(roots) != 1:
        raise InputError("ARCHITECTURE", f"needs exactly one top component (found {', '.join(roots) or 'none'})")
    inspections = {_word(r.get("INSPECTION_NAME")): r for r in _rows(by["INSPECTIONS"])} if "INSPECTIONS" in by \
        else {}
    nodes: list[dict[str, Any]] = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}]
    edges: list[dict[str, str]] = []

    def block(nid: str, comp: str) -> list[str]:
        """The blocks of a basic component copy: one per failure mode, in series."""
        names = assigned.get(comp) or []
        if not names:
            raise InputError("FAILURE_MODE_ASSIGNMENTS", f"basic component {comp!r} has no failure mode")
        if len(names) > 1:
            unmapped.append({"item": f"ARCHITECTURE.{comp}", "what": f"{len(names)} failure modes",
                             "done": "one block per mode in series (each mode's clock runs on its own)"})
        ids = []
        for mode in names:
            if mode not in modes:
                raise InputError("FAILURE_MODE_ASSIGNMENTS", f"{comp}: failure mode {mode!r} is not in FAILURE_MODES")
            m = modes[mode]
            field = f"FAILURE_MODES.{mode}"
            node = {"id": nid if len(names) == 1 else f"{nid}~{mode}", "type": "component",
                    "model": _law(m.get("FAILURE_LAW"), m.get("FAILURE_PARAMETERS"), f"{field}.FAILURE", unmapped),
                    "repair": _law(m.get("REPAIR_LAW"), m.get("REPAIR_PARAMETERS"), f"{field}.REPAIR", unmapped)}
            kind = _word(m.get("TYPE_OF_FAILURE")).lower()
            insp = _word(m.get("INSPECTION_NAME"))
            if kind == "blind":
                if insp.lower() not in NONE_WORDS and insp in inspections:
                    r = inspections[insp]
                    node["inspection"] = {"interval": float(r["INSPECTION_PERIOD"]),
                                          "duration": float(r.get("INSPECTION_DURATION") or 0.0)}
                else:
                    unmapped.append({"item": field, "what": "blind failure without an inspection",
                                     "done": "treated as detected at once"})
            for col, ok in (("HELD_BEFORE_REPAIR", "never_held"), ("HELD_AFTER_REPAIR", "never_held")):
                if _word(m.get(col)).lower() not in (ok, *NONE_WORDS):
                    unmapped.append({"item": f"{field}.{col}", "what": _word(m.get(col)), "done": "not imported"})
            if _word(m.get("PHASE_NAME")).lower() not in NONE_WORDS:
                unmapped.append({"item": f"{field}.PHASE_NAME", "what": _word(m.get("PHASE_NAME")),
                                 "done": "the mode applies in every phase"})
            nodes.append(node)
            ids.append(node["id"])
        for a, b in itertools.pairwise(ids):
            edges.append({"source": a, "target": b})
        return ids

    def build(comp: str, prefix: str, copy_id: str) -> tuple[list[str], list[str]]:
        """(heads, tails) of one copy of a component: heads receive the flow, tails pass it on."""
        r = arch[comp]
        if _word(r.get("COMPONENT_TYPE")).lower() == "basic":
            ids = block(copy_id, comp)
            return [ids[0]], [ids[-1]]
        branches: list[tuple[list[str], list[str]]] = []
        for kid in children_of[comp]:
            count = int(float(arch[kid].get("COMPONENT_NUMBER") or 1))
            for c in range(count):
                kid_id = f"{prefix}{kid}" if count == 1 else f"{prefix}{kid}_{c + 1}"
                # names are unique in AvailSim4, so a prefix is needed only inside a copied compound
                branches.append(build(kid, f"{kid_id}." if count > 1 else prefix, kid_id))
        if not branches:
            raise InputError("ARCHITECTURE.CHILDREN_NAME", f"compound {comp!r} has no children")
        shown = _word(r.get("CHILDREN_LOGIC"))
        logic = shown.upper()
        total = len(branches)
        if logic == "AND":
            for (_, tails), (heads, _) in itertools.pairwise(branches):
                edges.extend({"source": t, "target": h} for t in tails for h in heads)
            return branches[0][0], branches[-1][1]
        required = _required(logic, total, comp, shown)
        gate = copy_id
        nodes.append({"id": gate, "type": "knode", "n": required, "k": total})
        heads = []
        for h, t in branches:
            heads.extend(h)
            edges.extend({"source": x, "target": gate} for x in t)
        return heads, [gate]

    top = roots[0]
    count = int(float(arch[top].get("COMPONENT_NUMBER") or 1))
    if count != 1:
        raise InputError("ARCHITECTURE.COMPONENT_NUMBER", f"the top component {top!r} must be one")
    heads, tails = build(top, "", top)
    edges.extend({"source": "in", "target": h} for h in heads)
    edges.extend({"source": t, "target": "out"} for t in tails)
    diagram = {"name": name, "unit": unit, "repairable": True, "nodes": nodes, "edges": edges}
    return diagram, unmapped


def _required(logic: str, total: int, comp: str, shown: str) -> int:
    m = re.fullmatch(r"(\d+)OO(\d+)", logic)
    if m:
        need, of = int(m.group(1)), int(m.group(2))
        if of != total:
            raise InputError("ARCHITECTURE.CHILDREN_LOGIC", f"{comp}: {shown} names {of} children, it has {total}")
        return need
    m = re.fullmatch(r"(\d+)(RC|TF)", logic)
    if m:
        need = int(m.group(1)) if m.group(2) == "RC" else total - int(m.group(1))
        if not 1 <= need <= total:
            raise InputError("ARCHITECTURE.CHILDREN_LOGIC", f"{comp}: {shown} leaves {need} of {total} children "
                                                            "required")
        return need
    raise InputError("ARCHITECTURE.CHILDREN_LOGIC", f"{comp}: {shown!r} (custom logic) has no counterpart here; "
                                                    "use AND, XooY, XRC or XTF")
