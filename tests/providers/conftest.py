"""Fixtures of the provider tests: a wire-format HTTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .wire_servers import WireServer


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    with WireServer() as server:
        yield server
