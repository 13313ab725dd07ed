"""Distribution names users bring from other tools, as Bathtub's ids and parameters.

A model exported from `reliability` (`Weibull_3P`, `Gamma_2P`, ...) or `lifelines`
(`WeibullFitter`, ...) names its distribution and its parameters in that tool's convention:
reliability's gamma has alpha the *scale* and beta the *shape* (Bathtub's the other way
round), lifelines' exponential `lambda_` is a mean life (Bathtub's `failure_rate` is its
reciprocal). The name says whose convention the parameters follow, so they are translated
by it; Bathtub's own parameter names are accepted too where they do not clash. A `3P`
(or reliability's `Exponential_2P`) name carries the location `gamma` (Bathtub's offset);
a `2P` name has none. Names match without regard to case, spaces, `_` or `-`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bathtub.distributions import FAMILIES, MIXTURE
from bathtub.errors import InputError
from bathtub.life.model import DISCRETE_WEIBULL

Transform = Callable[[float], float]


def _reciprocal(x: float) -> float:
    return 1.0 / x if x != 0 else math.inf


@dataclass(frozen=True)
class ForeignName:
    """One tool's name: Bathtub's family, the tool's parameters in its order as
    (their name, Bathtub's name, transform or None), and what the name implies."""

    name: str
    distribution: str
    params: tuple[tuple[str, str, Transform | None], ...] = ()
    location: bool | None = None  # True: 3P (gamma required), False: 2P (none), None: either
    alt: str = ""  # the same family's name with (for a 2P name) or without (3P) the location
    extras: Mapping[str, str] = field(default_factory=dict)  # their name -> Bathtub's extra (p, f0)
    options: Mapping[str, Any] = field(default_factory=dict)  # implied fit options (zi, lfp, base ...)

    @property
    def their_names(self) -> tuple[str, ...]:
        return tuple(p[0] for p in self.params)


def _rel(name: str, dist: str, params: tuple[tuple[str, str, Transform | None], ...], location: bool | None,
         alt: str = "", **kw: Any) -> ForeignName:
    loc = (("gamma", "gamma", None),) if location is not False else ()
    return ForeignName(name, dist, params + loc, location, alt, **kw)


_SCALE_SHAPE = (("alpha", "alpha", None), ("beta", "beta", None))
_MU_SIGMA = (("mu", "mu", None), ("sigma", "sigma", None))
# reliability: Gamma_Distribution(alpha = scale, beta = shape); Bathtub's gamma: alpha shape, beta scale.
_REL_GAMMA = (("alpha", "beta", None), ("beta", "alpha", None))
_REL_EXP = (("lambda", "failure_rate", None),)

FOREIGN: tuple[ForeignName, ...] = (
    # reliability (Fit_* / *_Distribution names)
    _rel("Weibull_2P", "weibull", _SCALE_SHAPE, False, "Weibull_3P"),
    _rel("Weibull_3P", "weibull", _SCALE_SHAPE, True, "Weibull_2P"),
    _rel("Weibull_Distribution", "weibull", _SCALE_SHAPE, None),
    _rel("Lognormal_2P", "lognormal", _MU_SIGMA, False, "Lognormal_3P"),
    _rel("Lognormal_3P", "lognormal", _MU_SIGMA, True, "Lognormal_2P"),
    _rel("Lognormal_Distribution", "lognormal", _MU_SIGMA, None),
    _rel("Exponential_1P", "exponential", _REL_EXP, False, "Exponential_2P"),
    _rel("Exponential_2P", "exponential", _REL_EXP, True, "Exponential_1P"),
    _rel("Exponential_Distribution", "exponential", _REL_EXP, None),
    _rel("Normal_2P", "normal", _MU_SIGMA, False),
    _rel("Normal_Distribution", "normal", _MU_SIGMA, False),
    _rel("Gamma_2P", "gamma", _REL_GAMMA, False),
    _rel("Gamma_3P", "gamma", _REL_GAMMA, True, "Gamma_2P"),
    _rel("Gamma_Distribution", "gamma", _REL_GAMMA, None),
    _rel("Loglogistic_2P", "loglogistic", _SCALE_SHAPE, False, "Loglogistic_3P"),
    _rel("Loglogistic_3P", "loglogistic", _SCALE_SHAPE, True, "Loglogistic_2P"),
    _rel("Loglogistic_Distribution", "loglogistic", _SCALE_SHAPE, None),
    _rel("Gumbel_2P", "gumbel", _MU_SIGMA, False),  # reliability's Gumbel is the smallest extreme value, as ours
    _rel("Gumbel_Distribution", "gumbel", _MU_SIGMA, False),
    _rel("Beta_2P", "beta", _SCALE_SHAPE, False),
    _rel("Beta_Distribution", "beta", _SCALE_SHAPE, False),
    _rel("Weibull_ZI", "weibull", _SCALE_SHAPE, False, extras={"zi": "f0"}, options={"zi": True}),
    _rel("Weibull_DS", "weibull", _SCALE_SHAPE, False, extras={"ds": "p"}, options={"lfp": True}),
    ForeignName("Weibull_Mixture", MIXTURE, options={"base_distribution": "weibull"}),
    # lifelines (univariate fitters; parameters `lambda_`, `rho_`, ... with or without the underscore)
    ForeignName("WeibullFitter", "weibull", (("lambda_", "alpha", None), ("rho_", "beta", None)), False),
    ForeignName("ExponentialFitter", "exponential", (("lambda_", "failure_rate", _reciprocal),), False),
    ForeignName("LogNormalFitter", "lognormal", (("mu_", "mu", None), ("sigma_", "sigma", None)), False),
    ForeignName("LogLogisticFitter", "loglogistic", (("alpha_", "alpha", None), ("beta_", "beta", None)), False),
)


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).casefold()


