"""A standby group with its own single repairer (repair_one_at_a_time) against its Markov
chain: one unit repaired at a time, whatever the shared crews do."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, linalg

from bathtub.engine import simulate_availability
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, parallel, series

Z99 = 2.5758293035489


def standby(own: bool, lam: float, mu: float) -> dict:
    return {"id": "S", "type": "standby", "k": 1, "spares": 1, "cold": True, "model": exp_model(lam),
            "repair": exp_model(mu), "repair_one_at_a_time": own}


@pytest.mark.parametrize("own", [True, False])
def test_cold_pair_against_its_chain(own):
    """States = units failed (0, 1, 2); repairs at mu from 1, at mu (own repairer) or 2 mu
    (as many crews as needed) from 2. The other block keeps the shared crew busy."""
    lam, mu, horizon = 0.05, 0.1, 200.0
    q = np.array([[0, lam, 0], [mu, 0, lam], [0, mu if own else 2 * mu, 0]])
    q -= np.diag(q.sum(axis=1))

    def point(t):
        return 1 - linalg.expm(q * t)[0, 2]

    d = series(standby(own, lam, mu))
    res = simulate_availability(d, horizon=horizon, replications=20_000, seed=61, grid=6)
    mean = integrate.quad(point, 0, horizon, limit=200)[0] / horizon
    assert abs(res.mean_availability - mean) <= Z99 * res.mean_availability_std_error, (res.mean_availability, mean)
    p = np.array([point(t) for t in res.t])
    se = np.sqrt(p * (1 - p) / res.replications)
    assert np.all(np.abs(res.availability - p) <= 3.29 * se + 2.0 / res.replications)


def test_own_repairer_is_not_a_shared_crew():
    """With one shared crew tied up by a slow block, the own repairer still works at once:
    the standby group's figures are those of the chain above."""
    lam, mu, horizon = 0.05, 0.1, 200.0
    slow = block("X", exp_model(0.5), exp_model(1e-4))
    d = parallel(slow, standby(True, lam, mu))
    alone = simulate_availability(series(standby(True, lam, mu)), horizon=horizon, replications=5000, seed=62,
                                  grid=0, crews=1)
    shared = simulate_availability(d, horizon=horizon, replications=5000, seed=62, grid=0, crews=1)
    down_alone = alone.blocks[0].downtime
    down_shared = next(b for b in shared.blocks if b.id == "S").downtime
    assert abs(down_shared - down_alone) < 0.15 * down_alone


def test_refusals():
    with pytest.raises(InputError) as e:
        simulate_availability(series(block("A", exp_model(0.1), exp_model(1.0), repair_one_at_a_time=True)),
                              horizon=10.0, replications=10)
    assert e.value.field == "diagram.nodes.A.repair_one_at_a_time"
    d = series(standby(True, 0.1, 1.0) | {"costs": {"repair": 5.0}})
    with pytest.raises(InputError) as e:
        simulate_availability(d, horizon=10.0, replications=10)
    assert e.value.field == "diagram.nodes.S.costs"
