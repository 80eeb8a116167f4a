"""A journal that is not the one the checkpoint read, on a member the test starts, kills and
restarts itself (integration/imap/members.py, port 5750): the member comes back empty, a new
journal grows past the saved sequences, and the query restarted from its checkpoint must say so
(``JournalSequenceError``) or, with ``on_journal_reset="from_oldest"``, read the new journal
whole, every event once; never skip its first events silently."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from hazelcast import HazelcastClient
from hazelcast.config import IntType

from jetconnect import sources

PORT = 5750


def _official(member) -> HazelcastClient:
    """The application's own client of the member (what puts the entries)."""
    return HazelcastClient(
        cluster_name=member.cluster,
        cluster_members=[f"127.0.0.1:{member.port}"],
        default_int_type=IntType.LONG,
        cluster_connect_timeout=30,
    )


def _put(member, entries: dict[str, int]) -> None:
    client = _official(member)
    try:
        client.get_map("orders").blocking().put_all(entries)
    finally:
        client.shutdown()


def _drain(spark, source, checkpoint: Path) -> list[tuple]:
    """Every row ``source`` streams from ``checkpoint`` on (availableNow); the query's error raised."""
    rows: list[tuple] = []

    def collect(df, _batch_id: int) -> None:
        rows.extend(tuple(r) for r in df.collect())

    query = (
        source.read_stream(spark)
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    if query.exception() is not None:
        raise query.exception()
    return rows


@pytest.mark.timeout(900)
def test_a_member_restarted_empty_is_a_new_journal_not_the_old_one_further_on(spark, own_member, tmp_path) -> None:
    member = own_member(PORT, journal=True)
    checkpoint = tmp_path / "checkpoint"
    _put(member, {f"old{i}": i for i in range(1_000)})
    assert len(_drain(spark, sources.map_journal("orders", store=member.url), checkpoint)) == 1_000

    member.kill()  # no persistence: the member comes back with no map and no journal
    member.start()
    new = {f"new{i}": i for i in range(30_000)}  # 30,000 events: past every saved sequence
    _put(member, new)
    kept = tmp_path / "kept"
    shutil.copytree(checkpoint, kept)

    # by default: a clear error naming the map, a partition and the sequences, nothing delivered
    try:
        delivered = _drain(spark, sources.map_journal("orders", store=member.url), checkpoint)
    except Exception as exc:
        message = str(exc)
    else:
        pytest.fail(f"{len(delivered)} of the new journal's 30,000 events delivered, with no error")
    assert "JournalSequenceError" in message and "map 'orders' partition" in message, message
    assert "on_journal_reset" in message and "restarted" in message, message

    # from_oldest: the new journal from its oldest event, each of the 30,000 once
    rows = _drain(spark, sources.map_journal("orders", store=member.url, on_journal_reset="from_oldest"), kept)
    assert len(rows) == 30_000 and {key for key, _ in rows} == set(new)
    # and on from there as from any checkpoint: only what is new
    _put(member, {"late": 1})
    again = _drain(spark, sources.map_journal("orders", store=member.url, on_journal_reset="from_oldest"), kept)
    assert again == [("late", "1")]


@pytest.mark.timeout(600)
def test_a_map_destroyed_and_made_again_on_a_running_cluster_is_a_new_journal(spark, hz, name, tmp_path) -> None:
    """The cluster's id stays; the digest of the last event read tells the new journal apart."""
    from .conftest import HAZELCAST_URL

    orders = name("destroyed")
    hz.get_map(orders).blocking().put_all({f"old{i}": i for i in range(1_000)})
    checkpoint = tmp_path / "checkpoint"
    assert len(_drain(spark, sources.map_journal(orders, store=HAZELCAST_URL), checkpoint)) == 1_000
    hz.get_map(orders).blocking().destroy()  # its journal goes with it; the next put makes both again
    hz.get_map(orders).blocking().put_all({f"new{i}": i for i in range(30_000)})
    try:
        delivered = _drain(spark, sources.map_journal(orders, store=HAZELCAST_URL), checkpoint)
    except Exception as exc:
        message = str(exc)
    else:
        pytest.fail(f"{len(delivered)} of the new journal's 30,000 events delivered, with no error")
    assert "JournalSequenceError" in message and f"map '{orders}' partition" in message, message
    assert "is not the one it read" in message, message


@pytest.mark.timeout(900)
def test_a_member_lost_while_another_stays_up_is_the_same_journal_further_on(spark, own_member, tmp_path):
    """Two members of the test's own (ports 5753-5754): one killed and restarted while the other
    stays up. The cluster keeps its id and its journals (in the backups): no reset is seen, and
    the query reads on, every event once. (The check must not cry wolf on a routine restart.)"""
    first = own_member(5753, journal=True, cluster="duo", peers=(5754,))
    second = own_member(5754, journal=True, cluster="duo", peers=(5753,))
    url = "hazelcast://127.0.0.1:5753,127.0.0.1:5754/duo"
    client = HazelcastClient(
        cluster_name="duo",
        cluster_members=["127.0.0.1:5753"],
        default_int_type=IntType.LONG,
        cluster_connect_timeout=30,
    )
    try:
        deadline = time.monotonic() + 60
        while len(client.cluster_service.get_members()) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(client.cluster_service.get_members()) == 2
        orders = client.get_map("orders").blocking()
        orders.put_all({f"a{i}": i for i in range(1_000)})
        checkpoint = tmp_path / "checkpoint"
        assert len(_drain(spark, sources.map_journal("orders", store=url), checkpoint)) == 1_000

        second.kill()  # its partitions' primaries are promoted from the backups on the first
        orders.put_all({f"b{i}": i for i in range(1_000)})
        rows = _drain(spark, sources.map_journal("orders", store=url), checkpoint)
        assert sorted(key for key, _ in rows) == sorted(f"b{i}" for i in range(1_000))

        second.start()  # back empty; it rejoins the running cluster and takes partitions again
        orders.put_all({f"c{i}": i for i in range(1_000)})
        rows = _drain(spark, sources.map_journal("orders", store=url), checkpoint)
        assert sorted(key for key, _ in rows) == sorted(f"c{i}" for i in range(1_000))
    finally:
        client.shutdown()
    assert first.process is not None  # the first member was never restarted
