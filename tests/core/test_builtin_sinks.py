"""The built-in ``logger`` and ``noop`` sinks without Spark: what the logger's records reach in a
Python process where nothing configured logging (a Spark Python worker), and what noop takes."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StructField, StructType

from jetconnect import Guarantee, sinks, sources
from jetconnect._builtins import _LEVELS_SET, _WorkerStderr
from jetconnect._connector import WriteContext
from jetconnect._factory_calls import call_with_options
from jetconnect._options import Options
from jetconnect._registry import get_registry
from jetconnect.errors import OptionError

SCHEMA = StructType([StructField("n", LongType())])
CTX = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=SCHEMA)
LOG = logging.getLogger("jetconnect.sink.logger")


class Stderr:
    """What the process wrote to ``sys.stderr`` (pytest's capture of it, as Spark's stands in for a worker's)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys, self.seen, self.out = capsys, "", ""

    def getvalue(self) -> str:
        captured = self.capsys.readouterr()
        self.seen += captured.err
        self.out += captured.out
        return self.seen

    def stdout(self) -> str:
        self.getvalue()
        return self.out


@pytest.fixture
def fresh_logging(capsys: pytest.CaptureFixture[str]) -> Iterator[Stderr]:
    """A process whose logging nobody configured, as a Spark Python worker's: no root handler
    (see :func:`log_rows`), levels unset. Restored afterwards."""
    root = logging.getLogger()
    saved = (root.level, LOG.handlers[:], LOG.level, dict(_LEVELS_SET))
    root.setLevel(logging.WARNING)
    LOG.handlers[:] = []
    LOG.setLevel(logging.NOTSET)
    _LEVELS_SET.clear()
    try:
        yield Stderr(capsys)
    finally:
        level, LOG.handlers[:], log_level, levels = saved
        root.setLevel(level)
        LOG.setLevel(log_level)
        _LEVELS_SET.clear()
        _LEVELS_SET.update(levels)


def rows(*values: int) -> list[object]:
    from pyspark.sql import Row

    return [Row(n=v) for v in values]


def log_rows(sink, *values: int) -> None:
    """``sink`` writes ``values`` without pytest's root handlers, as in a worker (pytest adds its own
    for each test); the handlers a test added stay."""
    root = logging.getLogger()
    handlers = root.handlers[:]
    root.handlers[:] = [h for h in handlers if not type(h).__module__.startswith("_pytest")]
    try:
        sink.write_partition(iter(rows(*values)), CTX)
    finally:
        root.handlers[:] = handlers


def test_the_default_info_records_reach_the_workers_stderr(fresh_logging):
    # Once every INFO row was dropped: the worker configures no logging, so the records reached no
    # handler and Python's last resort prints WARNING and above only (seen through Spark too).
    log_rows(sinks.logger(prefix="row: "), 1, 2)
    lines = fresh_logging.getvalue().splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == [
        "INFO jetconnect.sink.logger: row: Row(n=1)",
        "INFO jetconnect.sink.logger: row: Row(n=2)",
    ]


def test_a_handler_the_user_configured_takes_the_records_alone(fresh_logging):
    taken: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = taken.append  # type: ignore[method-assign]
    log_rows(sinks.logger(), 1)  # our handler is installed first
    logging.getLogger().addHandler(handler)
    try:
        log_rows(sinks.logger(level="DEBUG"), 2, 3)
    finally:
        logging.getLogger().removeHandler(handler)
    assert [r.getMessage() for r in taken] == ["Row(n=2)", "Row(n=3)"]
    assert [r.levelname for r in taken] == ["DEBUG", "DEBUG"]
    assert fresh_logging.getvalue().count("Row(") == 1
    assert sum(isinstance(h, _WorkerStderr) for h in LOG.handlers) == 1  # one per worker, not per task


def test_under_sparks_log_capture_each_row_goes_to_its_collection_and_the_console_once(fresh_logging, monkeypatch):
    # spark.sql.pyspark.worker.logging.enabled: Spark captures a task's logs with a root handler
    # and swaps sys.stderr (pyspark.logger.worker_io, run here as Spark runs it); it loses the
    # records of streaming writes, so the console (the stderr beneath) gets each row too
    from pyspark.logger.worker_io import capture_outputs

    monkeypatch.setenv("PYSPARK_SPARK_SESSION_UUID", "test")
    console = io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", console)
    with capture_outputs():
        log_rows(sinks.logger(prefix="cap "), 1)
    collected = [
        json.loads(line.split(":", 2)[2]) for line in fresh_logging.stdout().splitlines() if line.count(":") > 2
    ]
    assert [(r["level"], r["logger"], r["msg"]) for r in collected] == [
        ("INFO", "jetconnect.sink.logger", "cap Row(n=1)")
    ]
    assert [line.split(" ", 2)[2] for line in console.getvalue().splitlines()] == [
        "INFO jetconnect.sink.logger: cap Row(n=1)"
    ]
    assert "Row(" not in fresh_logging.getvalue()


def test_a_level_the_user_set_on_the_logger_is_kept(fresh_logging):
    LOG.setLevel(logging.ERROR)
    log_rows(sinks.logger(level="INFO"), 1)
    log_rows(sinks.logger(level="ERROR"), 2)
    assert LOG.level == logging.ERROR
    assert (
        "Row(n=1)" not in fresh_logging.getvalue()
        and "ERROR jetconnect.sink.logger: Row(n=2)" in fresh_logging.getvalue()
    )


def test_a_second_sink_with_a_lower_level_is_heard_too(fresh_logging):
    log_rows(sinks.logger(level="WARNING"), 1)
    log_rows(sinks.logger(level="DEBUG"), 2)
    log_rows(sinks.logger(level="ERROR"), 3)
    out = fresh_logging.getvalue()
    assert "WARNING jetconnect.sink.logger: Row(n=1)" in out and "DEBUG jetconnect.sink.logger: Row(n=2)" in out
    assert "ERROR jetconnect.sink.logger: Row(n=3)" in out


@pytest.mark.parametrize("level", ["LOUD", "", "5", "notset", 20, None])
def test_an_unknown_level_is_an_option_error(level):
    with pytest.raises(OptionError, match=r"logger: option 'level' must be a logging level"):
        sinks.logger(level=level)


def test_noop_takes_every_row_and_writes_nothing_exactly_once():
    spec = get_registry().sinks["noop"]
    assert spec.plugin == get_registry().sinks["logger"].plugin  # built in, beside logger
    assert spec.guarantee == Guarantee.EXACTLY_ONCE == sinks.noop().guarantee
    taken = []

    def batches() -> Iterator[pa.RecordBatch]:
        for i in range(3):
            taken.append(i)
            yield pa.RecordBatch.from_pydict({"n": [i]})

    assert sinks.noop().write_partition(batches(), CTX) is None
    assert taken == [0, 1, 2]  # what feeds it runs, which is what a no-op sink is for
    built = call_with_options(spec.factory, Options({}, "sink 'noop'"), "sink 'noop'")
    assert built.guarantee == Guarantee.EXACTLY_ONCE
    with pytest.raises(OptionError, match=r"unknown option\(s\) path"):
        call_with_options(spec.factory, Options({"path": "/tmp/x"}, "sink 'noop'"), "sink 'noop'")


@pytest.mark.parametrize("rate", [0, -1, True, "fast", 2.5])
def test_an_item_stream_rate_that_is_no_count_of_at_least_one_is_an_option_error(rate: object) -> None:
    with pytest.raises(OptionError, match="items_per_second") as err:
        sources.item_stream(items_per_second=rate)  # type: ignore[arg-type]
    assert err.value.option == "items_per_second"
