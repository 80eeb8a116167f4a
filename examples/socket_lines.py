"""Lines from a TCP server into parquet, streaming, then back out to another server: the socket
source (exactly-once for what it received: its receiver spools before a micro-batch takes the
lines) and the socket sink. Both servers run in this script, so no server is needed.

    .venv/bin/python examples/socket_lines.py [--lines N]

It streams until every line the first server sent has arrived, stops, sends the parquet rows to
the second server as lines of its own (`to_string_fn`), and compares.
"""

from __future__ import annotations

import argparse
import socketserver
import sys
import tempfile
import threading
import time

from jetconnect import sinks, sources
from jetconnect.testing import spark_builder

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--lines", type=int, default=1_000)
parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for every line")
args = parser.parse_args()
work = tempfile.mkdtemp(prefix="jetconnect-example-")
received: list[str] = []


class Sender(socketserver.StreamRequestHandler):  # sends its lines once, then keeps the connection open
    sent = False

    def handle(self) -> None:
        if not Sender.sent:
            Sender.sent = True
            self.wfile.write("".join(f"line {i}\n" for i in range(args.lines)).encode())
        while self.rfile.read(1):
            pass


class Collector(socketserver.StreamRequestHandler):  # keeps every line a client sends
    def handle(self) -> None:
        received.extend(line.decode().rstrip("\n") for line in self.rfile)


servers = [socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler) for handler in (Sender, Collector)]
for server in servers:
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
(_, source_port), (_, sink_port) = (server.server_address for server in servers)

spark = spark_builder("example-socket-lines").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")

lines = sources.socket("127.0.0.1", source_port, wal_location=f"{work}/checkpoint-wal")  # beside the checkpoint
query = (
    lines.read_stream(spark)
    .writeStream.format("parquet")
    .option("path", f"{work}/out")
    .option("checkpointLocation", f"{work}/checkpoint")
    .start()
)

# a socket has no end: stream until every line sent has arrived, then stop
deadline = time.monotonic() + args.timeout
while sum(p["numInputRows"] for p in query.recentProgress) < args.lines and time.monotonic() < deadline:
    time.sleep(1)
query.stop()

rows = spark.read.parquet(f"{work}/out")
# Jet's toStringFn: any line made from each row (a pyspark Row)
sinks.socket("127.0.0.1", sink_port, to_string_fn=lambda row: f"got {row.line}").write(rows)

deadline = time.monotonic() + 30
while len(received) < args.lines and time.monotonic() < deadline:
    time.sleep(0.2)
expected = [f"got line {i}" for i in range(args.lines)]
ok = rows.count() == args.lines and sorted(received) == sorted(expected)
print(
    f"socket_lines: {'ok' if ok else 'FAILED'}: {rows.count()} lines of {args.lines} streamed into parquet, "
    f"{len(received)} sent on to the second server"
)
spark.stop()
sys.exit(0 if ok else 1)
