"""Life–stress relationships and life distributions of accelerated life tests, as data.

Every model here is log-linear in transformed stresses: the life L(S) obeys

    ln L(S) = offset(S) + a + sum_j b_j * g_j(S)

and the unit's log time is ln T = ln L(S) + sigma * W with W standard smallest extreme value
(Weibull life, shape beta = 1/sigma; L is the characteristic life alpha), standard normal
(lognormal life; L is the median e^mu) or SEV with sigma = 1 (exponential life; L is the mean).

Relationships (textbook forms: Nelson, *Accelerated Testing*, 1990; ReliaSoft ALTA):

==========================  =========================================  ================
id                          life L(S)                                  reported params
==========================  =========================================  ================
arrhenius                   A * exp(B / T)          (T in kelvin)      A, B (Ea = B*k)
eyring                      (1/T) * exp(-(A - B / T))                  A, B
power (inverse power law)   A * S**(-n)                                A, n
exponential                 A * exp(B * S)                             A, B
dual_exponential            A * exp(B / T + C / H)  (temperature–      A, B, C
                            humidity, ReliaSoft's T–H)
peck                        A * exp(B / T) * H**(-n) (H: humidity)     A, B, n
temperature_nonthermal      A * exp(B / T) * U**(-n) (U: voltage,...)  A, B, n
dual_power                  A * S1**(-m) * S2**(-n)                    A, m, n
==========================  =========================================  ================

`reliability` (Reid) names these differently: its "Exponential" is our Arrhenius
(b = A, a = B), its "Power" is a * S**n (our n is minus theirs), "Power_Exponential" is our
peck/temperature_nonthermal (c = A, a = B, n = -n) and "Dual_Power" is c * S1**m * S2**n.

A model id joins life and relationship: `weibull_arrhenius`, `lognormal_power`,
`exponential_eyring`, `weibull_dual_exponential`, `weibull_peck`,
`weibull_temperature_nonthermal`, ...
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bathtub.errors import InputError

LIVES = ("weibull", "lognormal", "exponential")
BOLTZMANN_EV = 8.617333262e-5  # eV/K (CODATA 2018)


def _inv(s: np.ndarray) -> np.ndarray:
    return 1.0 / s


def _ident(s: np.ndarray) -> np.ndarray:
    return s


def _log(s: np.ndarray) -> np.ndarray:
    return np.log(s)


@dataclass(frozen=True)
class Coef:
    """How a reported parameter comes from a natural coefficient: `exp` reports e^{sign*c}
    (a positive multiplier, bounds taken on the log), otherwise sign*c (bounds symmetric)."""

    name: str
    sign: float
    exp: bool
    meaning: str


@dataclass(frozen=True)
class Relationship:
    id: str
    title: str
    stresses: int  # 1 or 2
    g: tuple[Callable[[np.ndarray], np.ndarray], ...]  # one transform per stress
    positive: tuple[bool, ...]  # stress j must be > 0 (the transform takes 1/S or ln S)
    coefs: tuple[Coef, ...]  # intercept first, then one per stress
    eyring: bool = False  # offset ln L += -ln S1

    def offset(self, s1: np.ndarray) -> np.ndarray:
        return -np.log(s1) if self.eyring else np.zeros_like(s1, dtype=float)

    def design(self, stresses: tuple[np.ndarray, ...]) -> np.ndarray:
        """The n x stresses matrix of transformed stresses g_j(S_j)."""
        return np.column_stack([g(s) for g, s in zip(self.g, stresses)])


_A = Coef("A", 1.0, True, "life multiplier")
RELATIONSHIPS: dict[str, Relationship] = {r.id: r for r in (
    Relationship("arrhenius", "Arrhenius: L = A exp(B/T)", 1, (_inv,), (True,),
                 (_A, Coef("B", 1.0, False, "activation energy over Boltzmann's constant, K"))),
    Relationship("eyring", "Eyring: L = (1/T) exp(-(A - B/T))", 1, (_inv,), (True,),
                 (Coef("A", -1.0, False, "Eyring A"), Coef("B", 1.0, False, "Eyring B, K")), eyring=True),
    Relationship("power", "Inverse power law: L = A S^-n", 1, (_log,), (True,),
                 (_A, Coef("n", -1.0, False, "stress exponent"))),
    Relationship("exponential", "Exponential: L = A exp(B S)", 1, (_ident,), (False,),
                 (_A, Coef("B", 1.0, False, "per unit of stress"))),
    Relationship("dual_exponential", "Temperature-humidity: L = A exp(B/T + C/H)", 2, (_inv, _inv), (True, True),
                 (_A, Coef("B", 1.0, False, "temperature term, K"), Coef("C", 1.0, False, "humidity term"))),
    Relationship("peck", "Peck: L = A exp(B/T) H^-n", 2, (_inv, _log), (True, True),
                 (_A, Coef("B", 1.0, False, "temperature term, K"), Coef("n", -1.0, False, "humidity exponent"))),
    Relationship("temperature_nonthermal", "Temperature-non-thermal: L = A exp(B/T) U^-n", 2, (_inv, _log),
                 (True, True),
                 (_A, Coef("B", 1.0, False, "temperature term, K"), Coef("n", -1.0, False, "non-thermal exponent"))),
    Relationship("dual_power", "Dual power: L = A S1^-m S2^-n", 2, (_log, _log), (True, True),
                 (_A, Coef("m", -1.0, False, "first stress exponent"), Coef("n", -1.0, False, "second exponent"))),
)}

MODEL_IDS = tuple(f"{life}_{rel}" for rel in RELATIONSHIPS for life in LIVES)


@dataclass(frozen=True)
class AltSpec:
    life: str
    relationship: Relationship

    @property
    def id(self) -> str:
        return f"{self.life}_{self.relationship.id}"

    @property
    def has_sigma(self) -> bool:
        return self.life != "exponential"


def parse_model(model_id: str, field: str = "distribution") -> AltSpec:
    """`weibull_arrhenius` -> AltSpec; an unknown id is an InputError listing the known ones."""
    if isinstance(model_id, str):
        life, _, rel = model_id.partition("_")
        if life in LIVES and rel in RELATIONSHIPS:
            return AltSpec(life, RELATIONSHIPS[rel])
    raise InputError(field, f"unknown ALT model {model_id!r}; known: {', '.join(MODEL_IDS)}")


def is_alt_model(model_id: object) -> bool:
    if not isinstance(model_id, str):
        return False
    life, _, rel = model_id.partition("_")
    return life in LIVES and rel in RELATIONSHIPS


def check_stresses(spec: AltSpec, stresses: tuple[np.ndarray, ...], fields: tuple[str, ...]) -> None:
    """Finite stresses, > 0 where the relationship takes 1/S or ln S."""
    for j, (s, f) in enumerate(zip(stresses, fields)):
        bad = ~np.isfinite(s)
        if bad.any():
            raise InputError(f, f"row {int(np.argmax(bad))}: stress must be a finite number")
        if spec.relationship.positive[j] and (s <= 0).any():
            i = int(np.argmax(s <= 0))
            raise InputError(f, f"row {i}: stress must be > 0 for {spec.relationship.id} (it takes "
                                f"{'1/S' if spec.relationship.g[j] is _inv else 'ln S'}); got {float(s[i])!r}")
