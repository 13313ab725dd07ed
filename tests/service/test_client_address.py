"""The client address the per-address limit on failed authentication keys on: the peer's own,
unless the peer is a configured trusted proxy; then the right-most hop of its forwarding header
(X-Forwarded-For, or RFC 7239 Forwarded) that is not itself a trusted proxy."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bathtub_api.app import create_app
from bathtub_api.cli import main
from bathtub_api.config import Config
from bathtub_api.throttle import Failures, client_address, forwarded_for

BAD = "bt_" + "x" * 43
PROXIES = Config(trusted_proxies=("10.0.0.0/8", "2001:db8::1")).trusted_networks


async def _statuses(client: Any, headers: dict[str, str], n: int) -> list[int]:
    out = []
    for _ in range(n):
        async with client.post("/api/v1/guide", json={}, headers={"Authorization": f"Bearer {BAD}", **headers}) as r:
            out.append(r.status)
    return out


async def test_clients_behind_a_trusted_proxy_are_limited_apart(aiohttp_client: Any, database_url: str) -> None:
    # The test client connects from 127.0.0.1: here that is the trusted proxy.
    config = Config(database_url=database_url, bad_token_limit_per_minute=2, token_cache_seconds=0.0,
                    trusted_proxies=("127.0.0.1",))
    client = await aiohttp_client(create_app(config))
    first = {"X-Forwarded-For": "203.0.113.7"}
    assert await _statuses(client, first, 3) == [401, 401, 429]
    # Another client behind the same proxy has its own count; so has the first's spoofed left part.
    assert await _statuses(client, {"X-Forwarded-For": "203.0.113.8"}, 1) == [401]
    assert await _statuses(client, {"X-Forwarded-For": "198.51.100.1, 203.0.113.9"}, 1) == [401]
    # A client cannot escape its count by prefixing a made-up hop: the right-most one is its own.
    assert await _statuses(client, {"X-Forwarded-For": "198.51.100.2, 203.0.113.7"}, 1) == [429]
    # Nor with a Forwarded header, which this proxy does not write (X-Forwarded-For is configured).
    assert await _statuses(client, {**first, "Forwarded": "for=198.51.100.3"}, 1) == [429]


async def test_an_untrusted_peers_forwarding_headers_are_ignored(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url, bad_token_limit_per_minute=2, token_cache_seconds=0.0,
                    trusted_proxies=("10.0.0.0/8",))  # not 127.0.0.1, the test client's address
    client = await aiohttp_client(create_app(config))
    statuses = [(await _statuses(client, {"X-Forwarded-For": f"203.0.113.{i}"}, 1))[0] for i in range(3)]
    assert statuses == [401, 401, 429]  # one address, whatever each request claimed
    config = Config(database_url=database_url, bad_token_limit_per_minute=2, token_cache_seconds=0.0)
    client = await aiohttp_client(create_app(config))  # the default: no proxy trusted at all
    statuses = [(await _statuses(client, {"Forwarded": f"for=203.0.113.{i}"}, 1))[0] for i in range(3)]
    assert statuses == [401, 401, 429]


async def test_a_forwarded_header_from_a_trusted_proxy(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url, bad_token_limit_per_minute=1, token_cache_seconds=0.0,
                    trusted_proxies=("127.0.0.0/8",), trusted_proxy_header="Forwarded")
    client = await aiohttp_client(create_app(config))
    one = {"Forwarded": 'for="[2001:db8:cafe::17]:4711";proto=https'}
    assert await _statuses(client, one, 2) == [401, 429]
    assert await _statuses(client, {"Forwarded": "for=192.0.2.60;proto=http;by=203.0.113.43"}, 1) == [401]
    assert await _statuses(client, {"X-Forwarded-For": "192.0.2.61", **one}, 1) == [429]  # not the configured one


@pytest.mark.parametrize(("lines", "hops"), [
    (["for=192.0.2.43"], ["192.0.2.43"]),
    (['For="[2001:db8:cafe::17]:4711"'], ["[2001:db8:cafe::17]:4711"]),  # names are case-insensitive
    (["for=192.0.2.60;proto=http;by=203.0.113.43", "for=198.51.100.17"], ["192.0.2.60", "198.51.100.17"]),
    (["for=192.0.2.43, for=198.51.100.17"], ["192.0.2.43", "198.51.100.17"]),
    (["proto=https;by=10.0.0.1, for=unknown", "for=_hidden"], ["unknown", "unknown", "_hidden"]),
    (['for="a, for=9.9.9.9", for=198.51.100.17'], ["a, for=9.9.9.9", "198.51.100.17"]),  # a comma in quotes
    (['for="\\"q\\""'], ['"q"']),
    ([", for=192.0.2.1 ,,"], ["192.0.2.1"]),  # empty list elements are skipped
    (['for="unterminated, for=198.51.100.17'], None),
    (["for=192.0.2.1 junk"], None),
    (["for"], None),
])
def test_forwarded_header_parsing(lines: list[str], hops: list[str] | None) -> None:
    assert forwarded_for(lines) == hops


@pytest.mark.parametrize(("peer", "lines", "header", "client"), [
    ("10.1.1.1", ["203.0.113.5"], "X-Forwarded-For", "203.0.113.5"),
    ("10.1.1.1", ["198.51.100.1, 203.0.113.5, 10.2.2.2"], "X-Forwarded-For", "203.0.113.5"),  # proxies chained
    ("10.1.1.1", ["198.51.100.1", "203.0.113.5:4711"], "X-Forwarded-For", "203.0.113.5"),  # two lines, a port
    ("10.1.1.1", ["10.3.3.3, 10.2.2.2"], "X-Forwarded-For", "10.3.3.3"),  # all proxies: the farthest
    ("10.1.1.1", [], "X-Forwarded-For", "10.1.1.1"),  # no header: the proxy itself
    ("203.0.113.5", ["198.51.100.1"], "X-Forwarded-For", "203.0.113.5"),  # untrusted peer: header ignored
    ("::ffff:10.1.1.1", ["203.0.113.5"], "X-Forwarded-For", "203.0.113.5"),  # IPv4 on a dual-stack socket
    ("2001:db8::1", ['for="[2001:DB8:CAFE::17]:4711"'], "Forwarded", "2001:db8:cafe::17"),
    ("10.1.1.1", ['for=198.51.100.1, for="[2001:db8::1]"'], "Forwarded", "198.51.100.1"),
    ("10.1.1.1", ['for="unterminated, for=198.51.100.1'], "Forwarded", "10.1.1.1"),  # malformed: trust none
    ("10.1.1.1", ["for=_hidden"], "Forwarded", "_hidden"),
])
def test_the_client_is_the_rightmost_untrusted_hop(peer: str, lines: list[str], header: str, client: str) -> None:
    assert client_address(peer, lines, header, PROXIES) == client


def test_trusted_proxies_are_checked_at_start_up(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("BATHTUB_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.1")
    assert Config.from_env().trusted_proxies == ("10.0.0.0/8", "192.168.1.1")
    with pytest.raises(ValueError, match=r"trusted_proxies \(BATHTUB_TRUSTED_PROXIES\): 'proxy\.local' is not"):
        Config(trusted_proxies="10.0.0.1,proxy.local")
    with pytest.raises(ValueError, match="trusted_proxy_header"):
        Config(trusted_proxy_header="X-Real-IP")
    monkeypatch.setenv("BATHTUB_TRUSTED_PROXIES", "10.0.0.300")
    assert main(["token", "list"]) == 2
    assert "'10.0.0.300' is not an IP address or CIDR network" in capsys.readouterr().err



async def test_a_limited_address_looks_up_one_credential_at_a_time() -> None:
    """The store flood stays bounded without refusing anyone: past its limit, an address's
    lookups pass one at a time; within it (and for other addresses) they run at once."""
    failures = Failures(per_minute=1)
    entered: list[str] = []
    release = asyncio.Event()

    async def lookup(address: str, name: str) -> None:
        async with failures.lookup(address):
            entered.append(name)
            await release.wait()

    first = [asyncio.create_task(lookup("192.0.2.1", n)) for n in ("a", "b")]
    await asyncio.sleep(0)
    assert sorted(entered) == ["a", "b"]  # not limited: both in flight together
    release.set()
    await asyncio.gather(*first)
    assert failures.failed("192.0.2.1") == 0 and failures.failed("192.0.2.1") > 0  # now past its limit
    release.clear()
    entered.clear()
    limited = [asyncio.create_task(lookup("192.0.2.1", n)) for n in ("c", "d")]
    other = asyncio.create_task(lookup("192.0.2.2", "e"))
    for _ in range(3):
        await asyncio.sleep(0)
    assert sorted(entered) in (["c", "e"], ["d", "e"])  # one of the limited address's, and the other's
    release.set()
    await asyncio.gather(*limited, other)
    assert sorted(entered) == ["c", "d", "e"]  # the second went once the first was done
