"""Rate limits: the token bucket, the client address the per-address limits key on (read through
configured trusted proxies), and the per-address limit on failed authentication.

The failure limit counts only credentials that did not check out (a bad or revoked token, a
forged or ended session cookie, an unknown share link) and never refuses one that does: behind
a proxy every user shares one address, and one user's typos (or an attacker's guesses) must not
lock the others out. See `Failures` for how guessing stays expensive all the same.
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import re
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web

from bathtub_api.config import Network
from bathtub_api.errors import ApiError
from bathtub_api.keys import CONFIG

FAILURES_WHAT = "bad-token requests per client address"


class RateLimiter:
    """A token bucket per key (an API token, or a client address for bad tokens):
    `per_minute` requests a minute, bursts up to that."""

    def __init__(self, per_minute: int, max_keys: int = 100_000) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.max_keys = max_keys
        self._buckets: dict[str, tuple[float, float]] = {}

    def _tokens(self, key: str, t: float) -> float:
        tokens, last = self._buckets.get(key, (self.capacity, t))
        return min(self.capacity, tokens + (t - last) * self.rate)

    def check(self, key: str, at: float | None = None) -> float:
        """0 if the request may go (and it is counted), else the seconds to wait before retrying."""
        t = time.monotonic() if at is None else at
        tokens = self._tokens(key, t)
        if key not in self._buckets and len(self._buckets) >= self.max_keys:
            self._prune(t)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, t)
            return 0.0
        self._buckets[key] = (tokens, t)
        return (1.0 - tokens) / self.rate

    def wait(self, key: str, at: float | None = None) -> float:
        """The seconds before a request under `key` may go (0: now), without counting one."""
        if key not in self._buckets:
            return 0.0
        tokens = self._tokens(key, time.monotonic() if at is None else at)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def size(self) -> int:
        """How many keys have a bucket (bounded by max_keys)."""
        return len(self._buckets)

    def _prune(self, t: float) -> None:
        """Forget keys whose buckets have refilled (they behave as new ones), so many keys
        (addresses) cannot grow the table without bound; if none have, forget them all."""
        full = [k for k in self._buckets if self._tokens(k, t) >= self.capacity]
        for k in full:
            del self._buckets[k]
        if not full:
            self._buckets.clear()


def too_many(limiter: RateLimiter, wait: float, what: str) -> ApiError:
    return ApiError(
        429,
        f"rate limit exceeded ({int(limiter.capacity)} {what} a minute); retry in {wait:.1f} s",
        {"Retry-After": str(max(1, math.ceil(wait)))},
    )


@dataclass
class _Gate:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class Failures:
    """Failed authentications per client address, and the gate their store lookups pass.

    Every credential is looked up before the address's failure count is consulted, so a valid
    one always goes through, whatever its neighbours behind the same address sent. Guessing
    stays expensive in the two ways the old check-before-lookup gave:
    - a wrong guess from an address past its limit answers 429 (and counts again, so a
      steady trickle keeps it there) and never says more than that;
    - the store lookups a limited address can cause stay bounded: its uncached lookups run one
      at a time (`lookup`), so a flood from it holds at most one store connection, whatever
      its rate, instead of the pool. A good token is cached after its first lookup
      (`TokenCache`) and skips the gate; a session cookie is HMAC-checked before any lookup, so
      a forged one costs nothing; a valid credential from a limited address is at worst
      delayed behind that address's queued lookups, never refused.
    Refusing before the lookup would bound the store load more tightly but is exactly what
    locked valid tokens out (issue 26)."""

    def __init__(self, per_minute: int, max_keys: int = 100_000) -> None:
        self.limiter = RateLimiter(per_minute, max_keys)
        self._gates: dict[str, _Gate] = {}

    def limited(self, address: str) -> bool:
        return self.limiter.wait(address) > 0

    @asynccontextmanager
    async def lookup(self, address: str) -> AsyncIterator[None]:
        """Around the store lookup of a credential from `address`: at once for an address within
        its limit, one at a time per address past it."""
        if not self.limited(address):
            yield
            return
        gate = self._gates.setdefault(address, _Gate())
        gate.users += 1
        try:
            async with gate.lock:
                yield
        finally:
            gate.users -= 1
            if gate.users == 0:  # the table holds only addresses with lookups in flight
                del self._gates[address]

    def failed(self, address: str) -> float:
        """Count one failed authentication from `address`: 0 while it is within its limit (the
        caller answers its own refusal, a 401 or 404), else the seconds it must wait (429)."""
        return self.limiter.check(address)

    def refuse(self, address: str) -> None:
        """Count one failed authentication; past the limit, the 429 that answers it."""
        wait = self.failed(address)
        if wait > 0:
            raise too_many(self.limiter, wait, FAILURES_WHAT)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped  # a dual-stack socket's view of an IPv4 peer
    return ip


def normal_hop(text: str) -> str:
    """One hop of a forwarding header as a limiter key: the IP address without brackets or port,
    normalised (`::ffff:10.0.0.1` is 10.0.0.1); anything else (`unknown`, an obfuscated `_node`)
    as sent, cut short so it cannot bloat the limiter's table."""
    value = text.strip()
    if value.startswith("["):  # "[v6]" or "[v6]:port"
        value = value[1:].partition("]")[0]
    elif value.count(":") == 1:  # "v4:port"
        value = value.partition(":")[0]
    ip = _address(value)
    return str(ip) if ip is not None else text.strip()[:64]


