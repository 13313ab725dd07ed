"""Simulations split over a `dask.distributed` cluster, merged to the same bits as a local run.

A run is defined by (diagram, options, seed, replication range), and the engine's
accumulators are exact fixed-point sums, so the range can be cut into chunks anywhere, each
chunk run on any machine, and the chunks merged in order: the result is the local run's to
the bit, whatever the cluster's size or the order chunks finish in. A chunk runs on one
engine thread; the cluster runs as many chunks at once as it has worker threads.

What a cluster adds, and how it is handled:
- a worker that dies takes its running chunks with it: the scheduler runs them again
  elsewhere (a chunk's result depends only on its range, so a rerun gives the same numbers,
  and each chunk is merged once, by its range, so nothing is lost or counted twice);
- progress is reported to the caller's `RunControl` as chunks finish;
- cancelling the control cancels the chunks not started and raises a cluster-wide event that
  stops the running ones within one replication, then raises `Cancelled`;
- a precision run (`target_half_width`) runs the same batches as the local engine (200 first,
  then the same growth rule), each batch spread over the cluster, so it stops at the same
  replication count with the same numbers.

Give `cluster` as a `distributed.Client`, a cluster object (e.g. `LocalCluster`), or a
scheduler address ("tcp://host:8786"); the service takes the address from
`BATHTUB_DASK_SCHEDULER`.
"""

from __future__ import annotations

import json
import math
import threading
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

from bathtub.engine import binding
from bathtub.engine.binding import Cancelled, RunControl
from bathtub.errors import EngineError

__all__ = ["availability", "chunk_ranges", "mission"]

CHUNKS_PER_THREAD = 4  # enough pieces that a slow or lost worker does not hold up the end
MIN_CHUNK = 64  # replications: below this, scheduling costs more than the work
FIRST_BATCH = 200  # as the engine's precision runs (availability/runs.rs run_to_precision_with)
POLL_S = 0.2  # how often the waiting caller looks at its control, and a chunk at the stop event


