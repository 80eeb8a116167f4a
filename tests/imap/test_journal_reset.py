"""A journal source's offset names the journal it read (``"journal"``: identity, the digest of the
last event read, and after a reset where the new journal starts), on the embedded store without
Spark: a wiped and recreated file is a new journal even when it is longer than the saved
sequences; ``on_journal_reset="from_oldest"`` reads the new one whole, once; offsets of earlier
versions still resume; an edited mark is an OffsetError naming it."""

from __future__ import annotations

import logging
import os
import sqlite3
import uuid

import pytest

from jetconnect.errors import OffsetError, OptionError
from jetconnect.testing import read_rows
from jetconnect_imap import connect
from jetconnect_imap.embedded import sqlite_store
from jetconnect_imap.errors import JournalSequenceError
from jetconnect_imap.factories import cache_journal, map_journal


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/imap.db"


def _rows(source, start, end) -> list[tuple]:
    return [row for r in source.ranges(start, end) for row in read_rows(source.read_range(r))]


def _sequences(offset: dict) -> dict:
    return {k: v for k, v in offset.items() if k != "journal"}


def _wipe(url: str) -> None:
    """The store's file deleted, as a user or a cleanup job would (and every process that held it
    open gone: a restarted query's processes open the new file)."""
    sqlite_store._stores.close_all()
    path = url.removeprefix("sqlite://")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def _read_then_wipe_and_grow(url: str) -> tuple[str, dict]:
    """A map of 4 partitions whose journal a query read 10 events of; the file is then wiped and
    the map made again with 100 events: past every saved sequence."""
    name = f"m{uuid.uuid4().hex[:8]}"
    connect(url).map(name, partitions=4).put_all({f"old{i}": i for i in range(10)})
    source = map_journal(name, store=url)
    start = source.initial_offset()
    saved = source.latest_offset(start, None)
    assert len(_rows(source, start, saved)) == 10
    _wipe(url)
    connect(url).map(name, partitions=4).put_all({f"new{i}": i for i in range(100)})
    return name, saved


def test_a_wiped_and_recreated_store_is_a_new_journal_though_longer(url: str) -> None:
    name, saved = _read_then_wipe_and_grow(url)
    with pytest.raises(JournalSequenceError) as failed:
        map_journal(name, store=url).latest_offset(saved, None)
    message = str(failed.value)
    assert f"map '{name}' partition" in message and "map incarnation" in message and "on_journal_reset" in message
    assert isinstance(failed.value, OffsetError)  # what Spark and a user catch for a checkpoint it cannot honour


def test_from_oldest_reads_the_new_journal_whole_once_and_then_on(url: str, caplog) -> None:
    name, saved = _read_then_wipe_and_grow(url)
    source = map_journal(name, store=url, on_journal_reset="from_oldest")
    with caplog.at_level(logging.WARNING, logger="jetconnect_imap.journal_source"):
        end = source.latest_offset(saved, None)
    assert "the new journal is read from its oldest event" in caplog.text and f"map '{name}'" in caplog.text
    assert sorted(_rows(source, saved, end)) == sorted((f"new{i}", str(i)) for i in range(100))
    # a restart replays that micro-batch (another process: nothing planned in memory): the same rows
    replaying = map_journal(name, store=url, on_journal_reset="from_oldest")
    assert sorted(_rows(replaying, saved, end)) == sorted((f"new{i}", str(i)) for i in range(100))
    # then on from there: nothing new is the same offset (Spark plans no batch), a put is one row
    assert replaying.latest_offset(replaying.latest_offset(end, None), None) == replaying.latest_offset(end, None)
    later = replaying.latest_offset(end, None)
    connect(url).map(name).put("late", 1)
    assert _rows(replaying, later, replaying.latest_offset(later, None)) == [("late", "1")]