def _trusted(hop: str, networks: Sequence[Network]) -> bool:
    ip = _address(hop)
    return ip is not None and any(ip in net for net in networks)


_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
# RFC 7239 values are a token or a quoted-string; unquoted "host:port" and "[v6]" are read too
# (some proxies write them), never a quote, comma, semicolon or space.
_PAIR = re.compile(rf'({_TOKEN})=("(?:[^"\\]|\\.)*"|[^;,"\s]+)')
_OWS = re.compile(r"[ \t]*")


def forwarded_for(lines: Sequence[str]) -> list[str] | None:
    """The `for=` of each element of RFC 7239 Forwarded header lines, in order (an element
    without one is `unknown`); None if any line breaks the grammar. A malformed line cannot be
    split into hops with certainty (a client's unterminated quote could swallow what the proxy
    appended), so the caller then trusts none of it."""
    hops: list[str] = []
    for line in lines:
        pos, end = 0, len(line)
        element: str | None = None  # None: no pair yet (an empty element, which is skipped)
        while True:
            pos = _OWS.match(line, pos).end()  # type: ignore[union-attr]
            if pos < end and line[pos] not in ",;":
                pair = _PAIR.match(line, pos)
                if pair is None:
                    return None
                if pair[1].lower() == "for":
                    value = pair[2]
                    element = re.sub(r"\\(.)", r"\1", value[1:-1]) if value.startswith('"') else value
                elif element is None:
                    element = "unknown"
                pos = _OWS.match(line, pair.end()).end()  # type: ignore[union-attr]
            if pos >= end or line[pos] == ",":
                if element is not None:
                    hops.append(element)
                element = None
                if pos >= end:
                    break
            elif line[pos] != ";":
                return None
            pos += 1
    return hops


def client_address(peer: str, header_lines: Sequence[str], header: str, networks: Sequence[Network]) -> str:
    """The address the per-address limits key on. The direct peer, unless it is a trusted proxy:
    then the right-most hop of the forwarding header that is not itself a trusted proxy (the
    left part of the header is whatever the client sent; only what trusted proxies appended is
    believed). A header from an untrusted peer is never read."""
    if not networks or not _trusted(peer, networks):
        return peer
    if header.lower() == "forwarded":
        parsed = forwarded_for(header_lines)
        if parsed is None:
            return peer
        hops = [normal_hop(h) for h in parsed]
    else:  # X-Forwarded-For: comma lists, one or more lines
        hops = [normal_hop(h) for line in header_lines for h in line.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            return hop
    return hops[0] if hops else peer  # every hop a trusted proxy: the farthest one is the client


def request_address(request: web.Request) -> str:
    """The client address of a request, through the configured trusted proxies."""
    config = request.app[CONFIG]
    peer = normal_hop(request.remote or "-")
    networks = config.trusted_networks
    if not networks:
        return peer
    header = config.trusted_proxy_header
    return client_address(peer, request.headers.getall(header, []), header, networks)
