"""An outage longer than the client's reconnect window, on a member the test starts itself
(integration/imap/members.py, port 5752): killed, restarted 20 s later (empty). The clients
that shut down meanwhile are replaced, so the next batch read of the same session and a
streaming query restarted from its checkpoint work; a query running when the member dies fails
with an error that says the cluster was lost and what a restart does."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hazelcast import HazelcastClient
from hazelcast.config import IntType

from jetconnect import sources

PORT = 5752
OUTAGE_S = 20


def _put(member, entries: dict[str, int]) -> None:
    client = HazelcastClient(
        cluster_name=member.cluster,
        cluster_members=[f"127.0.0.1:{member.port}"],
        default_int_type=IntType.LONG,
        cluster_connect_timeout=30,
    )
    try:
        client.get_map("orders").blocking().put_all(entries)
    finally:
        client.shutdown()


def _drain(spark, source, checkpoint: Path) -> list[tuple]:
    rows: list[tuple] = []
    query = (
        source.read_stream(spark)
        .writeStream.foreachBatch(lambda df, _id: rows.extend(tuple(r) for r in df.collect()))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    if query.exception() is not None:
        raise query.exception()
    return rows


def _outage(member) -> None:
    member.kill()
    time.sleep(OUTAGE_S)  # longer than the clients' reconnect window (cluster_connect_timeout, 10 s)
    member.start()


@pytest.mark.timeout(900)
def test_after_an_outage_the_same_session_reads_again(spark, own_member, tmp_path) -> None:
    member = own_member(PORT, journal=True)
    journal = sources.map_journal("orders", store=member.url, on_journal_reset="from_oldest")
    batch = sources.map("orders", store=member.url, schema="key string, value long")
    _put(member, {f"k{i}": i for i in range(1_000)})
    assert batch.read(spark).count() == 1_000  # every Python worker of the session has a client now
    assert len(_drain(spark, journal, tmp_path / "checkpoint")) == 1_000

    _outage(member)  # back empty: a new cluster
    _put(member, {f"n{i}": i for i in range(500)})
    assert sorted(batch.read(spark).collect()) == sorted((f"n{i}", i) for i in range(500))
    rows = _drain(spark, journal, tmp_path / "checkpoint")  # restarted from its checkpoint
    assert sorted(rows) == sorted((f"n{i}", str(i)) for i in range(500))


@pytest.mark.timeout(600)
def test_a_query_running_when_its_cluster_is_lost_says_so(spark, own_member, tmp_path) -> None:
    member = own_member(PORT, journal=True)
    _put(member, {f"k{i}": i for i in range(100)})
    seen: list[int] = []
    query = (
        sources.map_journal("orders", store=member.url, client_config={"cluster_connect_timeout": 3})
        .read_stream(spark)
        .writeStream.foreachBatch(lambda df, _id: seen.append(df.count()))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="1 second")
        .start()
    )
    try:
        deadline = time.monotonic() + 120
        while sum(seen) < 100 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert sum(seen) == 100
        member.kill()
        try:
            query.awaitTermination(180)
        except Exception as exc:  # the query's own error, raised by awaitTermination
            message = str(exc)
        else:
            pytest.fail("the query went on without its cluster")
    finally:
        query.stop()
    assert "ClusterLostError" in message and f"127.0.0.1:{PORT}" in message, message
    assert "lost the cluster" in message and "restarted from its checkpoint once the cluster is back" in message
