"""Life distributions by the service's ids and parameter names, and `Lifetime`, the one class every
life model is (a family by id evaluates through scipy).

One declaration per family (scipy's `_new_distributions` idea): parameter names and
domains as data, so validation, documentation and the JSON Schema come from one place.
Parameter names follow the spec's BlockModel table:

| id            | parameters                          | scipy equivalent                         |
|---------------|-------------------------------------|------------------------------------------|
| exponential   | failure_rate [, gamma]              | expon(loc=gamma, scale=1/failure_rate)    |
| weibull       | alpha (scale), beta (shape) [, gamma] | weibull_min(beta, loc=gamma, scale=alpha) |
| normal        | mu, sigma                           | norm(mu, sigma)                          |
| lognormal     | mu, sigma (of ln t) [, gamma]       | lognorm(sigma, loc=gamma, scale=e^mu)    |
| gamma         | alpha (shape), beta (scale)         | gamma(alpha, scale=beta)                 |
| loglogistic   | alpha (scale), beta (shape) [, gamma] | fisk(beta, loc=gamma, scale=alpha)       |
| gumbel        | mu, sigma (smallest extreme value)  | gumbel_l(mu, sigma)                      |
| logistic      | mu, sigma                           | logistic(mu, sigma)                      |
| uniform       | a, b (a < b)                        | uniform(a, b - a)                        |
| beta          | alpha, beta (shapes, on [0, 1])     | beta(alpha, beta)                        |
| expo_weibull  | alpha (scale), beta (shape), theta  | exponweib(theta, beta, scale=alpha)      |
| mixture       | alpha1, beta1, weight1, ... of a base distribution (`base_distribution_id`) |

`gamma` as a parameter is always a location (failure-free time), never the gamma family.
The gamma family's `alpha` is the shape and `beta` the scale (mean = alpha * beta), so that
`given` in the mean conversions is always the shape, as the spec's BlockModel reads.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from bathtub.errors import InputError
from bathtub.validate import check_number, is_number

ArrayLike = float | np.ndarray


@dataclass(frozen=True)
class Param:
    """A parameter's name, its domain as (low, high, low_inclusive), and what it means."""

    name: str
    meaning: str
    low: float = -math.inf
    high: float = math.inf
    low_inclusive: bool = False

    def check(self, value: float, field: str) -> None:
        if not math.isfinite(value):
            raise InputError(field, "must be a finite number")
        if value < self.low or (value == self.low and not self.low_inclusive):
            op = ">=" if self.low_inclusive else ">"
            raise InputError(field, f"{self.name} must be {op} {self.low:g}")
        if value > self.high:
            raise InputError(field, f"{self.name} must be <= {self.high:g}")


POSITIVE = dict(low=0.0)
LOCATION = Param("gamma", "location: failure-free time before which nothing fails", 0.0, math.inf, True)


class Bound:
    """A scipy distribution with its parameters bound, as scipy's own frozen one binds them
    (every method is the distribution's own, called with the same arguments, so the numbers are
    scipy's to the bit), without the copy of the distribution object scipy makes at each freeze:
    that copy re-parses the class docstring, about 1.2 ms, which was most of the cost of a parameter
    draw's closed-form evaluation (a two-level run builds a lifetime for every block of every draw)."""

    __slots__ = ("args", "dist", "kwds")

    def __init__(self, dist: Any, *args: float, **kwds: float):
        self.dist, self.args, self.kwds = dist, args, kwds

    def sf(self, x: ArrayLike) -> Any:
        return self.dist.sf(x, *self.args, **self.kwds)

    def cdf(self, x: ArrayLike) -> Any:
        return self.dist.cdf(x, *self.args, **self.kwds)

    def pdf(self, x: ArrayLike) -> Any:
        return self.dist.pdf(x, *self.args, **self.kwds)

    def logpdf(self, x: ArrayLike) -> Any:
        return self.dist.logpdf(x, *self.args, **self.kwds)

    def logsf(self, x: ArrayLike) -> Any:
        return self.dist.logsf(x, *self.args, **self.kwds)

    def logcdf(self, x: ArrayLike) -> Any:
        return self.dist.logcdf(x, *self.args, **self.kwds)

    def ppf(self, q: ArrayLike) -> Any:
        return self.dist.ppf(q, *self.args, **self.kwds)

    def isf(self, q: ArrayLike) -> Any:
        return self.dist.isf(q, *self.args, **self.kwds)

    def mean(self) -> Any:
        return self.dist.mean(*self.args, **self.kwds)

    def support(self) -> Any:
        return self.dist.support(*self.args, **self.kwds)

    def rvs(self, size: Any = None, random_state: Any = None) -> Any:
        return self.dist.rvs(*self.args, size=size, random_state=random_state, **self.kwds)


