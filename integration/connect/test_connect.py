"""jetconnect through Spark Connect: a client session of a real Connect server (scripts/servers/spark-connect.sh).

The server's Python has jetconnect and the plugins installed; the pipeline's own code (this test
module, helper modules on a path only the client knows) travels by value; a distribution the server
lacks is a ConnectSetupError that says what to pip install there.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from pyspark import cloudpickle

from jetconnect import ConnectSetupError, SourceBuilder, sinks, sources
from jetconnect._builders import fill_from_iterator
from jetconnect._registry import reset_registry
from jetconnect.spark import members
from jetconnect.spark._connect import ConnectPluginWarning, is_connect
from jetconnect.testing import checkpoint_batches, counter_stream, wait_until


def test_the_session_is_a_connect_client(spark):
    assert is_connect(spark)
    assert members(spark) == 1  # the server runs local[2]


def test_registered_format_and_python_api_batch_reads(spark):
    df = spark.read.format("jetconnect.items").option("items", '["a", "b", "c"]').load()
    assert sorted(r.value for r in df.collect()) == ["a", "b", "c"]
    assert sorted(r.value for r in sources.items(["x", "y"]).read(spark).collect()) == ["x", "y"]


def _module(folder: Path, name: str, code: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(code))


def test_a_helper_module_only_the_client_can_import_is_shipped_by_value(spark, tmp_path, monkeypatch):
    name = f"helpers_{uuid.uuid4().hex[:8]}"
    _module(
        tmp_path,
        name,
        """
        def numbers(ctx):
            return iter(range(ctx.global_processor_index, 100, ctx.total_parallelism))
    """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    helpers = __import__(name)
    source = (
        SourceBuilder.batch("numbers", helpers.numbers)
        .fill_buffer_fn(fill_from_iterator)
        .schema("n bigint")
        .distributed(2)
        .build()
    )
    assert sorted(r.n for r in source.read(spark).collect()) == list(range(100))
    assert name in cloudpickle.list_registry_pickle_by_value()


def _fake_distribution(folder: Path, dist: str, version: str, module: str, code: str, entry_points: str = "") -> None:
    """An installed-looking distribution on ``folder`` (dist-info and all) that the server lacks."""
    _module(folder, module, code)
    info = folder / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "top_level.txt").write_text(module + "\n")
    if entry_points:
        (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


def test_a_distribution_missing_on_the_server_is_a_clear_error(spark, tmp_path, monkeypatch):
    module = f"jcfake_{uuid.uuid4().hex[:8]}"
    _fake_distribution(
        tmp_path,
        "jcfake-client-lib",
        "0.3.1",
        module,
        """
        def numbers(ctx):
            return iter(range(10))
    """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    lib = __import__(module)
    source = SourceBuilder.batch("fake", lib.numbers).fill_buffer_fn(fill_from_iterator).schema("n bigint").build()
    with pytest.raises(ConnectSetupError) as caught:
        source.read(spark)
    message = str(caught.value)
    assert "source 'fake' cannot run on the Spark Connect server" in message
    assert f"{module} (ModuleNotFoundError" in message
    assert "pip install jcfake-client-lib==0.3.1" in message


def test_register_warns_of_a_plugin_the_server_lacks_and_its_format_fails_clearly(spark, tmp_path, monkeypatch):
    module = f"jcfakeplugin_{uuid.uuid4().hex[:8]}"
    _fake_distribution(
        tmp_path,
        "jetconnect-fakeplugin",
        "0.1.0",
        module,
        """
        from jetconnect import hookimpl, sources

        def fake_numbers(n: int = 3):
            \"\"\"0 .. n-1.\"\"\"
            return sources.items([str(i) for i in range(n)])

        @hookimpl
        def register_sources(register):
            register(fake_numbers)
    """,
        entry_points=f"""
        [jetconnect]
        fakeplugin = {module}
    """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reset_registry()
    try:
        import jetconnect

        expected = r"plugin 'fakeplugin' is installed here but not on the Spark Connect server .*pip install jetconnect-fakeplugin==0.1.0"
        with pytest.warns(ConnectPluginWarning, match=expected):
            formats = jetconnect.register(spark)
        assert "jetconnect.fake_numbers" in formats
        with pytest.raises(Exception, match=r"source 'fake_numbers' is not installed in this Python"):
            spark.read.format("jetconnect.fake_numbers").load().collect()
    finally:
        monkeypatch.undo()
        reset_registry()


def test_batch_sink(spark, tmp_path):
    out = tmp_path / "out"
    sinks.files(str(out)).write(spark.range(1000).selectExpr("cast(id as string) as value"))
    lines = [line for f in out.glob("part*") for line in f.read_text().splitlines()]
    assert sorted(int(v) for v in lines) == list(range(1000))


def _written(out: Path) -> list[int]:
    return sorted(int(line) for f in out.glob("part*") for line in f.read_text().splitlines())


def test_streaming_read_stopped_and_restarted_from_its_checkpoint_is_exactly_once(spark, tmp_path):
    total, ckpt, out = 400, tmp_path / "ckpt", tmp_path / "out"

    def start():
        df = counter_stream(total, per_fill=10).read_stream(
            spark, max_records_per_batch=60, wal_location=str(tmp_path / "wal")
        )
        return sinks.files(str(out)).write_stream(
            df.selectExpr("cast(n as string) as value"),
            checkpoint_location=str(ckpt),
            trigger={"processingTime": "0 seconds"},
        )

    first = start()
    wait_until(lambda: len(checkpoint_batches(ckpt)) >= 2, 180, "two committed batches", interval=0.5)
    first.stop()
    before = _written(out)
    assert 0 < len(before) < total, "the first run should stop part-way"

    second = start()
    try:
        wait_until(lambda: len(_written(out)) >= total, 180, "every item written", interval=0.5)
        time.sleep(1)  # a batch that would write something twice would land now
    finally:
        second.stop()
    assert _written(out) == list(range(total))
    # read back through Connect with the files source too
    back = sources.files(str(out), glob="part*").read(spark)
    assert back.count() == total


def test_jetconnect_doctor_checks_a_connect_server(spark):
    """``jetconnect doctor --remote``: the server's Python imports jetconnect and the plugins."""
    connect_url = "sc://127.0.0.1:15002"  # conftest.CONNECT_URL, where the fixture's server listens
    result = subprocess.run(
        [sys.executable, "-m", "jetconnect.cli", "doctor", "--remote", connect_url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr[-3000:]
    assert f"[ok] Spark session ({connect_url})" in out
    assert "[ok] plugin kafka on the workers" in out
    assert out.rstrip().endswith("jetconnect doctor: all checks passed")
