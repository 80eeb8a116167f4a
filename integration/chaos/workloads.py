"""The exactly-once pairs of the chaos soak: for each, how input is made, how its pipeline is run,
how its server is restarted and how the result is counted.

Every pipeline is one of ``integration/pipelines/*.py`` (the crash tests' programs), and input and
counting reuse the crash tests' own helpers: they are loaded from the test files themselves
(:func:`from_tests`), so the soak and the tests produce and count the same way and nothing is
copied. What only the soak needs (input added run after run, a server restarted in the middle,
counting lost and duplicated rows instead of asserting) lives here, once for all pairs.

A pair's input grows by a chunk before every run, so each killed run has work in flight.
"""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from jetconnect.testing import PipelineProcess, checkpoint_batches, recorded_rows

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = ROOT / "integration" / "pipelines"
SERVERS = ROOT / "scripts" / "servers"
PYTHON = Path(sys.executable)

_loaded: dict[str, ModuleType] = {}


def from_tests(relative: str) -> ModuleType:
    """A test module or conftest of ``integration/`` by its path (they are not a package).

    Its folder becomes a package of its own (``chaos_from_imap`` for ``imap/...``), so that a test
    module's relative imports (``from .conftest import ...``) find their neighbours."""
    if relative not in _loaded:
        path = ROOT / "integration" / relative
        package = "chaos_from_" + str(Path(relative).parent).replace("/", "_").replace(".", "top")
        if package not in sys.modules:
            spec = importlib.util.spec_from_loader(package, loader=None, is_package=True)
            assert spec is not None
            holder = importlib.util.module_from_spec(spec)
            holder.__path__ = [str(path.parent)]
            sys.modules[package] = holder
        name = f"{package}.{path.stem}"
        module = sys.modules.get(name)  # already imported by a neighbour's relative import
        if module is None:
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None, path
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        _loaded[relative] = module
    return _loaded[relative]


def server_script(name: str, verb: str, timeout: float = 300) -> None:
    """``scripts/servers/NAME.sh VERB`` (``VERB`` may carry arguments: ``"kill-member 2"``); raise
    with its output if it fails."""
    env = {**os.environ, "PYTHON": str(PYTHON), "PATH": f"{PYTHON.parent}:{os.environ.get('PATH', '')}"}
    result = subprocess.run(
        ["bash", str(SERVERS / f"{name}.sh"), *verb.split()], capture_output=True, text=True, timeout=timeout, env=env
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"{name}.sh {verb} exited {result.returncode}: {result.stdout[-2000:]} {result.stderr[-2000:]}"
        )


def server_running(name: str) -> bool:
    env = {**os.environ, "PYTHON": str(PYTHON), "PATH": f"{PYTHON.parent}:{os.environ.get('PATH', '')}"}
    return (
        subprocess.run(
            ["bash", str(SERVERS / f"{name}.sh"), "status"], capture_output=True, timeout=60, env=env
        ).returncode
        == 0
    )


# --- Spark, for reading what Spark's own file sink committed (it honours _spark_metadata) ---------

_spark: Any = None


def spark() -> Any:
    global _spark
    if _spark is None:
        from jetconnect.testing import shared_spark_session

        _spark = shared_spark_session()
    return _spark


def parquet_rows(path: Path, *columns: str) -> list[tuple]:
    """The committed rows of a Spark file-sink output folder (none yet: empty)."""
    from pyspark.errors import AnalysisException

    try:
        return [tuple(r) for r in spark().read.parquet(str(path)).select(*columns).collect()]
    except AnalysisException:  # nothing committed yet: no schema to infer
        return []


@dataclass
class Count:
    """What arrived, against what was expected: the row of the soak's table."""

    rows: int
    lost: int
    duplicated: int
    details: list[str] = field(default_factory=list)


def compare(expected: Counter | set, arrived: Counter, what: str = "rows") -> Count:
    """``expected`` keys each once; ``arrived`` counts per key. Lost: expected keys that never
    arrived; duplicated: every arrival past the first, and anything that arrived unexpected."""
    expected_keys = set(expected)
    lost = sorted(expected_keys - set(arrived), key=str)
    twice = {k: n for k, n in arrived.items() if n > 1}
    unexpected = sorted(set(arrived) - expected_keys, key=str)
    details = []
    if lost:
        details.append(f"{len(lost)} {what} lost, e.g. {lost[:8]}")
    if twice:
        details.append(
            f"{sum(n - 1 for n in twice.values())} extra copies of {len(twice)} {what}, e.g. {list(twice.items())[:8]}"
        )
    if unexpected:
        details.append(f"{len(unexpected)} {what} that were never sent, e.g. {unexpected[:8]}")
    return Count(len(expected_keys), len(lost), sum(n - 1 for n in twice.values()) + len(unexpected), details)