@dataclass(frozen=True)
class Family:
    """A parametric family: its parameters and how to build the scipy distribution."""

    id: str
    label: str
    params: tuple[Param, ...]
    build: Callable[[Mapping[str, float]], Any]
    location: bool = False  # accepts the optional `gamma` location parameter

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


def _families() -> dict[str, Family]:
    def loc(p: Mapping[str, float]) -> float:
        return p.get("gamma", 0.0)

    fams = [
        Family(
            "exponential", "Exponential",
            (Param("failure_rate", "constant hazard, per unit time", **POSITIVE),),
            lambda p: Bound(stats.expon, loc=loc(p), scale=1.0 / p["failure_rate"]), location=True,
        ),
        Family(
            "weibull", "Weibull",
            (Param("alpha", "scale (characteristic life)", **POSITIVE), Param("beta", "shape", **POSITIVE)),
            lambda p: Bound(stats.weibull_min, p["beta"], loc=loc(p), scale=p["alpha"]), location=True,
        ),
        Family(
            "normal", "Normal",
            (Param("mu", "mean"), Param("sigma", "standard deviation", **POSITIVE)),
            lambda p: Bound(stats.norm, p["mu"], p["sigma"]),
        ),
        Family(
            "lognormal", "Lognormal",
            (Param("mu", "mean of ln t"), Param("sigma", "standard deviation of ln t", **POSITIVE)),
            lambda p: Bound(stats.lognorm, p["sigma"], loc=loc(p), scale=math.exp(p["mu"])), location=True,
        ),
        Family(
            "gamma", "Gamma",
            (Param("alpha", "shape", **POSITIVE), Param("beta", "scale", **POSITIVE)),
            lambda p: Bound(stats.gamma, p["alpha"], loc=loc(p), scale=p["beta"]), location=True,
        ),
        Family(
            "loglogistic", "Log-logistic",
            (Param("alpha", "scale (median)", **POSITIVE), Param("beta", "shape", **POSITIVE)),
            lambda p: Bound(stats.fisk, p["beta"], loc=loc(p), scale=p["alpha"]), location=True,
        ),
        Family(
            "gumbel", "Gumbel (smallest extreme value)",
            (Param("mu", "location"), Param("sigma", "scale", **POSITIVE)),
            lambda p: Bound(stats.gumbel_l, p["mu"], p["sigma"]),
        ),
        Family(
            "logistic", "Logistic",
            (Param("mu", "location (median)"), Param("sigma", "scale", **POSITIVE)),
            lambda p: Bound(stats.logistic, p["mu"], p["sigma"]),
        ),
        Family(
            "uniform", "Uniform",
            (Param("a", "lower end"), Param("b", "upper end")),
            lambda p: Bound(stats.uniform, p["a"], p["b"] - p["a"]),
        ),
        Family(
            "beta", "Beta",
            (Param("alpha", "first shape", **POSITIVE), Param("beta", "second shape", **POSITIVE)),
            lambda p: Bound(stats.beta, p["alpha"], p["beta"]),
        ),
        Family(
            "expo_weibull", "Exponentiated Weibull",
            (
                Param("alpha", "scale", **POSITIVE),
                Param("beta", "shape", **POSITIVE),
                Param("theta", "exponent", **POSITIVE),
            ),
            lambda p: Bound(stats.exponweib, p["theta"], p["beta"], scale=p["alpha"]),
        ),
    ]
    return {f.id: f for f in fams}


