"""What is fitted: a family with its options, its parameter vector and how to build it.

A `ModelSpec` names the parameters (the spec's names: weibull alpha, beta; options add
`gamma` (offset), `f0` (zi), `p` (lfp); a mixture numbers its modes alpha1, beta1, weight1, ...),
declares each one's domain, maps between natural values and the unconstrained vector the
optimiser walks (log for positive values, logit for probabilities, a bounded logit for the
location, additive log-ratios for mixture weights, times over the data's scale for a location
in time, the log time less the log scale for a log-time location), and builds the evaluable
`Lifetime`. Each coordinate moves by a constant when the data's time unit changes, which is what
keeps fits and their standard errors exact in every unit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from bathtub.distributions import Lifetime, family
from bathtub.errors import InputError
from bathtub.life.dists import (
    DiscreteWeibull,
    Exponential,
    ExpoWeibull,
    Gamma,
    Logistic,
    LogLogistic,
    Lognormal,
    Normal,
    SmallestExtremeValue,
    Weibull,
)
from bathtub.life.wrappers import LimitedPopulation, Mixture, Shifted, ZeroInflated

DISCRETE_WEIBULL = "discrete_weibull"
FIT_FAMILIES = (
    "weibull", "exponential", "normal", "lognormal", "gamma", "loglogistic", "expo_weibull",
    "gumbel", "logistic", "beta", "uniform", DISCRETE_WEIBULL,
)
LOCATION_FAMILIES = ("weibull", "exponential", "lognormal", "loglogistic", "gamma")
# Families on the whole real line: their quantiles may be negative, so bounds are linear.
REAL_LINE = ("normal", "gumbel", "logistic")

POS, REAL, UNIT, LOC, WEIGHT = "positive", "real", "unit", "location", "weight"
# A location on the log-time axis (lognormal mu): multiplying the times by k adds ln k to it.
LOGLOC = "log-location"


def base_names(distribution: str) -> tuple[str, ...]:
    if distribution == DISCRETE_WEIBULL:
        return ("q", "beta")
    return family(distribution, "distribution").names


def base_kinds(distribution: str) -> tuple[str, ...]:
    if distribution == DISCRETE_WEIBULL:
        return (UNIT, POS)
    if distribution == "lognormal":
        return (LOGLOC, POS)
    fam = family(distribution, "distribution")
    return tuple(POS if p.low == 0.0 else REAL for p in fam.params)


def build_base(distribution: str, values: Mapping[str, float]) -> Lifetime:
    """Closed-form numpy for the common families (no scipy object per likelihood call)."""
    if distribution == "weibull":
        return Weibull(values["alpha"], values["beta"])
    if distribution == "exponential":
        return Exponential(values["failure_rate"])
    if distribution == "normal":
        return Normal(values["mu"], values["sigma"])
    if distribution == "lognormal":
        return Lognormal(values["mu"], values["sigma"])
    if distribution == "logistic":
        return Logistic(values["mu"], values["sigma"])
    if distribution == "gumbel":
        return SmallestExtremeValue(values["mu"], values["sigma"])
    if distribution == "loglogistic":
        return LogLogistic(values["alpha"], values["beta"])
    if distribution == "gamma":
        return Gamma(values["alpha"], values["beta"])
    if distribution == "expo_weibull":
        return ExpoWeibull(values["alpha"], values["beta"], values["theta"])
    if distribution == DISCRETE_WEIBULL:
        return DiscreteWeibull(values["q"], values["beta"])
    return Lifetime.of(distribution, {n: values[n] for n in base_names(distribution)})


@dataclass(frozen=True)
class ModelSpec:
    """A family plus options. `modes` > 1 makes a mixture of `distribution`."""

    distribution: str
    offset: bool = False
    zi: bool = False
    lfp: bool = False
    modes: int = 1
    names: tuple[str, ...] = field(init=False)
    kinds: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        if self.distribution not in FIT_FAMILIES:
            known = ", ".join([*FIT_FAMILIES, "mixture", "best"])
            raise InputError("distribution", f"unknown distribution {self.distribution!r}; known: {known}")
        if self.offset and self.distribution not in LOCATION_FAMILIES:
            raise InputError("options.offset", f"offset applies to {', '.join(LOCATION_FAMILIES)} only")
        if self.modes > 1 and (self.offset or self.zi or self.lfp):
            raise InputError("options", "a mixture takes no offset, zi or lfp option")
        bn, bk = base_names(self.distribution), base_kinds(self.distribution)
        if self.modes > 1:
            names: list[str] = []
            kinds: list[str] = []
            for i in range(1, self.modes + 1):
                names += [f"{n}{i}" for n in bn] + [f"weight{i}"]
                kinds += [*bk, WEIGHT]
        else:
            names, kinds = list(bn), list(bk)
            for flag, name, kind in ((self.offset, "gamma", LOC), (self.zi, "f0", UNIT), (self.lfp, "p", UNIT)):
                if flag:
                    names.append(name)
                    kinds.append(kind)
        object.__setattr__(self, "names", tuple(names))
        object.__setattr__(self, "kinds", tuple(kinds))

    @property
    def id(self) -> str:
        return "mixture" if self.modes > 1 else self.distribution

    @property
    def k(self) -> int:
        """Number of free parameters (mixture weights add to 1, so one fewer)."""
        return len(self.names) - (1 if self.modes > 1 else 0)

    @property
    def real_line(self) -> bool:
        return self.distribution in REAL_LINE and self.modes == 1

    def options(self) -> dict[str, bool]:
        return {"offset": self.offset, "zi": self.zi, "lfp": self.lfp}

    def build(self, theta: np.ndarray | Mapping[str, float]) -> Lifetime:
        v = theta if isinstance(theta, Mapping) else dict(zip(self.names, map(float, theta), strict=False))
        if self.modes > 1:
            bn = base_names(self.distribution)
            comps = [build_base(self.distribution, {n: v[f"{n}{i}"] for n in bn}) for i in range(1, self.modes + 1)]
            return Mixture(comps, np.array([v[f"weight{i}"] for i in range(1, self.modes + 1)]))
        d = build_base(self.distribution, v)
        if self.offset:
            d = Shifted(d, v["gamma"])
        if self.zi:
            d = ZeroInflated(d, v["f0"])
        if self.lfp:
            d = LimitedPopulation(d, v["p"])
        return d

    # ---- natural <-> unconstrained ------------------------------------------------------
    def to_u(self, theta: np.ndarray, scale: float, tmin: float) -> np.ndarray:
        u = np.empty(len(theta) - (1 if self.modes > 1 else 0))
        j = 0
        w = [theta[i] for i, k in enumerate(self.kinds) if k == WEIGHT]
        for i, k in enumerate(self.kinds):
            x = float(theta[i])
            if k == WEIGHT:
                continue
            if k == POS:
                u[j] = math.log(x)
            elif k == REAL:
                u[j] = x / scale
            elif k == LOGLOC:
                u[j] = x - math.log(scale)
            elif k == UNIT:
                x = min(max(x, 1e-15), 1.0 - 1e-15)  # from_u saturates at 0 and 1 in floating point
                u[j] = math.log(x / (1.0 - x))
            else:  # location in [0, tmin)
                s = min(max(x / tmin, 1e-12), 1.0 - 1e-12)
                u[j] = math.log(s / (1.0 - s))
            j += 1
        for wi in w[1:]:
            u[j] = math.log(max(wi, 1e-300) / max(w[0], 1e-300))
            j += 1
        return u

    def from_u(self, u: np.ndarray, scale: float, tmin: float) -> np.ndarray:
        theta = np.empty(len(self.names))
        j = 0
        widx = []
        for i, k in enumerate(self.kinds):
            if k == WEIGHT:
                widx.append(i)
                continue
            x = float(u[j])
            if k == POS:
                # kept inside (0, inf) in floating point: a 0 or inf scale is no distribution
                theta[i] = math.exp(min(max(x, -700.0), 700.0))
            elif k == REAL:
                theta[i] = x * scale
            elif k == LOGLOC:
                theta[i] = x + math.log(scale)
            elif k == UNIT:
                theta[i] = 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0
            else:
                theta[i] = tmin / (1.0 + math.exp(-x)) if x > -700 else 0.0
            j += 1
        if widx:
            logits = np.concatenate([[0.0], u[j:]])
            e = np.exp(logits - logits.max())
            theta[widx] = e / e.sum()
        return theta

    def jacobian(self, u: np.ndarray, scale: float, tmin: float, h: float = 1e-6) -> np.ndarray:
        """d theta / d u (rows theta, columns u), by central differences."""
        cols = []
        for j in range(len(u)):
            e = np.zeros(len(u))
            e[j] = h
            cols.append((self.from_u(u + e, scale, tmin) - self.from_u(u - e, scale, tmin)) / (2 * h))
        return np.array(cols).T