class Pair:
    """One source × sink pair. Subclasses fill in the pipeline, input, server and count."""

    name = ""
    server: str | None = None  # scripts/servers/NAME.sh, restarted once mid-stream
    servers_needed: tuple[str, ...] = ()
    final_exits = True  # the final run drains and exits by itself (AvailableNow)
    window = 5.0  # s: a kill lands uniformly within this after the run's first progress
    rng = random.Random(0)  # the soak hands each pair its seeded generator (which member dies, ...)

    def __init__(self, work: Path) -> None:
        self.work = work
        self.checkpoint = work / "checkpoint"

    # input and pipeline
    def setup(self) -> None: ...
    def add_input(self, cycle: int) -> None: ...
    def command(self, final: bool) -> tuple[Path, list[str], dict[str, str]]:
        raise NotImplementedError

    # the soak's hooks
    def after_kill(self) -> None: ...
    def restart_server(self) -> None:
        assert self.server is not None
        server_script(self.server, "stop")
        time.sleep(1.0)
        server_script(self.server, "start")

    def complete(self) -> bool:
        """For a final run that does not exit by itself: has everything expected arrived?"""
        raise NotImplementedError

    def before_final(self, run: PipelineProcess) -> None: ...
    def count(self) -> Count:
        raise NotImplementedError

    def cleanup(self) -> None: ...


# --- core builder streams -> parquet ---------------------------------------------------------------


class CoreToParquet(Pair):
    """``core_counter.py``: a builder stream (snapshot counter or WAL dispenser) into parquet.

    Its ``--total`` grows by a chunk per run: the counter and the dispenser continue past the old
    end from what the checkpoint holds."""

    chunk, initial = 200, 300

    def __init__(self, work: Path, mode: str) -> None:
        super().__init__(work)
        self.mode, self.name = mode, f"core {mode} stream -> parquet"
        self.total = 0

    def setup(self) -> None:
        (self.work / "work").mkdir(parents=True, exist_ok=True)

    def add_input(self, cycle: int) -> None:
        self.total += self.initial if cycle == 0 else self.chunk

    def command(self, final: bool):
        return (
            PIPELINES / "core_counter.py",
            [
                "--mode",
                self.mode,
                "--checkpoint",
                str(self.checkpoint),
                "--out",
                str(self.work / "out"),
                "--total",
                str(self.total),
                "--work",
                str(self.work / "work"),
            ],
            {},
        )

    def count(self) -> Count:
        return compare(set(range(self.total)), Counter(n for (n,) in parquet_rows(self.work / "out", "n")), "numbers")


# --- file watcher -> files -------------------------------------------------------------------------


class FilesToFiles(Pair):
    name = "file_watcher -> files"
    chunk = 1500

    def setup(self) -> None:
        self.files = from_tests("files/test_files_crash.py")
        self.source = self.work / "in"
        self.source.mkdir(parents=True)
        self.expected: list[str] = []

    def add_input(self, cycle: int) -> None:
        # appended to four files in turn, so old files grow and new ones appear
        lines = [f"c{cycle}-{i}" for i in range(self.chunk)]
        self.files._append(self.source / f"f{cycle % 4}.log", lines)
        self.expected += lines

    def command(self, final: bool):
        args = [str(self.source), str(self.work / "out"), str(self.checkpoint), "5000" if final else "300"]
        return PIPELINES / "files_watcher_to_files.py", [*args, *(["--until-done"] if final else [])], {}

    def count(self) -> Count:
        return compare(set(self.expected), self.files._visible_lines(self.work / "out"), "lines")


# --- HDFS stream -> HDFS ---------------------------------------------------------------------------


