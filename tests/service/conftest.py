"""Fixtures of the service tests that start the real `bathtub serve`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.service.serving import Server, stop_all


@pytest.fixture
async def servers() -> AsyncIterator[list[Server]]:
    """Servers a test starts (append them); all stopped at its end, whatever happened."""
    started: list[Server] = []
    yield started
    await stop_all(started)
