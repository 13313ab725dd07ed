"""Leases on upload links being received, so a send cut off by a crash does not burn its link.

A send marks its link `receiving` with the process that receives it (`receiver`, the job
runner's instance id), a lease (`lease_until`) and the name of its partial file (`part`, unique
to the send). While the bytes arrive, the lease is renewed every heartbeat (the jobs' lease and
heartbeat settings), each renewal conditional on the link's version, as is the send's last
write. The rule: any instance may give a link back to `unused` (and remove its partial file)
once its lease ran out — at start-up and every minute — never before, so a restart of one
process never touches another's live send, on one store shared by several. A process that
stalled past its lease finds its link changed under it and drops its send (409).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from bathtub_api.ids import now

log = logging.getLogger("bathtub_api.uploads")
LEASE_KEYS = ("receiver", "lease_until", "part")


def unused(body: dict[str, Any]) -> dict[str, Any]:
    """The link's body back as before the send: unused, no lease."""
    return {**{k: v for k, v in body.items() if k not in LEASE_KEYS}, "state": "unused"}


class ReceivingLease:
    """The lease of one send on one link, renewed in the background until `stop()`."""

    def __init__(self, store: Any, item: dict[str, Any], body: dict[str, Any], version: int, lease_s: float,
                 every_s: float) -> None:
        self.store, self.item, self.body = store, item, body
        self.version = version  # the link's version after our last write
        self.lease_s, self.every_s = lease_s, every_s
        self.lost = False  # the link was reset under us (our lease had run out)
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._renew())

    async def stop(self) -> None:
        """Stop renewing, after any renewal under way (so `version` is the link's)."""
        self._stop.set()
        if self._task is not None:
            await self._task

    async def write(self, body: dict[str, Any]) -> bool:
        """Replace the link's body if it is still ours; False (and `lost`) if it was reset. A
        wrong token tried on the link meanwhile also moved its version on: still ours then (same
        partial file), and the count of wrong tokens is kept."""
        item = self.item
        for _ in range(5):
            if await self.store.update_item(item["owner"], "upload", item["id"], item["name"], body,
                                            if_version=self.version):
                self.version += 1
                return True
            fresh = await self.store.find_item("upload", item["id"])
            if fresh is None or fresh["body"].get("part") != self.body["part"]:
                break
            self.version = fresh["version"]
            self.body = {**self.body, "attempts": fresh["body"]["attempts"]}
            body = {**body, "attempts": fresh["body"]["attempts"]}
        self.lost = True
        return False

    async def _renew(self) -> None:
        while not self.lost:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.every_s)
            if self._stop.is_set():
                return
            try:
                await self.write({**self.body, "lease_until": now() + self.lease_s})
            except Exception as e:  # a store hiccup (or a full store): the next heartbeat tries again
                log.warning("upload %s: lease not renewed: %s", self.item["id"], e)


async def reset_interrupted(store: Any, directory: Path) -> int:
    """Give back to `unused` the links left `receiving` whose lease ran out (the process that
    received died or stalled), removing their partial files; how many were reset. A link the
    code before leases left receiving has no lease: it counts as run out."""
    n = 0
    for item in await store.receiving_uploads():
        body = item["body"]
        if body.get("lease_until", 0.0) >= now():
            continue  # a live send: its process renews the lease
        # Reset first, then remove the file: if the send renewed meanwhile, the reset fails and
        # its file stays; a send that starts after the reset writes a file of its own name.
        if not await store.update_item(item["owner"], "upload", item["id"], item["name"], unused(body),
                                       if_version=item["version"]):
            continue
        with contextlib.suppress(FileNotFoundError):
            (directory / body.get("part", f"{item['id']}.part")).unlink()
        log.warning("upload %s: a send cut off (by %s) left it receiving; the link is usable again", item["id"],
                    body.get("receiver", "an older version"))
        n += 1
    return n
