"""`bathtub serve --workers N`: N service processes listening on one port.

One process serves on one core (Python's event loop runs one request at a time), so on a
machine with more cores the service scales out as processes. Every worker binds the same
address with SO_REUSEPORT and the kernel spreads incoming connections across them; each is
a whole service of its own (its store connections, its job runner and pool) on the one
shared store, which already works across instances: jobs are leased with a heartbeat, and
quotas, idempotency keys and sessions live in the store. What is per process: the token
cache (a revocation reaches the others within `token_cache_seconds`) and the rate limit
(each process counts its own, so a token's limit is per process).

The parent only supervises: it starts the workers, says "serving on" once every one
listens, restarts one that dies, and on SIGTERM or SIGINT passes one SIGTERM to each (each
then stops as a single service does: requests in flight finish within the grace, running
jobs are handed back to the queue) and waits for them. Workers sit in their own process
group, so a Ctrl-C reaches only the parent, which stops them once, in order; and they die
with the parent however it ends (parent-death signal, kill -9 included).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import time
from multiprocessing.connection import Connection, wait
from typing import Any

from bathtub_api.config import Config

log = logging.getLogger("bathtub_api.workers")

PR_SET_PDEATHSIG = 1
RESTART_PAUSE_S = 1.0  # between restarts of one worker slot: a crash loop is not a busy loop
LOG_FORMAT = "%(asctime)s %(levelname)s %(processName)s %(name)s: %(message)s"


def _die_with_parent(parent: int) -> None:
    """SIGTERM (a graceful stop) when the supervising parent ends, however it ends; and if
    it already ended before this ran, stop now."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(0)


def _worker(config: Config, parent: int, report: Connection) -> None:
    """One worker process: a whole service on the shared port; says "ready" (or why it cannot
    listen) on `report`."""
    from aiohttp import web

    from bathtub_api.app import create_app
    from bathtub_api.listen import listen_refusal

    os.setpgrp()  # out of the terminal's process group: Ctrl-C goes to the parent alone
    _die_with_parent(parent)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)

    def ready(_: str) -> None:
        report.send(("ready", ""))

    try:
        web.run_app(create_app(config), host=config.host, port=config.port, print=ready, access_log=None,
                    shutdown_timeout=config.shutdown_grace_seconds, reuse_port=True)
    except OSError as e:
        refusal = listen_refusal(config, e)
        if refusal is None:
            raise
        report.send(("refused", refusal))
        sys.exit(2)


class Supervisor:
    """The parent: starts `config.workers` processes, restarts any that dies, stops them all."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no state forked from ours
        self.procs: dict[int, Any] = {}  # slot -> Process
        self.reports: dict[int, Connection] = {}
        self.stopping = False

    def _start(self, slot: int) -> None:
        receive, send = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=_worker, args=(self.config, os.getpid(), send), name=f"worker-{slot}")
        proc.start()
        send.close()
        self.procs[slot], self.reports[slot] = proc, receive

    def _until_ready(self, slot: int) -> str | None:
        """None once the worker listens, else why it cannot (its refusal, or its exit)."""
        proc, report = self.procs[slot], self.reports[slot]
        while not self.stopping:
            if wait([report, proc.sentinel], timeout=0.2):
                try:
                    kind, text = report.recv()
                except EOFError:
                    proc.join()
                    return f"worker {slot} exited during start-up (code {proc.exitcode}); see its log above"
                return None if kind == "ready" else text
        return None

    def _stop_signal(self, signum: int, frame: Any) -> None:
        self.stopping = True

    def run(self, listening: Any) -> int:
        """Start, report `listening()` once all listen, supervise until a stop signal; the exit code."""
        signal.signal(signal.SIGTERM, self._stop_signal)
        signal.signal(signal.SIGINT, self._stop_signal)
        try:
            for slot in range(self.config.workers):  # all at once: start-up is mostly imports
                self._start(slot)
            for slot in range(self.config.workers):
                refusal = self._until_ready(slot)
                if refusal is not None:
                    print(f"bathtub: {refusal}", file=sys.stderr)
                    return 2
            if not self.stopping:
                listening()
            self._supervise()
            return 0
        finally:
            self._stop_all()

    def _supervise(self) -> None:
        last_start = dict.fromkeys(self.procs, time.monotonic())
        while not self.stopping:
            wait([p.sentinel for p in self.procs.values()], timeout=0.5)
            for slot, proc in list(self.procs.items()):
                if proc.is_alive() or self.stopping:
                    continue
                log.warning("worker %d (pid %d) exited with code %s; starting another", slot, proc.pid,
                            proc.exitcode)
                time.sleep(max(0.0, last_start[slot] + RESTART_PAUSE_S - time.monotonic()))
                self.reports[slot].close()
                self._start(slot)
                last_start[slot] = time.monotonic()

    def _stop_all(self) -> None:
        """One SIGTERM each (a second could interrupt a worker's own graceful stop), then wait
        out the grace and the job hand-back; a worker still there after that is killed."""
        for proc in self.procs.values():
            if proc.is_alive():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.config.shutdown_grace_seconds + 30.0
        for proc in self.procs.values():
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                log.error("worker pid %d did not stop in time; killing it", proc.pid)
                proc.kill()
                proc.join()
        for report in self.reports.values():
            report.close()
