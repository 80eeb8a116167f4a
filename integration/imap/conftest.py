"""Stores for the IMap integration tests: SQLite (embedded), Redis and a Redis Cluster."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

STORES = {
    "sqlite": None,
    "redis": ("redis", "redis://127.0.0.1:6379/0"),
    "cluster": ("redis-cluster", "redis+cluster://127.0.0.1:7001"),
}


@pytest.fixture
def store_url(request, server, tmp_path_factory) -> str:
    """A store URL for the store named by the test's ``store`` parameter (servers started once)."""
    kind = request.param
    if STORES[kind] is None:
        return f"sqlite:///{tmp_path_factory.mktemp('imap')}/imap.db"
    server_name, url = STORES[kind]
    server(server_name)
    return url


@pytest.fixture
def name() -> Callable[[str], str]:
    """Unique map names, so tests sharing a Redis never see each other's entries."""
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:8]}"

