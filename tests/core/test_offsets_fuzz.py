"""Offsets read back from a checkpoint, fuzzed: every stream source answers or raises a typed error.

Spark keeps a stream's offsets as JSON in ``checkpoint/offsets/N``, a file anyone can edit (or
a disk can damage). Whatever a source is handed as ``start`` or ``end`` (random JSON, or a real
offset with one part changed), ``latest_offset``, ``ranges`` and the ``read_range`` of each range
it plans must either work or raise a :class:`~jetconnect.errors.JetconnectError` (an
``OffsetError`` names the entry), never a bare ``KeyError``/``TypeError``/``ValueError``, and
within Hypothesis' deadline. The sources here run without a server (local files, SQLite); the
Kafka source's offsets are checked the same way in ``integration/kafka``.
"""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetconnect import sources
from jetconnect._builders._receiver import RECEIVERS
from jetconnect.fuzzing import JSON, edited, exercise
from jetconnect.testing import counter_stream

FUZZ = settings(
    max_examples=60, deadline=3000, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def builder_stream(tmp_path, snapshots: bool):
    source = counter_stream(60, per_fill=1, snapshots=snapshots).with_options(
        {"wal_location": str(tmp_path / "wal"), "max_pull_ms": "50", "idle_poll_ms": "0"}
    )
    start = source.initial_offset()
    end = source.latest_offset(start, 10)
    for range_ in source.ranges(start, end):
        list(source.read_range(range_))
    return source, start, end


@pytest.fixture()
def snapshot_stream(tmp_path):
    return builder_stream(tmp_path, snapshots=True)


@pytest.fixture()
def spool_stream(tmp_path):
    yield builder_stream(tmp_path, snapshots=False)
    RECEIVERS.stop_all()


@pytest.fixture()
def watched(tmp_path):
    folder = tmp_path / "watched"
    folder.mkdir()
    (folder / "a.txt").write_text("one\ntwo\n")
    (folder / "b.txt").write_text("three\n")
    source = sources.file_watcher(directory=str(folder), read_existing=True)
    start = source.initial_offset()
    return source, start, source.latest_offset(start, None)


@pytest.fixture()
def journal(tmp_path):
    from jetconnect_imap import connect

    url = f"sqlite:///{tmp_path}/imap.db"
    m = connect(url).map(f"m{uuid.uuid4().hex[:8]}", partitions=3)
    m.put_all({i: {"n": i} for i in range(20)})
    source = sources.map_journal(m.name, store=url, parallelism=2)
    start = source.initial_offset()
    return source, start, source.latest_offset(start, None)


@pytest.fixture()
def incremental(tmp_path):
    url = f"sqlite:///{tmp_path}/db.sqlite"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("create table events (id integer primary key, name text)"))
        conn.execute(sa.text("insert into events values " + ", ".join(f"({i}, 'n{i}')" for i in range(1, 41))))
    engine.dispose()
    source = sources.jdbc(url, table="events", offset_column="id")
    start = source.initial_offset()
    return source, start, source.latest_offset(start, 10)


SOURCES = ["snapshot_stream", "spool_stream", "watched", "journal", "incremental"]


@pytest.mark.parametrize("fixture", SOURCES)
@FUZZ
@given(data=st.data())
def test_any_json_as_an_offset_works_or_is_a_typed_error(fixture, request, data):
    source, start, end = request.getfixturevalue(fixture)
    exercise(source, start, end, data.draw(JSON, label="offset"))


@pytest.mark.parametrize("fixture", SOURCES)
@FUZZ
@given(data=st.data())
def test_a_real_offset_edited_in_one_place_works_or_is_a_typed_error(fixture, request, data):
    source, start, end = request.getfixturevalue(fixture)
    which = data.draw(st.sampled_from([start, end]), label="which")
    exercise(source, start, end, data.draw(edited(which), label="offset"))
