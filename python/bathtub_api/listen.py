"""Why the service cannot listen, said in one line: shared by the single-process start (cli)
and each worker process (workers), which would otherwise import each other."""

from __future__ import annotations

import errno

from bathtub_api.config import Config


def listen_refusal(config: Config, e: OSError) -> str | None:
    """The one plain line for an address the service cannot listen on; None for other errors."""
    reasons = {errno.EADDRINUSE: "the port is in use", errno.EACCES: "permission denied",
               errno.EADDRNOTAVAIL: "no such address here"}
    if e.errno not in reasons:
        return None
    return (f"cannot listen on {config.host}:{config.port}: {reasons[e.errno]} "
            "(choose another with --host/--port or BATHTUB_HOST/BATHTUB_PORT)")