class HdfsToHdfs(Pair):
    name, server, servers_needed = "hdfs stream -> hdfs", "hdfs", ("hdfs",)
    files_per_run, lines_per_file = 2, 2000
    url = "http://127.0.0.1:9870"

    def setup(self) -> None:
        from jetconnect_hdfs import HdfsConnection, WebHdfsFileSystem

        self.fs = WebHdfsFileSystem(HdfsConnection(self.url, user="root"))
        self.dir = f"/jetconnect-chaos/{uuid.uuid4().hex[:12]}"
        self.fs.mkdirs(f"{self.dir}/in")
        self.expected: list[str] = []

    def add_input(self, cycle: int) -> None:
        for f in range(self.files_per_run):
            lines = [f"c{cycle}-f{f}-{i:05d}" for i in range(self.lines_per_file)]
            with self.fs.create(f"{self.dir}/in/c{cycle:03d}-{f}.txt") as out:
                out.write(("\n".join(lines) + "\n").encode())
            self.expected += lines

    def command(self, final: bool):
        args = [self.url, f"{self.dir}/in", f"{self.dir}/out", str(self.checkpoint), "1"]
        return PIPELINES / "hdfs_stream_to_hdfs.py", [*args, *(["--until-done"] if final else [])], {}

    def restart_server(self) -> None:
        # both daemons, one after the other: the DataNode dies by SIGKILL (reads and writes of blocks
        # go through it), then the NameNode (metadata, every WebHDFS call's first stop) restarts
        server_script("hdfs", "kill-datanode")
        time.sleep(1.0)
        server_script("hdfs", "start-datanode")
        server_script("hdfs", "restart-namenode")

    def _count(self) -> Count:
        lines: list[str] = []
        for f in self.fs.list_files(f"{self.dir}/out"):
            lines += self.fs.read_range(f.path, 0, f.size).decode().splitlines()
        return compare(set(self.expected), Counter(lines), "lines")

    # no cleanup: the HDFS folder (input and output) stays for a look at what went wrong; it is printed
    def count(self) -> Count:  # type: ignore[no-redef]
        result = HdfsToHdfs._count(self)
        result.details.append(f"input and output kept in HDFS under {self.dir}")
        return result


# --- map_journal -> map ----------------------------------------------------------------------------


class JournalToMap(Pair):
    """The journal of a map on the embedded SQLite store (the crash test's store; the pair on the
    Hazelcast cluster, with a member SIGKILL, is integration/imap/test_hazelcast_crash.py)."""

    name = "map_journal -> map"

    def setup(self) -> None:
        from jetconnect_imap import connect

        self.imap = from_tests("imap/journal_workload.py")
        self.store = f"sqlite:///{self.work}/imap.db"
        self.grid = connect(self.store)
        self.source = self.grid.map(f"src-{uuid.uuid4().hex[:8]}", journal_capacity=1_000_000)
        self.target = f"dst-{uuid.uuid4().hex[:8]}"

    def add_input(self, cycle: int) -> None:
        self.imap.changes(self.source, cycle)

    def command(self, final: bool):
        args = [self.store, self.source.name, self.target, str(self.checkpoint), "150"]
        return PIPELINES / "imap_journal_to_map.py", [*args, *(["--until-done"] if final else [])], {}

    def count(self) -> Count:
        from jetconnect_imap import EventType

        # every source event applied once gives the target the same event (key, type, new value)
        source = Counter(
            (e.key, e.type.name, e.new_value) for e in self.source.journal() if e.type is not EventType.CLEARED
        )
        target = Counter((e.key, e.type.name, e.new_value) for e in self.grid.map(self.target).journal())
        lost = source - target
        extra = target - source
        result = Count(sum(source.values()), sum(lost.values()), sum(extra.values()))
        if lost:
            result.details.append(f"{result.lost} journal events not applied, e.g. {list(lost)[:8]}")
        if extra:
            result.details.append(f"{result.duplicated} events applied twice or unexpected, e.g. {list(extra)[:8]}")
        if self.grid.map(self.target).to_dict() != self.source.to_dict():
            result.details.append("the target map differs from the source map")
            result.lost = max(result.lost, 1)
        return result


