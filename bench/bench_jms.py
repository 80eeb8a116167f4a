"""JMS connector vs raw stomp.py on the same messages, against the real ActiveMQ (one run).

    python bench/bench_jms.py [--messages 100000] [--repeat 2]

The raw sides are stomp.py as it ships (``stomp.Connection12`` and a listener), frame parser
and all; jetconnect reads frames with its own reader (``jetconnect_jms/stomp_frames.py``).
Sink: raw = one stomp.py connection sending every message; jetconnect =
``sinks.jms_queue(...).write(df)`` of the same bodies; both send transactions of 10k messages
(the sink one per partition).
Source: raw = one stomp.py connection (the source's default prefetch) that takes whatever
has arrived and acknowledges it client-individually, all the ACK frames in one write and one
receipt per batch: the fastest way we found to consume without losing a message (on ActiveMQ
5.17 a cumulative ``ack: client`` ACK was ~10x slower, acknowledging inside a transaction ~4x
slower); jetconnect = a streaming query (``noop`` sink) from ``sources.jms_queue``, its consumer
in an executor's receiver spooling under ``wal_location``, until every message has gone through.
The broker starts on an empty store (``activemq.sh fresh``). Both sides are warmed up on 5k
messages first (Spark's first streaming query JIT-compiles its micro-batch machinery), then run
``--repeat`` rounds alternately; the best round of each is shown. Ratios > 1 mean jetconnect is faster.
Memory is sampled while jetconnect's side runs (the raw side is this process alone); the rows also
go to ``bench/results/jms.json``."""

from __future__ import annotations

import collections
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import stomp
from _harness import Bench, Row, bench_parser

from jetconnect import sinks, sources
from jetconnect.testing import shared_spark_session
from jetconnect_jms.source import DEFAULT_PREFETCH

ROOT = Path(__file__).resolve().parent.parent
#: Messages per STOMP transaction, on both sides: one huge transaction strains the broker's memory.
TRANSACTION = 10_000


class _RawListener(stomp.ConnectionListener):
    """What a hand-written stomp.py consumer keeps: the received frames and the receipts."""

    def __init__(self) -> None:
        self.messages: collections.deque = collections.deque()
        self.receipts: set[str] = set()
        self.cond = threading.Condition()

    def on_message(self, frame) -> None:  # type: ignore[no-untyped-def]
        self.messages.append(frame)

    def on_receipt(self, frame) -> None:  # type: ignore[no-untyped-def]
        with self.cond:
            self.receipts.add(frame.headers["receipt-id"])
            self.cond.notify_all()

    def wait(self, receipt: str) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: receipt in self.receipts, timeout=600):
                raise TimeoutError(f"no receipt {receipt}")


def _raw_connection() -> tuple[stomp.Connection12, _RawListener]:
    conn = stomp.Connection12([("127.0.0.1", 61613)], auto_decode=False, heartbeats=(5000, 0))
    listener = _RawListener()
    conn.set_listener("raw", listener)
    conn.connect(wait=True)
    return conn, listener


def raw_send(destination: str, bodies: list[str]) -> float:
    started = time.perf_counter()
    conn, listener = _raw_connection()
    for chunk in range(0, len(bodies), TRANSACTION):  # the same transactions as the sink's partitions
        tx = f"tx{chunk}"
        conn.begin(tx)
        for body in bodies[chunk : chunk + TRANSACTION]:
            conn.send(destination, body, headers={"persistent": "true"}, transaction=tx)
        conn.commit(tx, receipt=f"commit-{tx}")
        listener.wait(f"commit-{tx}")  # every message of the transaction is on the broker
    conn.disconnect()
    return time.perf_counter() - started


def raw_receive(destination: str, count: int) -> float:
    started = time.perf_counter()
    conn, listener = _raw_connection()
    conn.subscribe(
        destination, id="raw", ack="client-individual", headers={"activemq.prefetchSize": str(DEFAULT_PREFETCH)}
    )
    got = 0
    while got < count:
        batch = []
        while listener.messages:
            batch.append(listener.messages.popleft())
        if not batch:
            time.sleep(0.001)
            continue
        # All the ACK frames in one write, the last asking for a receipt (escaping the ':' of
        # ActiveMQ's ids as STOMP 1.2 requires).
        ids = [frame.headers["ack"].replace("\\", "\\\\").replace(":", "\\c") for frame in batch]
        receipt = f"ack-{got}"
        frames = "".join(f"ACK\nid:{ack_id}\n\n\x00" for ack_id in ids[:-1])
        frames += f"ACK\nid:{ids[-1]}\nreceipt:{receipt}\n\n\x00"
        conn.transport.send(frames.encode())
        listener.wait(receipt)
        got += len(batch)
    conn.disconnect()
    return time.perf_counter() - started