_BY_KEY = {_key(f.name): f for f in FOREIGN}
OWN_IDS = (*FAMILIES, MIXTURE, DISCRETE_WEIBULL, "best")
_OWN = {_key(i): i for i in OWN_IDS}


def accepted_names() -> list[str]:
    return [*OWN_IDS, *(f.name for f in FOREIGN)]


@dataclass(frozen=True)
class Resolved:
    distribution: str
    params: Any
    extras: dict[str, Any] | None
    options: dict[str, Any] | None


def resolve(name: Any, *, params: Any = None, extras: Mapping[str, Any] | None = None,
            options: Mapping[str, Any] | None = None, field_name: str = "distribution") -> Resolved:
    """Bathtub's id, parameters, extras and fit options for a distribution named as a user
    brings it: a Bathtub id in any case, or another tool's name (parameters translated)."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(field_name, "required: a distribution name")
    key = _key(name)
    if key in _OWN:
        return Resolved(_OWN[key], params, None if extras is None else dict(extras),
                        None if options is None else dict(options))
    foreign = _BY_KEY.get(key)
    if foreign is None:
        raise InputError(field_name, f"unknown distribution {name!r}; accepted (any case): "
                                     f"{', '.join(accepted_names())}")
    if params is not None:  # params-only: the name's zi/lfp come as extras (ZI, DS)
        ex = dict(extras or {})
        values = _translate(foreign, params, ex)
        return Resolved(foreign.distribution, values, ex or None, None if options is None else dict(options))
    # Data, refitted: the name sets the fit's options (a 3P name fits the offset).
    opts = dict(options or {})
    implied = dict(foreign.options)
    if foreign.location is not None:
        implied["offset"] = foreign.location
    for k, v in implied.items():
        if k in opts and opts[k] != v:
            raise InputError(f"options.{k}", f"{foreign.name} means {k} {json_text(v)}; leave it out")
        opts[k] = v
    return Resolved(foreign.distribution, None, None if extras is None else dict(extras), opts or None)


def json_text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else repr(v)


def _translate(foreign: ForeignName, params: Any, extras: dict[str, Any]) -> dict[str, Any]:
    """The tool's parameters as Bathtub's {name: value}; extras (zi, ds) moved to `extras`."""
    pairs = _pairs(params, foreign.their_names)
    theirs = {_key(n).rstrip("_"): (ours, f) for n, ours, f in foreign.params}
    out: dict[str, Any] = {}
    for name, value in pairs:
        k = _key(name).rstrip("_")
        if k in foreign.extras:
            extras[foreign.extras[k]] = value
            continue
        ours, f = theirs.get(k, (name, None))
        if ours in out:
            raise InputError(f"params.{name}", "given twice")
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        out[ours] = f(float(value)) if f is not None and ok else value
    fam = FAMILIES.get(foreign.distribution)
    if fam is not None:  # Bathtub's parameter order (reliability's gamma lists them the other way)
        out = {**{n: out[n] for n in fam.names if n in out}, **out}
    if foreign.location is True and "gamma" not in out and "gamma" not in extras:
        raise InputError("params.gamma", f"required for {foreign.name} (its location); without one use {foreign.alt}")
    if foreign.location is False and "gamma" in out:
        raise InputError("params.gamma", f"{foreign.name} has no location"
                                         + (f"; for one use {foreign.alt}" if foreign.alt else ""))
    return out


def _pairs(params: Any, order: Sequence[str]) -> list[tuple[str, Any]]:
    if isinstance(params, Mapping):
        return [(str(k), v) for k, v in params.items()]
    if isinstance(params, Sequence) and not isinstance(params, (str, bytes)):
        seq = list(params)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in seq):
            if len(seq) > len(order):
                raise InputError("params", f"expects at most {len(order)} numbers ({', '.join(order)})")
            return list(zip(order, seq))
        out = []
        for i, p in enumerate(seq):
            if not isinstance(p, Mapping) or "name" not in p or "value" not in p:
                raise InputError(f"params[{i}]", "must be an object {name, value}")
            out.append((str(p["name"]), p["value"]))
        return out
    raise InputError("params", "must be an array of {name, value}, an object or an array of numbers")