class JournalToMapOnHazelcast(Pair):
    """The journal of a map on the 3-member Hazelcast cluster into another map: the crash test
    ``integration/imap/test_hazelcast_crash.py``'s pipeline, changes and check, with a member
    SIGKILLed mid-stream (``hazelcast.sh kill-member N``) and started again as the server restart.

    The map sink re-puts a re-delivered batch (exactly-once for the map's content), so counting
    is per key, as the crash test does: *lost* is a key whose final value in the target is not the
    source's (missing, stale, or not removed); *duplicated* is a key whose target journal, repeats
    of one value collapsed, is not a subsequence of the source's (a change applied again after a
    later one, or a value that never was), and a key the source never had. Maps are named per run
    and destroyed at the end (kept, and named, when the count is not clean)."""

    name, server, servers_needed = "map_journal -> map (hazelcast)", "hazelcast member", ("hazelcast",)

    def setup(self) -> None:
        from hazelcast import HazelcastClient
        from hazelcast.config import IntType

        self.crash = from_tests("imap/journal_workload.py")
        self.store = from_tests("imap/conftest.py").HAZELCAST_URL
        members, _, cluster = self.store.removeprefix("hazelcast://").partition("/")
        # configured as the crash test's client (imap/conftest.py's ``hz``): 64-bit ints
        self.client = HazelcastClient(
            cluster_name=cluster,
            cluster_members=members.split(","),
            default_int_type=IntType.LONG,
            cluster_connect_timeout=30,
        )
        run = uuid.uuid4().hex[:8]
        self.source_name, self.target_name = f"chaos-src-{run}", f"chaos-dst-{run}"
        self.source = self.client.get_map(self.source_name).blocking()
        self.clean = False

    def add_input(self, cycle: int) -> None:
        self.crash.changes(self.source, cycle)

    def command(self, final: bool):
        args = [self.store, self.source_name, self.target_name, str(self.checkpoint), "150"]
        return PIPELINES / "imap_journal_to_map.py", [*args, *(["--until-done"] if final else [])], {}

    def restart_server(self) -> None:
        # one member of three dies without a goodbye (its partitions' backups on the others take
        # over), then starts again and rejoins; start-member returns when every member lists 3
        # and the cluster is safe, and the soak's own client must list 3 as well
        member = self.rng.randint(1, 3)
        self.killed = member
        server_script("hazelcast", f"kill-member {member}")
        time.sleep(1.0)
        server_script("hazelcast", f"start-member {member}", timeout=600)
        deadline = time.monotonic() + 120
        while len(self.client.cluster_service.get_members()) != 3:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the soak's client does not see 3 members after member {member} restarted")
            time.sleep(0.5)

    def count(self) -> Count:
        theirs = self.crash.history(self.client, self.source_name)
        ours = self.crash.history(self.client, self.target_name)
        source: dict[str, Any] = dict(self.source.entry_set())
        target: dict[str, Any] = dict(self.client.get_map(self.target_name).blocking().entry_set())
        lost = sorted(k for k in theirs if target.get(k) != source.get(k))
        out_of_order = sorted(
            k for k, values in ours.items() if k in theirs and not self.crash.is_subsequence(values, theirs[k])
        )
        never = sorted((set(ours) | set(target)) - set(theirs))
        result = Count(len(theirs), len(lost), len(out_of_order) + len(never))
        events = sum(len(v) for v in theirs.values())
        result.details.append(f"{len(theirs)} keys, {events} distinct values in the source's journal")
        if lost:
            result.details.append(
                f"{len(lost)} keys whose final value differs, e.g. "
                f"{[(k, source.get(k), target.get(k)) for k in lost[:8]]} (key, source, target)"
            )
        for k in out_of_order[:8]:
            result.details.append(f"key {k}: target took {ours[k]}, source {theirs[k]}")
        if never:
            result.details.append(f"{len(never)} keys the source never had, e.g. {never[:8]}")
        if getattr(self, "killed", None):
            result.details.append(f"member {self.killed} was SIGKILLed and restarted")
        self.clean = not (lost or out_of_order or never)
        if not self.clean:
            result.details.append(f"maps kept on the cluster: {self.source_name}, {self.target_name}")
        return result

    def cleanup(self) -> None:
        if self.clean:
            self.client.get_map(self.source_name).blocking().destroy()
            self.client.get_map(self.target_name).blocking().destroy()
        self.client.shutdown()


# --- JDBC stream -> JDBC ---------------------------------------------------------------------------


