"""Careless input through Spark (issue #32): refused naming the culprit, or (a mapping function's
None) left out, never rows of NULLs, garbage or a query that reads nothing.

The unit-level checks of every connector are in tests/core/test_careless_input.py; these run the
paths that go through Spark: the stream reader's start, executor tasks, and Spark's string options.
"""

from __future__ import annotations

import json
import logging
import traceback
import uuid
from datetime import datetime

import pytest

from jetconnect import SourceBuilder, cli, sources

CANARY = "c@n#a/r%y'\\x"  # the characters that once broke redaction; see integration/test_canary_secret.py


def failure_of(query) -> str:
    """The text of the error that ended ``query`` (awaitTermination raises it)."""
    try:
        query.awaitTermination(120)
    except Exception as exc:  # noqa: BLE001 - the failure is what is looked at
        return str(exc)
    finally:
        query.stop()
    raise AssertionError("the query was expected to fail")


def run_stream(df, tmp_path, name: str):
    return (
        df.writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / f"ck-{name}"))
        .trigger(availableNow=True)
        .start()
    )


def counting_stream(name: str, total: int = 30):
    def fill(state, buf):
        while state["n"] < total and len(buf) < 10:
            buf.add((state["n"],))
            state["n"] += 1

    return (
        SourceBuilder.stream(name, lambda ctx: {"n": 0})
        .fill_buffer_fn(fill)
        .create_snapshot_fn(lambda s: s["n"])
        .restore_snapshot_fn(lambda s, n: s.update(n=n))
        .schema("n bigint")
        .build()
    )


def test_a_bad_builder_stream_option_fails_the_query_start_naming_it(spark, tmp_path):
    """It was read in executor tasks only: a query started and then failed (or waited for ever)."""
    df = counting_stream("careless_options").read_stream(spark, wal_location=str(tmp_path / "wal"), idle_poll_ms="-5")
    message = failure_of(run_stream(df, tmp_path, f"careless_{uuid.uuid4().hex[:8]}"))
    assert "option 'idle_poll_ms' must be at least 0, got -5" in message