FAMILIES: dict[str, Family] = _families()
MIXTURE = "mixture"
MAX_MIXTURE_MODES = 5


def family(distribution_id: str, field: str = "distribution_id") -> Family:
    """The family of an id, or an InputError listing the known ids."""
    try:
        return FAMILIES[distribution_id]
    except (KeyError, TypeError):
        known = ", ".join(sorted([*FAMILIES, MIXTURE]))
        raise InputError(field, f"unknown distribution {distribution_id!r}; known: {known}") from None


def _as_mapping(params: Any, names: tuple[str, ...], field: str) -> dict[str, float]:
    """Accept [{name, value}], {name: value} or positional [numbers] (in `names` order)."""
    if isinstance(params, Mapping):
        items = list(params.items())
    elif isinstance(params, Iterable) and not isinstance(params, (str, bytes)):
        seq = list(params)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in seq):
            if len(seq) > len(names):
                raise InputError(field, f"expects at most {len(names)} numbers ({', '.join(names)})")
            items = list(zip(names, seq))
        else:
            items = []
            for i, p in enumerate(seq):
                if not isinstance(p, Mapping) or "name" not in p or "value" not in p:
                    raise InputError(f"{field}[{i}]", "must be an object {name, value}")
                items.append((p["name"], p["value"]))
    else:
        raise InputError(field, "must be an array of {name, value}, an object or an array of numbers")
    out: dict[str, float] = {}
    for name, value in items:
        if not is_number(value):
            raise InputError(f"{field}.{name}", "must be a number")
        if name in out:
            raise InputError(f"{field}.{name}", "given twice")
        out[str(name)] = float(value)
    return out


WEIGHT = Param("weight", "the mode's share of the population", 0.0, 1.0)
MIXTURE_RULE = "mixture weights must add to 1"


# Families over the whole real line whose location must be above 0 for a life model: at mu <= 0
# at least half the lives (normal, logistic; 63% for the smallest extreme value) are below 0.
REAL_LINE_LOCATION = {"normal": "mu", "logistic": "mu", "gumbel": "mu"}


def parse_params(
    distribution_id: str,
    params: Any,
    *,
    base_distribution_id: str | None = None,
    field: str = "params",
) -> dict[str, float]:
    """Validated parameters of a family as {name: value}; raises InputError naming the field."""
    if distribution_id == MIXTURE:
        return _parse_mixture(base_distribution_id, params, field)
    fam = family(distribution_id)
    allowed = fam.names + (("gamma",) if fam.location else ())
    values = _as_mapping(params, fam.names, field)
    for name in values:
        if name not in allowed:
            raise InputError(f"{field}.{name}", f"not a parameter of {fam.id}; expected {', '.join(allowed)}")
    for p in fam.params:
        if p.name not in values:
            raise InputError(f"{field}.{p.name}", f"required for {fam.id}")
        p.check(values[p.name], f"{field}.{p.name}")
    if "gamma" in values:
        LOCATION.check(values["gamma"], f"{field}.gamma")
    if fam.id == "uniform" and not values["a"] < values["b"]:
        raise InputError(f"{field}.b", "must be greater than a")
    return values


def _parse_mixture(base: str | None, params: Any, field: str) -> dict[str, float]:
    if base is None:
        raise InputError("base_distribution_id", "required with distribution_id mixture")
    fam = family(base, "base_distribution_id")
    numbered = [f"{n}{i}" for i in range(1, MAX_MIXTURE_MODES + 1) for n in (*fam.names, "weight")]
    values = _as_mapping(params, tuple(numbered), field)
    modes = 0
    while any(f"{n}{modes + 1}" in values for n in (*fam.names, "weight")):
        modes += 1
    if modes < 2:
        raise InputError(field, "a mixture needs at least 2 modes (alpha1, beta1, weight1, alpha2, ...)")
    expected = {f"{n}{i}" for i in range(1, modes + 1) for n in (*fam.names, "weight")}
    for name in values:
        if name not in expected:
            raise InputError(f"{field}.{name}", f"not a parameter of a {modes}-mode {fam.id} mixture")
    for i in range(1, modes + 1):
        for p in fam.params:
            key = f"{p.name}{i}"
            if key not in values:
                raise InputError(f"{field}.{key}", "required")
            p.check(values[key], f"{field}.{key}")
        w = values.get(f"weight{i}")
        if w is None:
            raise InputError(f"{field}.weight{i}", "required")
        if not 0.0 < w <= 1.0:
            raise InputError(f"{field}.weight{i}", "must be in (0, 1]")
    total = sum(values[f"weight{i}"] for i in range(1, modes + 1))
    if abs(total - 1.0) > 1e-9:
        raise InputError(f"{field}.weight", f"{MIXTURE_RULE} (they add to {total:.10g})")
    return values


