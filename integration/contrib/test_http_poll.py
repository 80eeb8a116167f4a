"""The contrib example plugin: installed from contrib/, found by entry point, run on Spark."""

from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest

from jetconnect import sources
from jetconnect.cli import plugins_table


@pytest.fixture
def counter_server():
    hits = {"n": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits["n"] += 1
            body = f"hit {hits['n']}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", hits
    server.shutdown()


def test_installed_contrib_plugin_is_listed():
    assert "http_poll" in sources
    entry = next(row for row in plugins_table() if row["plugin"] == "http_poll")
    assert entry["sources"] == {"http_poll": "exactly-once"}


def test_polls_into_a_stream_through_the_wal(spark, tmp_path, counter_server):
    url, hits = counter_server
    df = sources.http_poll(url, interval_ms=100).read_stream(spark, wal_location=str(tmp_path / "wal"))
    query = (
        df.writeStream.format("memory").queryName("polls").option("checkpointLocation", str(tmp_path / "ck")).start()
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and spark.sql("select * from polls").count() < 3:
        time.sleep(0.3)
    query.stop()
    bodies = [r.body for r in spark.sql("select body from polls").collect()]
    assert len(bodies) >= 3
    assert bodies == [f"hit {i}" for i in range(1, len(bodies) + 1)]  # in order, none twice


def test_an_endpoint_that_is_gone_fails_the_query_naming_the_source(spark, tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    df = sources.http_poll(f"http://127.0.0.1:{port}/", interval_ms=100).read_stream(
        spark, wal_location=str(tmp_path / "wal")
    )
    query = df.writeStream.format("noop").option("checkpointLocation", str(tmp_path / "ck")).start()
    try:
        with pytest.raises(Exception, match=r"source 'http_poll' processor 0/1: fill_buffer_fn raised URLError"):
            query.awaitTermination(120)
            raise AssertionError("the query did not fail within 120 s")
    finally:
        query.stop()