def test_a_wal_location_that_is_a_file_fails_naming_the_option(spark, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    df = counting_stream("careless_wal").read_stream(spark, wal_location=str(blocker))
    message = failure_of(run_stream(df, tmp_path, f"careless_{uuid.uuid4().hex[:8]}"))
    assert "option 'wal_location'" in message and "not a directory" in message


def test_read_stream_refuses_a_fractional_batch_limit(spark, tmp_path):
    """The factories refuse it too (tests/core): 2.5 would be a fractional position in the offset log."""
    df = counting_stream("careless_limit").read_stream(
        spark, wal_location=str(tmp_path / "wal"), max_records_per_batch=2.5
    )
    message = failure_of(run_stream(df, tmp_path, f"careless_{uuid.uuid4().hex[:8]}"))
    assert "option 'max_records_per_batch' must be a whole number" in message


@pytest.mark.parametrize("limit", [0, -1])
def test_a_batch_limit_below_one_is_one_option_error_and_nothing_after_it(spark, tmp_path, limit):
    """It was the OptionError followed by PySpark's own UnboundLocalError (its stream runner
    stops a reader that was never made)."""
    df = counting_stream("careless_zero").read_stream(
        spark, wal_location=str(tmp_path / "wal"), max_records_per_batch=limit
    )
    message = failure_of(run_stream(df, tmp_path, f"careless_{uuid.uuid4().hex[:8]}"))
    assert f"option 'max_records_per_batch' must be at least 1, got {limit}" in message, message
    assert "UnboundLocalError" not in message and "cannot access local variable" not in message, message


def test_a_forgotten_return_is_an_error_naming_the_source_not_rows_of_nulls(spark):
    def parse(line):
        line.upper()  # the forgotten `return`

    def fill(lines, buf):
        for line in lines:
            buf.add(parse(line))
        buf.close()

    source = SourceBuilder.batch("careless_none", lambda ctx: ["a", "b"]).fill_buffer_fn(fill).build()
    with pytest.raises(Exception, match=r"source 'careless_none'.*buf.add\(None\)"):
        source.read(spark).collect()


def test_add_all_of_a_string_is_an_error_not_one_row_per_character(spark):
    def fill(state, buf):
        buf.add_all("hello")
        buf.close()

    source = SourceBuilder.batch("careless_add_all", lambda ctx: None).fill_buffer_fn(fill).build()
    with pytest.raises(Exception, match=r"source 'careless_add_all': buf.add_all\(\) takes a collection.*got a str"):
        source.read(spark).collect()


def test_a_naive_event_time_is_an_error_naming_the_item(spark, tmp_path):
    """It was taken for UTC; ``True`` (tests/core) was taken for 1 ms after the epoch."""

    def fill(state, buf):
        buf.add(("x",), datetime(2026, 1, 1))  # noqa: DTZ001 - the mistake under test

    source = (
        SourceBuilder.timestamped_stream("careless_time", lambda ctx: None)
        .fill_buffer_fn(fill)
        .create_snapshot_fn(lambda s: 0)
        .restore_snapshot_fn(lambda s, p: None)
        .build()
    )
    df = source.read_stream(spark, wal_location=str(tmp_path / "wal"))
    message = failure_of(run_stream(df, tmp_path, f"careless_{uuid.uuid4().hex[:8]}"))
    assert "source 'careless_time': the event time of item ('x',) is a naive datetime" in message


def test_a_stateful_charset_is_refused_through_spark_options_naming_it(spark, tmp_path):
    (tmp_path / "a.txt").write_bytes("日本\n語\n".encode("iso2022_jp"))
    reader = spark.read.format("jetconnect.files").option("directory", str(tmp_path)).option("charset", "iso2022_jp")
    with pytest.raises(Exception, match="option 'charset': charset 'iso2022_jp' cannot be read line by line"):
        reader.load().collect()


def test_a_lines_mapper_returning_none_leaves_the_line_out_through_spark(spark, tmp_path):
    (tmp_path / "events.txt").write_text("".join(f"{'keep' if i % 3 else 'skip'} {i}\n" for i in range(300)))
    from jetconnect._files.filesystem import LocalFileSystem
    from jetconnect._files.lines_source import LinesSource

    source = LinesSource(
        LocalFileSystem(),
        str(tmp_path),
        mapper=lambda name, line: (int(line.split()[1]),) if line.startswith("keep") else None,
        mapped_schema="n bigint",
        min_splits=3,
    )
    got = sorted(r.n for r in source.read(spark).collect())
    assert got == [i for i in range(300) if i % 3]  # no NULL rows for the skipped lines


def test_credentials_in_a_host_show_nowhere(spark, tmp_path, capsys, caplog):
    """A socket source whose host has a user and password pasted in: the failed query, the logs,
    the repr and ``jetconnect doctor`` never show the password (in any spelling)."""
    caplog.set_level(logging.DEBUG, logger="jetconnect")
    host = f"someone:{CANARY}@127.0.0.1"
    source = sources.socket(host, 9, connect_timeout=1)  # never reachable: "user:pw@host" is no host name
    shown = {"repr": repr(source) + repr(vars(source))}
    df = source.read_stream(spark, wal_location=str(tmp_path / "wal"), max_pull_ms=200)
    query = run_stream(df, tmp_path, f"careless_{uuid.uuid4().hex[:8]}")
    try:
        query.awaitTermination(60)
    except Exception as exc:  # noqa: BLE001 - its text is what is searched
        shown["failure"] = str(exc) + "".join(traceback.format_exception(exc))
    finally:
        query.stop()
    code = cli.main(["doctor", "--skip-spark", "--source", "socket", "--option", f"host={host}", "--option", "port=9"])
    captured = capsys.readouterr()
    shown["doctor"] = f"exit {code}\n{captured.out}{captured.err}"
    shown["logs"] = "\n".join(r.getMessage() for r in caplog.records)
    spellings = {CANARY, json.dumps(CANARY)[1:-1], repr(CANARY)[1:-1], "c@n#a/r"}
    for what, text in shown.items():
        leaked = [s for s in spellings if s in text]
        assert not leaked, f"{what} shows {leaked}: {text[-1500:]}"
    assert "someone:***@127.0.0.1" in shown["doctor"]


def test_an_option_given_to_read_that_the_source_would_ignore_is_refused(spark, tmp_path):
    """A source built in Python takes its options in its factory: one given to read(...) instead
    was neither checked nor used (the file would have been read as UTF-8 all the same)."""
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(
        Exception, match=r"source 'files': option\(s\) 'charset' given to read/\.\.\._stream\(\.\.\.\) would be ignored"
    ):
        sources.files(directory=str(tmp_path)).read(spark, charset="latin-1").collect()
    assert sources.files(directory=str(tmp_path)).read(spark).count() == 1
