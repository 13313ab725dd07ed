"""Photo decoding with a bound on memory: at most `slots` decodes at once, each on one of that
many threads of its own, with the freed heap handed back to the system after each.

Why its own threads: asyncio's default executor grows to min(32, cores + 4) threads, and glibc
gives threads that allocate at once malloc arenas of their own; freed pixels stay mapped in an
arena until its top is free (glibc trims an arena only from the top), so memory a decode freed
could stay with the process (the audit saw 1.4 GB kept). With `slots` threads there are at most
`slots` such arenas, and `malloc_trim(0)` after each decode returns every arena's free pages.
Measured (bench/photo_memory.py, three 64 MP JPEGs): kept after the answers 262 MB before these
bounds, 210-326 MB with the bounds but no trim, 190-208 MB with it (idle: 183 MB).

A photo that finds every slot busy waits up to `wait_s` for one, then is refused with 503 and
Retry-After: queueing more would only hold more request bodies in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from bathtub_api.errors import ApiError

T = TypeVar("T")
RETRY_AFTER_S = 5  # a 64 MP decode takes one to a few seconds on one core


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


TRIM = _malloc_trim()


def _run_and_trim(fn: Callable[..., T], *args: Any) -> T:
    try:
        return fn(*args)
    finally:
        if TRIM is not None:
            TRIM(0)


class PhotoDecoder:
    """At most `slots` decodes at once; a caller waits up to `wait_s` for a turn."""

    def __init__(self, slots: int, wait_s: float) -> None:
        self.slots = slots
        self.wait_s = wait_s
        self.waiting = 0  # callers waiting for a slot now
        self._free = asyncio.Semaphore(slots)
        self._pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="bathtub-photo")

    @property
    def full(self) -> bool:
        """Every slot is taken (or promised to a waiter)."""
        return self._free.locked()

    def refusal(self) -> ApiError:
        return ApiError(503, f"file: this service cleans at most {self.slots} photo(s) at once "
                             f"(BATHTUB_PHOTO_DECODES) and none finished within {self.wait_s:g} s "
                             f"(BATHTUB_PHOTO_DECODE_WAIT_SECONDS); send it again in {RETRY_AFTER_S} s",
                        {"Retry-After": str(RETRY_AFTER_S)})

    async def acquire(self) -> None:
        """Take a slot, waiting up to `wait_s`; 503 when none came free."""
        if not self._free.locked():
            await self._free.acquire()  # free: returns at once
            return
        if self.wait_s <= 0:
            raise self.refusal()
        self.waiting += 1
        try:
            async with asyncio.timeout(self.wait_s):
                await self._free.acquire()
        except TimeoutError:
            raise self.refusal() from None
        finally:
            self.waiting -= 1

    def release(self) -> None:
        self._free.release()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on a decode thread once a slot is free. The slot is given back when the
        thread is done, not when the caller stops waiting (a client that hangs up does not
        free a slot whose decode still holds its memory)."""
        await self.acquire()
        loop = asyncio.get_running_loop()
        try:
            work = self._pool.submit(_run_and_trim, fn, *args)
        except BaseException:
            self.release()
            raise

        def done(_: Future[T]) -> None:  # on the decode thread (or here, if cancelled before it ran)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits for a slot
                loop.call_soon_threadsafe(self.release)

        work.add_done_callback(done)
        return await asyncio.wrap_future(work)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
