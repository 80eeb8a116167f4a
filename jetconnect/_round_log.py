"""Write-once round records: how a stream pulled in executor tasks replays exactly.

A pull-based stream (a builder stream, a socket, a message broker) cannot tell the driver how far
its data goes, so Spark's offset names a *round* per processor instead: the task that reads
``(processor i, round r)`` pulls, then records what the round held in a file that is written
once, atomically, under the query's ``wal_location``. Every later read of the same round (a
retried task, a replayed micro-batch, a second action on the batch) finds the record and
reproduces exactly that round; nothing else may decide what a round holds.

A record is one Arrow IPC *stream* file ``<wal_location>/<run>/<processor>/<round>.arrow``
(:class:`~jetconnect._run_directory.RunDirectory` knows the layout): its schema
message carries the round's facts (:class:`RoundFacts`) as metadata, so the driver reads a few
hundred bytes to learn them (and its CRC32C trailer, :mod:`jetconnect._checksums`, checked on every
read), and its batches hold the rows the round must keep: every row it
received for a source that cannot replay (a write-ahead log), or only the rows pulled past the
micro-batch's limit (the carry) for a source that restores snapshots. Records are written to a
hidden temporary file and renamed without overwriting: a crash leaves the whole record or none,
and of two concurrent attempts of one task exactly one defines the round.

Everything goes through :class:`~jetconnect._files.filesystem.FileSystem`, so the records can live on a
shared mount or on HDFS (any registered file system), as long as driver and executors all see it.
"""

from __future__ import annotations

import io
import json
import posixpath
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

from jetconnect._checksums import trailer, verified
from jetconnect._files.filesystem import FileSystem
from jetconnect._run_directory import RECORD_GLOB, RunDirectory
from jetconnect._spool import Spool
from jetconnect.errors import OffsetError

#: Schema metadata key holding a record's facts.
_FACTS_KEY = b"jetconnect.round"
_VERSION = 1


@dataclass(frozen=True)
class RoundFacts:
    """What one round of one processor held; the part of a record the driver reads."""

    #: Rows the round delivered to Spark.
    emitted: int
    #: Items the processor's fills added during the round (replay pulls exactly this many).
    pulled: int
    #: Why the round ended: ``"dry"`` (a fill added nothing), ``"limit"`` (the item limit) or ``"time"``
    #: (``max_pull_ms`` was up, or, for a receiver's spool, it stopped growing).
    ended: str
    #: The attempt that wrote the record (so a cached processor knows it is the one recorded).
    attempt: str
    #: Rows stored in the record (checked on read: a shorter file is corrupt, not a shorter round).
    stored: int = 0
    #: How many of the stored rows, at their end, are the carry: pulled past the round's limit and
    #: delivered first by the next round.
    carried: int = 0
    #: The round's number (checked on read against the file's name).
    round: int = 0
    #: The processor's position after the round (``create_snapshot_fn``), for snapshot streams.
    snapshot: Any = None
    #: The processor's position before the round, kept for round 1 only (later rounds start where
    #: the round before ended): a ``create_fn`` that reads a clock does not make the same state twice.
    start_snapshot: Any = None
    #: For a stream that cannot replay: the range ``[log_from, log_to)`` of the processor's spool
    #: the round delivered.
    log_from: int = 0
    log_to: int = 0
    #: How many processors the stream has (the checkpoint's, kept across restarts).
    total: int = 1
    version: int = _VERSION

    def same_contents(self, other: RoundFacts) -> bool:
        """Whether two attempts' facts describe the same round (a deterministic source pulled twice)."""
        return (self.emitted, self.pulled, self.carried, self.snapshot, self.log_from, self.log_to) == (
            other.emitted,
            other.pulled,
            other.carried,
            other.snapshot,
            other.log_from,
            other.log_to,
        )

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes, where: str) -> RoundFacts:
        try:
            data = json.loads(raw)
            if data.get("version") != _VERSION:
                raise ValueError(f"version {data.get('version')!r}, expected {_VERSION}")
            return cls(**data)
        except (ValueError, TypeError) as exc:
            raise OffsetError(
                f"round record {where} is not readable ({exc}): it was edited or written by another program"
            ) from exc


@dataclass(frozen=True)
class Round:
    """A round record: its facts and the rows it keeps."""

    facts: RoundFacts
    rows: pa.Table = field(repr=False)

    @property
    def carry(self) -> pa.Table:
        """The rows the next round delivers first."""
        return self.rows.slice(self.rows.num_rows - self.facts.carried)


def new_attempt_id() -> str:
    """A fresh id for one attempt at pulling a round."""
    return uuid.uuid4().hex


