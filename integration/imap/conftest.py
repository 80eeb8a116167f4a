"""Stores for the IMap integration tests: SQLite (embedded) and the shared 3-member Hazelcast
cluster of scripts/servers/hazelcast.sh."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hazelcast import HazelcastClient
from hazelcast.config import IntType

#: The cluster of scripts/servers/hazelcast.sh: its members, then its cluster name.
HAZELCAST_URL = "hazelcast://127.0.0.1:5701,127.0.0.1:5702,127.0.0.1:5703/jetconnect"
STORES = {
    "sqlite": None,
    "hazelcast": ("hazelcast", HAZELCAST_URL),
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
    """Unique map names, so tests sharing a cluster never see each other's entries."""
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:8]}"


#: Where scripts/servers/NAME.sh live (a test kills and restarts a member with hazelcast.sh).
ROOT_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "servers"


@pytest.fixture(scope="module")
def hz(server) -> Iterator[HazelcastClient]:
    """The official client, configured as another application of the cluster would configure it
    (64-bit ints, so what it writes is what a Java member or jetconnect reads)."""
    server("hazelcast")
    client = HazelcastClient(
        cluster_name="jetconnect",
        cluster_members=["127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703"],
        default_int_type=IntType.LONG,
        cluster_connect_timeout=30,
    )
    yield client
    client.shutdown()