def log1mexp(a: ArrayLike) -> np.ndarray:
    """log(1 - exp(a)) for a <= 0, accurate at both ends (Mächler's rule)."""
    a = np.asarray(a, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a > -math.log(2.0), np.log(-np.expm1(a)), np.log1p(-np.exp(a)))


class Lifetime(ABC):
    """A life distribution: the one class every life model is, whatever evaluates it.

    A representation states the three log pieces (`logpdf`, `logsf`, `logcdf`: what a likelihood
    reads), `quantile` and `mean`; the base derives `sf`, `cdf`, `pdf`, `hazard`,
    `cumulative_hazard`, `isf`, `support_low` and `sample` from them, and a representation
    overrides one where it has a better way. Representations: a family or mixture by the
    service's ids through scipy (`Lifetime.of`, `Lifetime.from_input`), closed forms and their
    wrappers for fitting (`bathtub.life.dists`, `bathtub.life.wrappers`), the engine's own
    evaluation and sampler (`bathtub.engine.EngineLifetime`). Times are in the model's unit;
    functions of t take floats or arrays.
    """

    @classmethod
    def of(cls, distribution_id: str, params: Mapping[str, float],
           base_distribution_id: str | None = None) -> Lifetime:
        """A family (or a `base_distribution_id` mixture) by the service's id and already checked
        parameters {name: value}, evaluated through scipy."""
        return ScipyLifetime(distribution_id, params, base_distribution_id)

    @classmethod
    def from_input(cls, distribution_id: str, params: Any, base_distribution_id: str | None = None,
                   field: str = "params") -> Lifetime:
        """Validate then build (`parse_params`): the door for user input."""
        values = parse_params(distribution_id, params, base_distribution_id=base_distribution_id, field=field)
        return cls.of(distribution_id, values, base_distribution_id)

    @abstractmethod
    def logpdf(self, t: ArrayLike) -> np.ndarray: ...

    @abstractmethod
    def logsf(self, t: ArrayLike) -> np.ndarray: ...

    @abstractmethod
    def logcdf(self, t: ArrayLike) -> np.ndarray: ...

    @abstractmethod
    def quantile(self, q: ArrayLike) -> Any:
        """The least t with cdf(t) >= q (a float for a float q)."""

    @abstractmethod
    def mean(self) -> float: ...

    def quantile_real(self, q: float) -> float:
        """The quantile as a smooth function of the parameters (what bounds differentiate):
        `quantile` itself except for a discrete family, whose quantile is a whole cycle."""
        return float(self.quantile(q))

    def sf(self, t: ArrayLike) -> Any:
        return np.exp(self.logsf(t))

    def cdf(self, t: ArrayLike) -> Any:
        return np.exp(self.logcdf(t))

    def pdf(self, t: ArrayLike) -> Any:
        return np.exp(self.logpdf(t))

    def hazard(self, t: ArrayLike) -> Any:
        with np.errstate(invalid="ignore", over="ignore"):
            return np.exp(self.logpdf(t) - self.logsf(t))

    def cumulative_hazard(self, t: ArrayLike) -> Any:
        return -self.logsf(t)

    def isf(self, q: ArrayLike) -> Any:
        """The t with sf(t) = q."""
        return self.quantile(1.0 - np.asarray(q, dtype=float))

    def support_low(self) -> float:
        """Lowest time at which failures can occur (0 for most life distributions)."""
        return float(self.quantile(0.0))

    def sample(self, n: int, *, seed: int = 0, stream: int = 0, age: float | None = None) -> np.ndarray:
        """n lives by inversion of uniforms from numpy's stream (seed, stream); with `age`, the
        remaining lives of units that have survived to `age` (sf(age + x) = u sf(age)). The
        engine's representation draws from the engine's own streams instead."""
        u = np.random.default_rng([int(seed), int(stream)]).random(int(n))
        if age is None:
            return np.array([float(self.quantile(float(x))) for x in u])
        s_age = float(self.sf(age))
        return np.array([float(self.isf(float(x) * s_age)) - age for x in u])

    def log_interval(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """log P(lo < T <= hi), from whichever tail keeps the subtraction accurate."""
        slo, shi = self.logsf(lo), self.logsf(hi)
        clo, chi = self.logcdf(lo), self.logcdf(hi)
        with np.errstate(invalid="ignore"):
            upper = slo + log1mexp(shi - slo)
            lower = chi + log1mexp(clo - chi)
        return np.where(slo < math.log(0.5), upper, lower)

    def invert(self, q: float, lo: float, hi: float) -> float:
        """Root of cdf(t) = q by bracketing (for a representation without a closed quantile).

        lo must be at or below the quantile (as the smallest component quantile is for a
        mixture); if rounding puts cdf(lo) at q already, lo is the answer. A cdf that is flat or
        stepped in floating point may keep Brent from its tolerance: its last iterate, inside
        the bracket, is then as good as the arithmetic allows.
        """
        if float(self.cdf(lo)) >= q:
            return lo
        while float(self.cdf(hi)) < q:
            hi = hi * 2.0 + 1.0
            if hi > 1e300:
                return math.inf
        return float(optimize.brentq(lambda t: float(self.cdf(t)) - q, lo, hi, xtol=1e-300, rtol=1e-13,
                                     maxiter=500, disp=False))


class ScipyLifetime(Lifetime):
    """A family or a mixture by the service's ids, through scipy, vectorised over t: sf, cdf and
    pdf are scipy's own; survival and hazard on the log scale so that deep tails stay accurate."""

    def __init__(self, distribution_id: str, params: Mapping[str, float], base_distribution_id: str | None = None):
        self.distribution_id = distribution_id
        self.base_distribution_id = base_distribution_id
        self.params = dict(params)
        if distribution_id == MIXTURE:
            fam = family(base_distribution_id or "", "base_distribution_id")
            modes = sum(1 for k in params if k.startswith("weight"))
            self.weights = np.array([params[f"weight{i}"] for i in range(1, modes + 1)])
            self.components = [
                fam.build({n: params[f"{n}{i}"] for n in fam.names}) for i in range(1, modes + 1)
            ]
            self._dist = None
        else:
            self._dist = family(distribution_id).build(params)

    def sf(self, t: ArrayLike) -> ArrayLike:
        if self._dist is not None:
            return self._dist.sf(t)
        return sum(w * c.sf(t) for w, c in zip(self.weights, self.components))

    def cdf(self, t: ArrayLike) -> ArrayLike:
        if self._dist is not None:
            return self._dist.cdf(t)
        return sum(w * c.cdf(t) for w, c in zip(self.weights, self.components))

    def pdf(self, t: ArrayLike) -> ArrayLike:
        if self._dist is not None:
            return self._dist.pdf(t)
        return sum(w * c.pdf(t) for w, c in zip(self.weights, self.components))

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        if self._dist is not None:
            return self._dist.logpdf(t)
        logs = np.array([np.log(w) + c.logpdf(t) for w, c in zip(self.weights, self.components)])
        return special.logsumexp(logs, axis=0)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        if self._dist is not None:
            return self._dist.logsf(t)
        logs = np.array([np.log(w) + c.logsf(t) for w, c in zip(self.weights, self.components)])
        return special.logsumexp(logs, axis=0)

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        if self._dist is not None:
            return self._dist.logcdf(t)
        logs = np.array([np.log(w) + c.logcdf(t) for w, c in zip(self.weights, self.components)])
        return special.logsumexp(logs, axis=0)

    def hazard(self, t: ArrayLike) -> ArrayLike:
        if self._dist is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.exp(self._dist.logpdf(t) - self._dist.logsf(t))
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.pdf(t) / self.sf(t)

    def mean(self) -> float:
        if self._dist is not None:
            return float(self._dist.mean())
        return float(sum(w * c.mean() for w, c in zip(self.weights, self.components)))

    def quantile(self, q: ArrayLike) -> ArrayLike:
        if self._dist is not None:
            return self._dist.ppf(q)
        qs = np.atleast_1d(np.asarray(q, dtype=float))
        out = np.array([self._mixture_quantile(x) for x in qs])
        return out if np.ndim(q) else float(out[0])

    def isf(self, q: ArrayLike) -> ArrayLike:
        if self._dist is not None:
            return self._dist.isf(q)
        return self.quantile(1.0 - np.asarray(q, dtype=float))

    def _mixture_quantile(self, q: float) -> float:
        if q <= 0.0:
            return float(min(c.ppf(0.0) for c in self.components))
        if q >= 1.0:
            return math.inf
        lo = min(float(c.ppf(q)) for c in self.components)
        hi = max(float(c.ppf(q)) for c in self.components)
        if lo == hi:
            return lo
        return float(optimize.brentq(lambda t: float(self.cdf(t)) - q, lo, hi, xtol=1e-14, rtol=1e-14))

    def support_low(self) -> float:
        if self._dist is not None:
            return float(self._dist.support()[0])
        return float(min(c.support()[0] for c in self.components))


# Families whose parameters follow from a mean plus one known shape (BlockModel `mean` + `given`).
MEAN_GIVEN: dict[str, tuple[str, ...]] = {
    "exponential": (),
    "weibull": ("beta",),
    "lognormal": ("sigma",),
    "normal": ("sigma",),
    "gamma": ("alpha",),
    "loglogistic": ("beta",),
}


def params_from_mean(distribution_id: str, mean: float, given: Mapping[str, float] | None = None) -> dict[str, float]:
    """Stored parameters of a family with the given mean (MTBF or MTTR) and known shape.

    exponential: failure_rate = 1/mean; weibull: alpha = mean / Gamma(1 + 1/beta);
    lognormal: mu = ln(mean) - sigma^2/2; normal: mu = mean; gamma: beta = mean/alpha;
    loglogistic (beta > 1): alpha = mean * sin(pi/beta) / (pi/beta).
    """
    if distribution_id not in MEAN_GIVEN:
        raise InputError("distribution_id", f"mean is accepted only for {', '.join(MEAN_GIVEN)}")
    mean = check_number(mean, "mean", 0.0, lo_open=True)
    given = dict(given or {})
    needed = MEAN_GIVEN[distribution_id]
    for name in given:
        if name not in needed:
            raise InputError(f"given.{name}", f"{distribution_id} takes {', '.join(needed) or 'nothing'} in given")
    for name in needed:
        if name not in given:
            raise InputError(f"given.{name}", f"required with mean for {distribution_id}")
    fam = family(distribution_id)
    for p in fam.params:
        if p.name in given:
            p.check(float(given[p.name]), f"given.{p.name}")
    g = {k: float(v) for k, v in given.items()}
    if distribution_id == "exponential":
        return {"failure_rate": 1.0 / mean}
    if distribution_id == "weibull":
        return {"alpha": mean / math.gamma(1.0 + 1.0 / g["beta"]), "beta": g["beta"]}
    if distribution_id == "lognormal":
        return {"mu": math.log(mean) - g["sigma"] ** 2 / 2.0, "sigma": g["sigma"]}
    if distribution_id == "normal":
        return {"mu": float(mean), "sigma": g["sigma"]}
    if distribution_id == "gamma":
        return {"alpha": g["alpha"], "beta": mean / g["alpha"]}
    if g["beta"] <= 1.0:
        raise InputError("given.beta", "loglogistic needs beta > 1 for its mean to exist")
    b = math.pi / g["beta"]
    return {"alpha": mean * math.sin(b) / b, "beta": g["beta"]}