class JdbcToJdbc(Pair):
    name, server, servers_needed = "jdbc stream -> jdbc", "postgresql", ("postgresql",)
    chunk, initial = 500, 800

    def setup(self) -> None:
        self.jdbc = from_tests("jdbc/test_jdbc_streaming.py")
        self.url = self.jdbc.POSTGRES
        self.source, self.target = self.jdbc.unique("chaos_src"), self.jdbc.unique("chaos_dst")
        self.rows = 0

    def add_input(self, cycle: int) -> None:
        import sqlalchemy as sa

        if cycle == 0:  # the crash test's table and first rows
            self.jdbc.fill(self.url, self.source, self.initial)
            self.rows = self.initial
            return
        n = self.chunk
        engine = sa.create_engine(self.url)
        with engine.begin() as conn:
            conn.execute(
                sa.text(f"insert into {self.source} (id, payload) values (:id, :payload)"),
                [{"id": i, "payload": f"event-{i}"} for i in range(self.rows + 1, self.rows + n + 1)],
            )
        engine.dispose()
        self.rows += n

    def command(self, final: bool):
        return (
            PIPELINES / "jdbc_stream_to_sink.py",
            [self.url, self.source, self.url, self.target, str(self.checkpoint), "100"],
            {},
        )

    def restart_server(self) -> None:
        server_script("postgresql", "restart")

    def count(self) -> Count:
        import sqlalchemy as sa

        engine = sa.create_engine(self.url)
        with engine.connect() as conn:
            ids = Counter(r[0] for r in conn.execute(sa.text(f"select id from {self.target}")))
        engine.dispose()
        return compare(set(range(1, self.rows + 1)), ids, "ids")


# --- Kafka -> parquet, Kafka -> Kafka --------------------------------------------------------------


class _Kafka(Pair):
    server, servers_needed = "kafka", ("kafka",)
    chunk, partitions = 600, 3
    # s the pipelines retry a broker that does not answer (broker_timeout_s; the connectors' default
    # is 30): a SIGKILLed broker took 50-70 s to come back at load 30 here, and a run that gives up
    # first dies by itself, so a restart mid-stream would not be survived in place
    timeout = "240"

    def setup(self) -> None:
        conftest = from_tests("kafka/conftest.py")
        self.kafka = conftest.Kafka(conftest.BOOTSTRAP)
        self.topic = self.kafka.topic(partitions=self.partitions, prefix="chaos-in")
        self.sent = 0

    def add_input(self, cycle: int) -> None:
        start = self.sent
        self.sent += self.kafka.produce(
            self.topic, (f"r{i}" for i in range(start, start + self.chunk)), partitions=self.partitions
        )

    def restart_server(self) -> None:
        # SIGKILL, as a crash of the broker's machine, then a start that recovers its log from disk
        server_script("kafka", "kill")
        server_script("kafka", "start")


class KafkaToParquet(_Kafka):
    name = "kafka -> parquet"

    def command(self, final: bool):
        args = [self.kafka.bootstrap, self.topic, str(self.work / "out"), str(self.checkpoint), "50", self.timeout]
        return PIPELINES / "kafka_to_parquet.py", [*args, *(["--until-done"] if final else [])], {}

    def count(self) -> Count:
        rows = parquet_rows(self.work / "out", "partition", "offset", "value")
        result = compare({f"r{i}" for i in range(self.sent)}, Counter(v for _, _, v in rows), "records")
        by_offset = Counter((p, o) for p, o, _ in rows)
        if any(n > 1 for n in by_offset.values()):
            result.details.append(f"(partition, offset) twice: {[k for k, n in by_offset.items() if n > 1][:8]}")
        return result


class KafkaToKafka(_Kafka):
    name = "kafka -> kafka"

    def setup(self) -> None:
        super().setup()
        self.out = self.kafka.topic(partitions=2, prefix="chaos-out")

    def command(self, final: bool):
        args = [self.kafka.bootstrap, self.topic, self.out, str(self.checkpoint), "60", self.timeout]
        return PIPELINES / "kafka_to_kafka.py", [*args, *(["--until-done"] if final else [])], {}

    def count(self) -> Count:
        values = Counter(v.decode() for *_, v in self.kafka.read_all(self.out, read_committed=True))
        return compare({f"R{i}" for i in range(self.sent)}, values, "records")


# --- JMS queue -> parquet --------------------------------------------------------------------------


class JmsToParquet(Pair):
    name, server, servers_needed = "jms queue -> parquet", "activemq", ("activemq",)
    final_exits = False  # the pipeline streams until killed
    chunk = 1000

    def setup(self) -> None:
        self.jms = from_tests("jms/test_jms.py")
        self.queue = self.jms.unique("chaos")
        self.bodies: list[str] = []

    def add_input(self, cycle: int) -> None:
        bodies = [f"c{cycle}-event {i}" for i in range(self.chunk)]
        self.jms.produce(f"/queue/{self.queue}", bodies)
        self.bodies += bodies

    def command(self, final: bool):
        return (
            PIPELINES / "jms_queue_to_parquet.py",
            [self.queue, str(self.checkpoint), str(self.work / "out"), "100"],
            {},
        )

    def complete(self) -> bool:
        return len(parquet_rows(self.work / "out", "body")) >= len(self.bodies)

    def count(self) -> Count:
        return compare(set(self.bodies), Counter(b for (b,) in parquet_rows(self.work / "out", "body")), "messages")