def chunk_ranges(start: int, count: int, parts: int) -> list[tuple[int, int]]:
    """[start, start + count) cut into at most `parts` adjacent (start, count) pieces of
    near-equal size, none smaller than MIN_CHUNK unless the whole range is."""
    parts = max(1, min(parts, count // MIN_CHUNK or 1))
    base, extra = divmod(count, parts)
    out, at = [], start
    for i in range(parts):
        n = base + (1 if i < extra else 0)
        out.append((at, n))
        at += n
    return out


def _engine_version() -> str:
    return binding.ENGINE_VERSION


def _stop_watch(event_name: str, control: RunControl) -> Callable[[], None]:
    """Inside a chunk on a worker: cancel the chunk's engine call when the run's stop event is
    set. Returns the function that ends the watch."""
    from distributed import Event, get_client

    event = Event(event_name, client=get_client())
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL_S):
            if event.is_set():
                control.cancel()
                return

    threading.Thread(target=watch, name="bathtub-chunk-stop", daemon=True).start()
    return done.set


def _availability_chunk(text: str, horizon: float, grid: int, crews: int, seed: int, variance_reduction: str,
                        plain_from: int | None, start: int, count: int, event_name: str) -> tuple[str, str]:
    """One chunk of an availability run, on a worker: the engine's (mergeable state, summary)."""
    ctl = RunControl()
    end_watch = _stop_watch(event_name, ctl)
    try:
        return binding.simulate_availability(text, horizon, grid, crews, seed, start, replications=count,
                                             target_half_width=None, max_replications=max(count, 2), threads=1,
                                             control=ctl, variance_reduction=variance_reduction,
                                             plain_from=plain_from)
    finally:
        end_watch()


def _mission_chunk(text: str, mission_time: float, grid: int, seed: int, start: int, count: int,
                   event_name: str) -> tuple[str, str]:
    ctl = RunControl()
    end_watch = _stop_watch(event_name, ctl)
    try:
        return binding.simulate_mission(text, mission_time, grid, seed, start, count, threads=1, control=ctl)
    finally:
        end_watch()


@contextmanager
def _client(cluster: Any):
    """A distributed.Client for `cluster` (a Client is used as is; anything else is connected
    to for the run and closed after)."""
    from distributed import Client

    if isinstance(cluster, Client):
        yield cluster
        return
    address = cluster if isinstance(cluster, str) else getattr(cluster, "scheduler_address", None)
    if not isinstance(address, str):
        raise EngineError("cluster: give a distributed.Client, a cluster object or a scheduler address")
    try:
        client = Client(address, set_as_default=False, timeout=30)
    except (OSError, TimeoutError) as e:
        raise EngineError(f"cluster: cannot reach the dask scheduler at {address}: {e}") from None
    try:
        yield client
    finally:
        client.close()


def _threads(client: Any) -> int:
    """Worker threads in the cluster now (chunks are sized to keep them all busy)."""
    return max(1, sum(int(n) for n in client.nthreads().values()))


class _Run:
    """The chunks of one run on one client: submitted, watched, merged in range order."""

    def __init__(self, client: Any, control: RunControl, merge: Callable[[str, str], tuple[str, str]]) -> None:
        from distributed import Event

        self.client, self.control, self.merge = client, control, merge
        self.event_name = f"bathtub-stop-{uuid.uuid4().hex}"
        self.event = Event(self.event_name, client=client)
        self.threads = _threads(client)
        self.done = 0
        # Bit-identical merging needs the same engine everywhere: a worker with another
        # version would give other numbers for the same replications.
        versions = client.run(_engine_version)
        other = {w: v for w, v in versions.items() if v != binding.ENGINE_VERSION}
        if other:
            raise EngineError(f"cluster: workers run another engine version than this one "
                              f"({binding.ENGINE_VERSION}): {other}; install the same bathtub on every worker")
        if not versions:
            raise EngineError("cluster: the scheduler has no workers")

    def batch(self, submit: Callable[[int, int], Any], start: int, count: int, planned: int) -> tuple[str, str]:
        """Run [start, start + count) as chunks; the merged (state, summary)."""
        from distributed.client import FutureCancelledError

        ranges = chunk_ranges(start, count, self.threads * CHUNKS_PER_THREAD)
        futures = {submit(s, n): (s, n) for s, n in ranges}
        states: dict[int, tuple[str, str]] = {}
        pending = set(futures)
        wake = threading.Event()  # set by each finishing chunk, so its progress shows at once
        for f in futures:
            f.add_done_callback(lambda _f: wake.set())
        self.control.report(self.done, planned)
        try:
            while pending:
                if self.control.cancelled:
                    self.event.set()
                    self.client.cancel(list(pending))
                    raise Cancelled("the run was cancelled")
                wake.wait(POLL_S)
                wake.clear()
                for f in [f for f in pending if f.done()]:
                    pending.discard(f)
                    s, n = futures[f]
                    states[s] = f.result()  # the engine's refusal, or KilledWorker after retries, rises here
                    self.done += n
                self.control.report(self.done, planned)
        except Cancelled:
            raise
        except (EngineError, FutureCancelledError) as e:
            raise EngineError(f"cluster run: {e}") from None
        except Exception as e:  # KilledWorker, lost scheduler: said plainly, never half a result
            raise EngineError(f"cluster run failed: {type(e).__name__}: {e}") from None
        merged: tuple[str, str] | None = None
        for s in sorted(states):  # adjacent ranges in order: the engine merges only those
            merged = states[s] if merged is None else self.merge(merged[0], states[s][0])
        assert merged is not None
        return merged


def _submitter(client: Any, fn: Callable[..., tuple[str, str]], run: _Run, *args: Any) -> Callable[[int, int], Any]:
    def submit(start: int, count: int) -> Any:
        # pure=False: a chunk is never taken from another run's cache; a worker's death is
        # handled by the scheduler, which runs the chunk again elsewhere (allowed_failures).
        return client.submit(fn, *args, start, count, run.event_name, pure=False)

    return submit


def _relative_half_width(summary: str) -> float:
    rel = json.loads(summary)["relative_half_width"]
    return math.inf if rel is None else float(rel)


def availability(cluster: Any, text: str, horizon: float, grid: int, crews: int, seed: int, start: int,
                 replications: int | None, target: float | None, max_replications: int,
                 control: RunControl, variance_reduction: str = "none") -> tuple[str, str]:
    """`binding.simulate_availability`'s (state, summary), computed on the cluster."""
    with _client(cluster) as client:
        run = _Run(client, control, binding.merge_availability)
        def submitter(plain_from: int | None) -> Callable[[int, int], Any]:
            return _submitter(client, _availability_chunk, run, text, horizon, grid, crews, seed, variance_reduction,
                              plain_from)

        submit = submitter(None)
        if target is None:
            assert replications is not None
            return run.batch(submit, start, replications, replications)
        # The local engine's precision schedule, batch for batch (availability/runs.rs).
        cap = max_replications
        done = min(cap, FIRST_BATCH)
        state, summary = run.batch(submit, start, done, done)
        while True:
            rel = _relative_half_width(summary)
            if rel <= target or done >= cap:
                return state, summary
            if math.isfinite(rel):
                ratio = rel / target
                need = math.ceil(done * (ratio * ratio) * 1.1)
            else:
                need = done * 4
            nxt = min(max(need, done + done // 4), done * 4, cap) - done
            # An antithetic or stratified run whose pilot sets do not pay turns to plain streams
            # here, as the local engine does (availability/runs.rs, `to_precision_turning`).
            submit = submitter(binding.availability_plain_from(state))
            more, _ = run.batch(submit, start + done, nxt, done + nxt)
            state, summary = binding.merge_availability(state, more)
            done += nxt


def mission(cluster: Any, text: str, mission_time: float, grid: int, seed: int, start: int, replications: int,
            control: RunControl) -> tuple[str, str]:
    """`binding.simulate_mission`'s (state, summary), computed on the cluster."""
    with _client(cluster) as client:
        run = _Run(client, control, binding.merge_mission)
        submit = _submitter(client, _mission_chunk, run, text, mission_time, grid, seed)
        return run.batch(submit, start, replications, replications)
