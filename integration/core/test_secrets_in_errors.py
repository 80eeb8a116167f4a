"""The adapter's net: an error that quotes a connector's secret reaches the user masked.

Plugins mask what their own clients quote; these connectors raise, from where Spark calls them
(an executor's read, the driver's planning of a stream, an executor's write, the driver's commit),
an error that quotes their password raw, percent-encoded and repr-escaped, as a client library
or a user's function might. What the user catches must show none of those spellings.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

import pytest
from pyspark.sql.types import LongType, StructField, StructType

from jetconnect._connector import BatchSource, Sink, StreamSource, WriteContext
from jetconnect.errors import SourceError

CANARY = "c@n#a/r%y'\\x"
SCHEMA = StructType([StructField("n", LongType())])
SPELLINGS = (CANARY, quote(CANARY, safe=""), repr(CANARY)[1:-1])


def leak(password: str) -> str:
    return f"login refused for {password!r} (url postgresql://app:{quote(password, safe='')}@db/x, raw {password})"


def assert_masked(error: BaseException) -> str:
    text = str(error)
    for spelled in SPELLINGS:
        assert spelled not in text, f"{spelled!r} shows in: {text[:2000]}"
    assert "***" in text
    return text


@dataclass
class LeakyBatch(BatchSource):
    password: str
    name: str = "leaky"

    def schema(self) -> StructType:
        return SCHEMA

    def splits(self):
        return [0]

    def read_split(self, split):
        yield (1,)
        raise ConnectionError(leak(self.password))


@dataclass
class LeakyStream(StreamSource):
    url: str  # the secret is in a URL-valued field: found without a secret-looking name
    name: str = "leaky_stream"

    def schema(self) -> StructType:
        return SCHEMA

    def initial_offset(self):
        return {"p": 0}

    def latest_offset(self, start, max_records):
        raise RuntimeError(f"cannot reach {self.url}")

    def read_range(self, range_):
        return iter(())


@dataclass
class LeakySink(Sink):
    config: dict  # a client config dict, as the Kafka sink holds one
    fail_in: str = "write"
    name: str = "leaky_sink"

    def write_partition(self, data, ctx: WriteContext):
        for _ in data:
            pass
        if self.fail_in == "write":
            raise OSError(leak(self.config["sasl.password"]))

    def commit(self, messages, ctx):
        raise ValueError(leak(self.config["sasl.password"]))


def test_an_executor_read_error_quoting_the_password_is_masked(spark):
    with pytest.raises(Exception) as caught:
        LeakyBatch(CANARY).read(spark).collect()
    assert "ConnectionError" in assert_masked(caught.value)


def test_a_driver_planning_error_quoting_a_url_password_is_masked(spark, tmp_path):
    query = (
        LeakyStream(f"http://svc:{quote(CANARY, safe='')}@127.0.0.1:9/feed")
        .read_stream(spark)
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .start()
    )
    try:
        with pytest.raises(Exception) as caught:
            query.awaitTermination(120)
    finally:
        query.stop()
    text = assert_masked(caught.value)
    assert "http://svc:***@127.0.0.1:9/feed" in text


@pytest.mark.parametrize("fail_in", ["write", "commit"])
def test_a_sink_error_quoting_a_config_secret_is_masked(spark, fail_in):
    sink = LeakySink({"bootstrap.servers": "127.0.0.1:9", "sasl.password": CANARY}, fail_in)
    with pytest.raises(Exception) as caught:
        sink.write(spark.range(3).toDF("n"))
    assert_masked(caught.value)


def test_an_error_without_a_secret_passes_unchanged(spark):
    stream = LeakyStream("http://127.0.0.1:9/feed")
    with pytest.raises(Exception, match=r"source 'leaky_stream' is a stream: read it with spark.readStream"):
        stream.read(spark).collect()
    with pytest.raises(SourceError):
        from jetconnect.spark._guard import secrets_kept_out

        with secrets_kept_out(stream):
            raise SourceError("nothing secret here")
