"""An HTTP endpoint polled as a stream into parquet: the contrib http_poll source (a plugin of
~60 lines on the public SourceBuilder), exactly-once for what it fetched. The endpoint runs in
this script, so no server is needed.

    .venv/bin/python examples/http_poll_status.py [--polls N]

It streams until --polls answers have arrived, stops, and checks that they arrived in order, each
once.
"""

from __future__ import annotations

import argparse
import http.server
import sys
import tempfile
import threading
import time

from jetconnect import sources
from jetconnect.testing import spark_builder

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--polls", type=int, default=10)
parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for every answer")
args = parser.parse_args()
work = tempfile.mkdtemp(prefix="jetconnect-example-")


class Status(http.server.BaseHTTPRequestHandler):  # answers "hit 1", "hit 2", ...
    hits = 0

    def do_GET(self) -> None:
        Status.hits += 1
        body = f"hit {Status.hits}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Status)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}/status"

spark = spark_builder("example-http-poll").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")

polls = sources.http_poll(url, interval_ms=200).read_stream(spark, wal_location=f"{work}/checkpoint-wal")
query = (
    polls.writeStream.format("parquet")
    .option("path", f"{work}/out")
    .option("checkpointLocation", f"{work}/checkpoint")
    .start()
)

# polling has no end: stream until enough answers have arrived, then stop
deadline = time.monotonic() + args.timeout
while sum(p["numInputRows"] for p in query.recentProgress) < args.polls and time.monotonic() < deadline:
    time.sleep(1)
query.stop()

rows = spark.read.parquet(f"{work}/out").orderBy("fetched_at").collect()
bodies = [r.body for r in rows]
ok = len(bodies) >= args.polls and bodies == [f"hit {i}" for i in range(1, len(bodies) + 1)]
ok = ok and {(r.url, r.status) for r in rows} == {(url, 200)}
print(f"http_poll_status: {'ok' if ok else 'FAILED'}: {len(bodies)} answers of {url}, in order, each once")
server.shutdown()
spark.stop()
sys.exit(0 if ok else 1)
