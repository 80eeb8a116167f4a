"""Stores for the IMap integration tests: SQLite (embedded) and the shared 3-member Hazelcast
cluster of scripts/servers/hazelcast.sh."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="session")
def member_classpath(server) -> str:
    """The member jars of scripts/servers/hazelcast.sh (``hazelcast.sh classpath``): what a test's
    Java program (a Java client of the cluster, a codec check) compiles and runs against."""
    import subprocess

    done = subprocess.run(
        ["bash", str(ROOT_SCRIPTS / "hazelcast.sh"), "classpath"], capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        server("hazelcast")  # fails in CI, skips elsewhere, with the script's reason
        pytest.fail(f"hazelcast.sh classpath failed: {done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def java_classes(member_classpath, tmp_path_factory) -> list[str]:
    """``java -cp ...`` for the test programs under integration/imap/java, compiled once per run."""
    from jetconnect.testing import java_program

    return java_program(Path(__file__).parent / "java", member_classpath, tmp_path_factory.mktemp("java"))


@pytest.fixture
def own_member(member_classpath, tmp_path) -> Iterator[Callable[..., Any]]:
    """``own_member(port, journal=True, cluster="solo", extra_classpath=(), factories={}, peers=())``:
    a started member of the test's own (integration/imap/members.py), of a cluster of one or joined
    to its ``peers``' ports, killed at the end of the test."""
    from .members import Member

    started: list[Member] = []

    def start(port: int, journal: bool = True, cluster: str = "solo", **more: Any) -> Member:
        member = Member(member_classpath, tmp_path / f"member-{port}", port, cluster=cluster, journal=journal, **more)
        started.append(member)
        return member.start()

    yield start
    for member in started:
        member.stop()