def jetconnect_send(spark, destination: str, bodies: list[str], message_fn=None) -> float:  # type: ignore[no-untyped-def]
    partitions = max(1, len(bodies) // TRANSACTION)
    df = spark.createDataFrame([(b,) for b in bodies], "body string").repartition(partitions).cache()
    df.count()  # build the DataFrame before the clock starts
    started = time.perf_counter()
    sinks.jms_queue(destination, message_fn=message_fn).write(df)
    elapsed = time.perf_counter() - started
    df.unpersist()
    return elapsed


def jetconnect_receive(spark, destination: str, count: int, workdir: Path) -> float:
    started = time.perf_counter()
    source = sources.jms_queue(destination, wal_location=str(workdir / "wal"))
    query = (
        source.read_stream(spark)
        .writeStream.format("noop")
        .option("checkpointLocation", str(workdir / "cp"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    rows: dict[int, int] = {}  # per batch id: recentProgress keeps only the last 100 batches
    try:
        while sum(rows.values()) < count:
            if query.exception() is not None:
                raise query.exception()
            rows.update((p["batchId"], p["numInputRows"]) for p in query.recentProgress)
            time.sleep(0.05)
        return time.perf_counter() - started
    finally:
        query.stop()


def main() -> None:
    parser = bench_parser(__doc__, repeat=2)
    parser.add_argument("--messages", type=int, default=100_000)
    args = parser.parse_args()
    n = args.messages
    # an empty store: messages left by tests grow KahaDB, and the broker slows with it
    subprocess.run(["bash", str(ROOT / "scripts/servers/activemq.sh"), "fresh"], check=True, capture_output=True)
    spark = shared_spark_session()
    bodies = [f"message {i:08d} " + "x" * 40 for i in range(n)]
    run = uuid.uuid4().hex[:8]
    workdir = Path(tempfile.mkdtemp(prefix="bench-jms-"))
    times: dict[str, list[float]] = {"send raw": [], "send jet": [], "recv raw": [], "recv jet": [], "send fn": []}
    title = f"JMS over STOMP, ActiveMQ 5.17 on 127.0.0.1, {n:,} persistent messages of ~60 bytes, rounds alternating"
    cases = {
        "send": "sink vs stomp.py send",
        "recv": "source vs stomp.py consumer",
        "send fn": "sink, message_fn vs stomp.py send",
    }
    with Bench("jms", args, results=args.results, title=title) as bench:
        try:
            # Warm up both sides on a small queue: Spark's first streaming query pays for JIT
            # compiling the micro-batch machinery, which a long-running query pays once.
            warm = bodies[: min(n, 5_000)]
            for _ in range(args.warmup):
                raw_send(f"/queue/bench-warm-raw-{run}", warm)
                raw_receive(f"/queue/bench-warm-raw-{run}", len(warm))
                jetconnect_send(spark, f"/queue/bench-warm-jet-{run}", warm)
                jetconnect_receive(spark, f"/queue/bench-warm-jet-{run}", len(warm), workdir / "warm")

            # each queue is drained before the next is filled: 100k waiting messages are all the
            # broker's memory limit should have to hold (otherwise flow control stalls the producers)
            for round_ in range(args.repeat):
                raw_q, jet_q = f"/queue/bench-raw-{run}-{round_}", f"/queue/bench-jet-{run}-{round_}"
                times["send raw"].append(raw_send(raw_q, bodies))
                times["recv raw"].append(raw_receive(raw_q, n))
                with bench.measure(cases["send"]):
                    times["send jet"].append(jetconnect_send(spark, jet_q, bodies))
                with bench.measure(cases["recv"]):
                    times["recv jet"].append(jetconnect_receive(spark, jet_q, n, workdir / f"round{round_}"))
                # Jet's messageFn: a Python call per row makes each message (drained raw afterwards)
                fn_q = f"/queue/bench-fn-{run}-{round_}"
                with bench.measure(cases["send fn"]):
                    times["send fn"].append(jetconnect_send(spark, fn_q, bodies, message_fn=lambda row: row.body))
                raw_receive(fn_q, n)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

        best = {what: min(seconds) for what, seconds in times.items()}
        rate = {what: f"{n / seconds:,.0f} msg/s" for what, seconds in best.items()}
        bench.add(
            Row(
                cases["send"],
                best["send jet"],
                best["send raw"],
                target=0.8,
                note=f"{rate['send jet']} vs {rate['send raw']}; transactions of {TRANSACTION:,}",
            )
        )
        bench.add(
            Row(
                cases["recv"],
                best["recv jet"],
                best["recv raw"],
                target=0.8,
                note=f"{rate['recv jet']} vs {rate['recv raw']}; streaming query into noop",
            )
        )
        bench.add(
            Row(
                cases["send fn"],
                best["send fn"],
                best["send raw"],
                note=f"{rate['send fn']} vs {rate['send raw']}; a Python call per message",
            )
        )
    spark.stop()


if __name__ == "__main__":
    main()