# --- socket -> parquet -----------------------------------------------------------------------------


class SocketToParquet(Pair):
    """Lines from the crash test's line server (a thread of this process) into parquet.

    A socket cannot replay: what the receiver held in memory when the driver died is lost by
    design. So what must arrive is what was *received* (committed to parquet or durable in the
    spool) at each kill, as in the crash test, plus the lines sent to the last run's connection."""

    name, server = "socket -> parquet", "line server"
    final_exits = False

    def setup(self) -> None:
        self.socket_tests = from_tests("socket/test_socket.py")
        self.line_server = from_tests("socket/conftest.py").LineServer()
        self.sender = self.socket_tests.Sender(self.line_server).__enter__()
        self.received: set[str] = set()
        self.after: set[str] = set()
        self.out, self.wal = self.work / "out", Path(str(self.checkpoint) + "-wal")

    def command(self, final: bool):
        return PIPELINES / "socket_to_parquet.py", [str(self.line_server.port), str(self.checkpoint), str(self.out)], {}

    def after_kill(self) -> None:
        self.received |= {line for (line,) in parquet_rows(self.out, "line")}
        self.received |= {row["line"] for row in recorded_rows(self.wal)}

    def restart_server(self) -> None:
        import asyncio

        server = self.line_server
        server._run(self._close_listener())
        server.drop_clients()
        time.sleep(1.0)
        server._server = server._run(asyncio.start_server(server._client, "127.0.0.1", server.port))

    async def _close_listener(self) -> None:
        self.line_server._server.close()

    def before_final(self, run: PipelineProcess) -> None:
        connections = self.line_server.connections
        deadline = time.monotonic() + 300
        while self.line_server.connections <= connections:
            if time.monotonic() > deadline or not run.running():
                raise RuntimeError(f"the last run did not connect to the line server; log:\n{run.tail()}")
            time.sleep(0.1)
        mark = self.sender.next
        while self.sender.next < mark + 200:
            time.sleep(0.05)
        self.sender.stop()
        self.after = {f"line {i}" for i in range(mark + 20, mark + 200)}  # surely sent to the new connection

    def complete(self) -> bool:
        return {line for (line,) in parquet_rows(self.out, "line")} >= self.received | self.after

    def count(self) -> Count:
        lines = Counter(line for (line,) in parquet_rows(self.out, "line"))
        result = compare(
            self.received | self.after,
            Counter({k: n for k, n in lines.items() if k in self.received | self.after}),
            "lines",
        )
        # lines received after the last snapshot (sent between kills) are not in `expected` but may
        # arrive: only copies of them, or lines never sent, count against the pair
        others = {k: n for k, n in lines.items() if k not in self.received | self.after}
        never_sent = [k for k in others if k not in set(self.sender.sent)]
        twice = sum(n - 1 for n in others.values())
        result.duplicated += twice + len(never_sent)
        if twice or never_sent:
            result.details.append(f"outside the expected set: {twice} extra copies, {len(never_sent)} lines never sent")
        result.details.append(f"{len(self.sender.sent)} lines sent in all, {len(lines)} distinct arrived")
        return result

    def cleanup(self) -> None:
        self.sender.stop()
        self.line_server.close()


def make_pairs() -> dict[str, Any]:
    """Pair key -> constructor ``f(work) -> Pair``, in the README's order."""
    return {
        "core-snapshot": lambda w: CoreToParquet(w, "snapshot"),
        "core-wal": lambda w: CoreToParquet(w, "wal"),
        "files": FilesToFiles,
        "socket": SocketToParquet,
        "kafka-parquet": KafkaToParquet,
        "kafka-kafka": KafkaToKafka,
        "jdbc": JdbcToJdbc,
        "jms": JmsToParquet,
        "imap": JournalToMap,
        "imap-hazelcast": JournalToMapOnHazelcast,
        "hdfs": HdfsToHdfs,
    }


def progress_mark(checkpoint: Path) -> tuple[int, int]:
    return len(checkpoint_batches(checkpoint, "offsets")), len(checkpoint_batches(checkpoint, "commits"))