def test_a_micro_batch_planned_before_the_restart_is_checked_when_replayed(url: str) -> None:
    """Spark replays the last planned batch after a restart (ranges without latest_offset): on
    another journal it fails, or with from_oldest reads nothing (the next batch starts afresh)."""
    name = f"m{uuid.uuid4().hex[:8]}"
    m = connect(url).map(name, partitions=2)
    m.put_all({f"a{i}": i for i in range(4)})
    planner = map_journal(name, store=url, parallelism=1)
    start = planner.initial_offset()
    end = planner.latest_offset(start, None)
    _wipe(url)
    connect(url).map(name, partitions=2).put_all({f"b{i}": i for i in range(50)})
    with pytest.raises(JournalSequenceError, match="in a micro-batch planned before"):
        map_journal(name, store=url).ranges(start, end)
    assert map_journal(name, store=url, on_journal_reset="from_oldest").ranges(start, end) == []
    # a range planned on the old journal and read on the new one (a read task after the restart)
    (range_,) = planner.ranges(start, end)
    with pytest.raises(JournalSequenceError, match="the micro-batch was planned on the journal of map incarnation"):
        list(map_journal(name, store=url).read_range(range_))
    assert list(map_journal(name, store=url, on_journal_reset="from_oldest").read_range(range_)) == []


def test_the_same_journal_further_on_reads_on(url: str) -> None:
    name = f"m{uuid.uuid4().hex[:8]}"
    m = connect(url).map(name, partitions=3)
    source = map_journal(name, store=url)
    start = source.initial_offset()
    m.put_all({i: i for i in range(30)})
    end = source.latest_offset(start, None)
    assert set(end["journal"]) == {"id", "last"} and end["journal"]["id"].startswith("map incarnation ")
    sqlite_store._stores.close_all()  # a restarted query: new processes, the same file
    m2 = connect(url).map(name)
    m2.put_all({i: -i for i in range(30)})
    restarted = map_journal(name, store=url)
    later = restarted.latest_offset(end, None)
    assert sorted(int(value) for _key, value in _rows(restarted, end, later)) == sorted(-i for i in range(30))


def test_an_offset_of_an_earlier_version_still_resumes(url: str) -> None:
    name = f"m{uuid.uuid4().hex[:8]}"
    m = connect(url).map(name, partitions=2)
    m.put_all({"a": 1, "b": 2, "c": 3})
    source = map_journal(name, store=url)
    old_style = _sequences(source.latest_offset(source.initial_offset(), None))  # {partition: sequence}
    m.put("d", 4)
    end = source.latest_offset(old_style, None)
    assert "journal" in end and _rows(source, old_style, end) == [("d", "4")]


def test_a_file_written_before_maps_had_an_incarnation_gets_one(tmp_path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the maps table as earlier versions made it
        db.execute(
            "CREATE TABLE maps (name TEXT PRIMARY KEY, partitions INTEGER NOT NULL, "
            "journal_capacity INTEGER NOT NULL, journal_ttl REAL NOT NULL)"
        )
        db.execute("INSERT INTO maps VALUES ('orders', 2, 100, 0)")
    url = f"sqlite:///{path}"
    connect(url).map("orders").put("a", 1)
    store = sqlite_store.open_store(url)
    first = store.map_incarnation("orders")
    assert len(first) == 32 and store.map_incarnation("orders") == first
    start = map_journal("orders", store=url).initial_offset()
    assert start["journal"]["id"] == f"map incarnation {first}"


@pytest.mark.parametrize(
    "mark",
    [
        "x",
        {"id": 5},
        {"last": [0, -1, "ab"]},
        {"last": [0, 1]},
        {"from": [1, "2"]},
        {"other": 1},
        {"last": [9, 0, "ab"]},  # a partition the map does not have
        {"from": [0]},  # not one per partition
        {"from": [5, 0]},  # a start past the end
    ],
)
def test_an_edited_mark_is_an_offset_error_naming_it(url: str, mark) -> None:
    name = f"m{uuid.uuid4().hex[:8]}"
    connect(url).map(name, partitions=2).put("a", 1)
    source = map_journal(name, store=url)
    offset = {"0": 0, "1": 0, "journal": mark}
    with pytest.raises(OffsetError, match="was the checkpoint edited"):
        source.latest_offset(offset, None)
        source.ranges(offset, offset)


def test_the_option_is_checked_and_the_cache_journal_has_it(url: str) -> None:
    with pytest.raises(OptionError, match="on_journal_reset' must be fail or from_oldest"):
        map_journal("m", store=url, on_journal_reset="skip")
    assert cache_journal("c", store=url, on_journal_reset="from_oldest").on_journal_reset == "from_oldest"
    for store in (url, "hazelcast://127.0.0.1:1/nobody"):  # refused where it is built: nothing contacted
        with pytest.raises(OptionError, match="map name None"):
            map_journal(None, store=store)
