"""The IMap connectors off the happy path, against the real 3-member cluster: a wrong cluster
name, no member reachable, secrets in the store URL, a value no Hazelcast type carries, a value
this client cannot read, a predicate that fails on the member, and a member SIGKILLed while a
Spark job writes and while one reads (nothing lost: every map has a backup on another member).
"""

from __future__ import annotations

import os
import subprocess
import time
from urllib.parse import quote

import pyarrow as pa
import pytest
from hazelcast.predicate import sql
from hazelcast.serialization.api import IdentifiedDataSerializable
from pyspark.sql.types import StructType

from jetconnect._connector import WriteContext
from jetconnect.errors import SinkError, SourceError
from jetconnect_imap.factories import map_sink, map_source

from .conftest import HAZELCAST_URL, ROOT_SCRIPTS

BATCH_CTX = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=StructType())
FAST = {"cluster_connect_timeout": 3}


def _fails_fast(store: str, expect: str, password: str | None = None) -> None:
    started = time.monotonic()
    with pytest.raises(SourceError) as info:
        map_source("m", store=store, client_config=FAST).splits()
    assert time.monotonic() - started < 20, "the connect timeout was not honoured"
    message = str(info.value)
    assert expect in message, message
    if password is not None:
        assert password not in message and quote(password, safe="") not in message
    with pytest.raises(SinkError) as info:
        batch = pa.RecordBatch.from_pydict({"key": ["a"], "value": [1]})
        map_sink("m", store=store, client_config=FAST).write_partition(iter([batch]), BATCH_CTX)
    assert expect in str(info.value)


def test_a_wrong_cluster_name_or_no_member_is_a_clear_error_within_the_timeout(hz) -> None:
    _fails_fast("hazelcast://127.0.0.1:5701,127.0.0.1:5702/not-jetconnect", "did not admit the client")
    _fails_fast("hazelcast://127.0.0.1:1/jetconnect", "no member reachable")


def test_store_urls_with_quotes_percent_and_at_never_show_their_password(hz) -> None:
    password = "p'a\"s%s@w#rd"
    for written in (password.replace("%", "%25"), quote(password, safe="")):
        url = f"hazelcast://jet:{written}@127.0.0.1:1/jetconnect"
        _fails_fast(url, "no member reachable", password)
        assert password not in repr(map_source("m", store=url)) and "***" in repr(map_source("m", store=url))
    # a cluster name with an escaped '%' or '@' is that name: the members refuse it by name
    _fails_fast("hazelcast://127.0.0.1:5701/jet%25con%40nect", "jet%con@nect")


def test_a_value_no_hazelcast_type_carries_is_refused_naming_the_column(hz, name) -> None:
    import datetime as dt

    target = name("unmappable")
    batch = pa.RecordBatch.from_pydict(
        {"key": ["a"], "when": pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("us"))}  # no time zone
    )
    with pytest.raises(SinkError, match="column 'when'.*without a time zone"):
        map_sink(target, store=HAZELCAST_URL, value_column="when").write_partition(iter([batch]), BATCH_CTX)
    assert hz.get_map(target).blocking().size() == 0


class _Foreign(IdentifiedDataSerializable):
    """A class another application's client knows and jetconnect's does not (factory 9901)."""

    def write_data(self, out) -> None:
        out.write_string("theirs")

    def read_data(self, inp) -> None:  # pragma: no cover - nobody here reads it
        inp.read_string()

    def get_factory_id(self) -> int:
        return 9901

    def get_class_id(self) -> int:
        return 1


def test_a_value_this_client_cannot_read_is_an_error_naming_the_map(hz, name) -> None:
    foreign = name("foreign")
    hz.get_map(foreign).blocking().put_all({"plain": "ok", "odd": _Foreign()})
    source = map_source(foreign, store=HAZELCAST_URL, parallelism=1)
    with pytest.raises(SourceError, match=f"{foreign}.*(?i:serializ|deserialis)"):
        list(source.read_split(source.splits()[0]))


def test_a_predicate_that_fails_on_the_member_is_an_error_naming_the_map(hz, name) -> None:
    longs = name("longs")
    hz.get_map(longs).blocking().put_all({i: i for i in range(50)})
    source = map_source(longs, store=HAZELCAST_URL, predicate=sql("nosuch.field > 2"), parallelism=1)
    with pytest.raises(SourceError, match=f"{longs}.*nosuch"):
        list(source.read_split(source.splits()[0]))


def _member(verb: str, number: int) -> None:
    args = [verb] if verb == "start" else [verb, str(number)]
    subprocess.run(["bash", str(ROOT_SCRIPTS / "hazelcast.sh"), *args], check=True, timeout=300)


def _kill_once(marker: str, number: int) -> None:
    """SIGKILL member ``number`` the first time any process gets here (a retried Spark task
    must not kill again): the one that creates ``marker`` does it."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return
    subprocess.run(["bash", str(ROOT_SCRIPTS / "hazelcast.sh"), "kill-member", str(number)], check=True, timeout=120)


@pytest.mark.timeout(600)
def test_a_member_killed_mid_write_and_mid_read_loses_nothing(spark, hz, name, tmp_path) -> None:
    from pyspark.sql import functions as F

    from jetconnect import sinks, sources

    target = name("killed")
    rows = 200_000
    write_marker, read_marker = str(tmp_path / "killed-mid-write"), str(tmp_path / "killed-mid-read")

    @F.udf("long")
    def value_of(key: int) -> int:  # kills member 3 when the rows are half written
        if key == rows // 2:
            _kill_once(write_marker, 3)
        return key * 3

    try:
        df = spark.range(0, rows, numPartitions=4).select(F.col("id").alias("key"), value_of("id").alias("value"))
        sinks.map(target, store=HAZELCAST_URL, chunk_rows=5_000).write(df)
        assert os.path.exists(write_marker)
        _member("start", 0)  # member 3 back (start only starts the missing ones)
        assert hz.get_map(target).blocking().size() == rows

        def keep(key: int, value: int) -> bool:  # a Python predicate: runs in the read task
            if key == rows // 2:
                _kill_once(read_marker, 2)
            return True

        read = sources.map(target, store=HAZELCAST_URL, predicate=keep, schema="key long, value long", parallelism=4)
        got = [r["value"] for r in read.read(spark).collect()]
        assert os.path.exists(read_marker)
        assert sorted(got) == [i * 3 for i in range(rows)]  # every entry once: none lost, none twice
    finally:  # whatever happened, the cluster is whole again for the next test
        _member("start", 0)
