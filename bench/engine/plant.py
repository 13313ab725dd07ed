"""The benchmark plant, shared by the engine bench and its peers: two parallel trains of
`per_train` exponential blocks in series (MTTF 1000 h, MTTR 10 h, repairs start at once)."""

from __future__ import annotations

from typing import Any

MTTF = 1000.0
MTTR = 10.0
HORIZON = 10_000.0


def two_trains(per_train: int = 5) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}]
    edges = []
    for train in "ab":
        prev = "in"
        for i in range(per_train):
            nid = f"{train}{i}"
            nodes.append({
                "id": nid,
                "type": "component",
                "model": {"distribution_id": "exponential", "mean": MTTF},
                "repair": {"distribution_id": "exponential", "mean": MTTR},
            })
            edges.append({"source": prev, "target": nid})
            prev = nid
        edges.append({"source": prev, "target": "out"})
    return {"nodes": nodes, "edges": edges}


def exact_mean_availability(per_train: int = 5, horizon: float = HORIZON) -> float:
    """Interval availability from the closed form (independent blocks, repair at once)."""
    import numpy as np
    from scipy import integrate

    lam, mu = 1.0 / MTTF, 1.0 / MTTR

    def point(t: float) -> float:
        a = mu / (lam + mu) + lam / (lam + mu) * np.exp(-(lam + mu) * t)
        train = a**per_train
        return 1.0 - (1.0 - train) ** 2

    return integrate.quad(point, 0.0, horizon, limit=200)[0] / horizon
