"""Why the service cannot listen, said in one line: shared by the single-process start (cli)
and each worker process (workers), which would otherwise import each other."""

from __future__ import annotations

import errno
import socket

from bathtub_api.config import Config


def listen_refusal(config: Config, e: OSError) -> str | None:
    """The one plain line for an address the service cannot listen on; None for other errors."""
    reasons = {errno.EADDRINUSE: "the port is in use", errno.EACCES: "permission denied",
               errno.EADDRNOTAVAIL: "no such address here"}
    if e.errno not in reasons:
        return None
    return (f"cannot listen on {config.host}:{config.port}: {reasons[e.errno]} "
            "(choose another with --host/--port or BATHTUB_HOST/BATHTUB_PORT)")


def address_refusal(config: Config) -> str | None:
    """Binds the address as the service will (SO_REUSEADDR and, for IPv6, V6ONLY, as asyncio
    does; SO_REUSEPORT with several workers), then lets it go: a port another program holds is
    refused at once, before the service (or each of N workers) spends seconds importing itself
    only to fail its bind.
    None when every address binds, or for a failure the bind itself will report."""
    try:
        infos = socket.getaddrinfo(config.host, config.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return None  # an unknown host name: the server's own start says so, as before
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if config.workers > 1:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:  # as asyncio binds it: IPv6 only, IPv4 has its own socket
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as e:
                refusal = listen_refusal(config, e)
                if refusal is not None:
                    return refusal
    return None
