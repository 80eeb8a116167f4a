"""The Spark Connect profile: ``spark`` is a client session of the server that
scripts/servers/spark-connect.sh starts (sc://127.0.0.1:15002, jetconnect installed in its Python)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

CONNECT_URL = "sc://127.0.0.1:15002"


@pytest.fixture(scope="session")
def spark(server) -> Iterator[object]:
    """One Connect client session for the run, every plugin registered through it."""
    from pyspark.sql import SparkSession

    import jetconnect

    server("spark-connect")
    session = SparkSession.builder.remote(CONNECT_URL).getOrCreate()
    jetconnect.register(session)
    yield session
    session.stop()