class RoundLog:
    """The round records of stream run ``run`` under ``location`` (a resolved ``wal_location``) on ``fs``."""

    def __init__(self, fs: FileSystem, location: str, run: str) -> None:
        self.fs = fs
        self.run = run
        #: Where the run's files live (records here; spools, leases and markers for the receivers).
        self.run_dir = RunDirectory(fs, location, run)

    def __repr__(self) -> str:
        return f"RoundLog({self.run_dir.path!r})"

    def last_written(self, processor: int) -> float | None:
        """When the newest record of ``processor`` was written (seconds since the epoch), if any."""
        times = [info.mtime for info in self.fs.list_files(self.run_dir.processor(processor), RECORD_GLOB)]
        return max(times, default=None)

    def path(self, processor: int, round_: int) -> str:
        """Where the record of ``round_`` of ``processor`` lives."""
        return self.run_dir.record(processor, round_)

    def facts(self, processor: int, round_: int) -> RoundFacts | None:
        """The facts of a round, or None if it was never recorded.

        The whole record is read: its checksum covers the facts too (a record is its facts and,
        at most, a last fill's carry).
        """
        record = self.read(processor, round_)
        return None if record is None else record.facts

    def read(self, processor: int, round_: int) -> Round | None:
        """The whole record of a round, or None if it was never recorded."""
        path = self.path(processor, round_)
        if not self.fs.exists(path):
            return None
        with self.fs.open(path) as handle:
            data = handle.read()
        payload = verified(data, f"round record {path}", f"round {round_} of processor {processor}: what it held")
        try:
            reader = pa.ipc.open_stream(pa.py_buffer(payload))
            table = reader.read_all()
        except (pa.ArrowInvalid, OSError) as exc:
            raise OffsetError(f"round record {path} is corrupt: {exc}") from exc
        facts = self._facts_of(table.schema, path, round_)
        if table.num_rows != facts.stored:
            raise OffsetError(
                f"round record {path} holds {table.num_rows} rows but was written with {facts.stored}: the file is "
                f"truncated or was edited"
            )
        return Round(facts, table.replace_schema_metadata(None))

    @staticmethod
    def _facts_of(schema: pa.Schema, path: str, round_: int) -> RoundFacts:
        raw = (schema.metadata or {}).get(_FACTS_KEY)
        if raw is None:
            raise OffsetError(f"round record {path} has no round facts: it was not written by jetconnect")
        facts = RoundFacts.from_json(raw, path)
        if facts.round != round_ or not 0 <= facts.carried <= facts.stored:
            raise OffsetError(f"round record {path} says {facts}: it was renamed, copied or edited")
        return facts

    def write(self, processor: int, round_: int, record: Round) -> Round:
        """Record ``round_`` unless an attempt recorded it first; return the record that counts.

        The record is written under a hidden name, made durable, and renamed without overwriting:
        the first rename wins, and a loser gets the winner's record back.
        """
        folder = self.run_dir.processor(processor)
        self.fs.mkdirs(folder)
        facts = record.facts
        if facts.stored != record.rows.num_rows:
            facts = RoundFacts(**{**asdict(facts), "stored": record.rows.num_rows})
        schema = record.rows.schema.with_metadata({_FACTS_KEY: facts.to_json()})
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, schema) as writer:
            writer.write_table(record.rows.replace_schema_metadata(schema.metadata))
        scratch = posixpath.join(folder, f".tmp-{uuid.uuid4().hex}")
        payload = sink.getbuffer()
        with self.fs.create(scratch) as handle:
            handle.write(payload)
            handle.write(trailer(payload))  # in the hidden file: the rename publishes record and checksum at once
        del payload  # a BytesIO whose buffer is exported cannot be freed
        target = self.path(processor, round_)
        if self.fs.rename(scratch, target):
            return Round(facts, record.rows)
        self.fs.delete(scratch)
        winner = self.read(processor, round_)
        if winner is None:  # pragma: no cover - renamed away between the two calls: nothing does that
            raise OffsetError(f"round record {target} vanished while it was being written")
        return winner

    def trim(self, processor: int, before: int) -> None:
        """Delete the records of rounds before ``before`` (Spark committed past them)."""
        for info in self.fs.list_files(self.run_dir.processor(processor), RECORD_GLOB):
            round_ = RunDirectory.round_of(info.path)
            if round_ is not None and round_ < before:
                self.fs.delete(info.path)


def spool_of(rounds: RoundLog, index: int) -> Spool:
    """The spool of processor ``index`` of the run ``rounds`` records (what its receiver received)."""
    return rounds.run_dir.spool(index)


__all__ = ["Round", "RoundFacts", "RoundLog", "new_attempt_id", "spool_of"]
