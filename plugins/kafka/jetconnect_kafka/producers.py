"""Producers kept for the life of a Python worker, lent to one Spark task at a time.

A new idempotent or transactional librdkafka producer asks for its producer id before its first
connection is up, finds no broker, and asks again on a 500 ms timer: its first record is
delivered about 0.52 s after it is made (a plain producer's: 7 ms), and ``init_transactions``
takes as long. Paid by every task, that would be most of an at-least-once write of 100k records
and of every exactly-once micro-batch. Spark reuses its Python workers, so a
worker keeps its producers: a task borrows one (:func:`borrow`), gives it back when it ended
cleanly (:meth:`Lease.give_back`) and drops it otherwise, so a producer in the pool never holds an
open transaction or an unread failure. A kept transactional producer whose id another worker of
the host has taken since (:meth:`Lease.took_over`) is fenced: it gives way without asking the broker.

Spark's idle workers take turns, so a writer's id moves between the workers of a host about every
other micro-batch, and a worker whose producer was fenced needed a new one (54-65 ms to make and
connect here, more on a busy machine) before it could write again. A background thread of each
worker (:func:`renew_fenced`) replaces such a producer while the worker is idle with a new,
connected one that has not called ``init_transactions`` (which would fence the writer's current
producer): the task that borrows it next only initialises it (4-20 ms).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from hashlib import sha256
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError

from jetconnect_kafka import config
from jetconnect_kafka.idle_pool import IdlePool, settings_key

#: Idle producers one worker keeps; the least recently used goes first (each holds threads and a
#: socket, and the transactional ones are per query and Spark partition).
MAX_IDLE = 16


class _FirstFailure:
    """The delivery callback: keeps the first failure reported. It holds no reference back to the
    lease or producer: the producer holds it, and a cycle through the producer (a C object the
    garbage collector cannot see into) would keep a dropped producer, its threads and its broker
    connections alive until the process exits."""

    __slots__ = ("error", "where")

    def __init__(self) -> None:
        self.error: KafkaError | None = None
        #: Which record failed, when its producer said (:class:`NamedRecord`); None otherwise.
        self.where: str | None = None

    def __call__(self, error: Any, message: Any) -> None:
        if error is not None and self.error is None:
            # Kept as is, read later: after a fatal error (a fenced producer) the callback runs
            # with an exception already set, and calling into the error or message here fails.
            self.error = error


class NamedRecord:
    """A per-record delivery callback that says which record failed (``where``, e.g. "row 3 of
    partition 6"): for records a user's function made, where one bad record is worth naming.
    Called for failures only (``delivery.report.only.error``), so it costs one small object per record."""

    __slots__ = ("first", "where")

    def __init__(self, first: _FirstFailure, where: str) -> None:
        self.first, self.where = first, where

    def __call__(self, error: Any, message: Any) -> None:
        if error is not None and self.first.error is None:
            self.first.error, self.first.where = error, self.where


class Lease:
    """One producer and what the task that borrows it must know: the first delivery failure since
    it was borrowed, and for a transactional producer the last micro-batch it committed."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.settings = dict(settings)
        self.key = settings_key(settings)
        self.transactional_id: str | None = settings.get("transactional.id")
        #: This producer among all that ever took its transactional id on this host (:meth:`took_over`).
        self.token = f"{os.getpid()}-{uuid.uuid4().hex}"
        self._failures = _FirstFailure()
        #: The batch id of the last transaction this producer committed; None for a new producer.
        self.committed_batch: int | None = None
        #: True until a task used it: new, or a spare made for the pool (:func:`renew_fenced`), it
        #: has not called ``init_transactions`` yet; False for one lent again.
        self.fresh = True
        # Reports for failed records only: a Python callback per delivered record would cost
        # more than producing it.
        # config.producer makes first contact: a broker connection up before the producer asks for
        # its id (init_transactions then takes 5-46 ms instead of 0.51-0.53 s: librdkafka asks
        # once, finds no broker up, and retries on a 500 ms timer), and a broker that refuses the
        # producer fails it here. An unreachable broker is reported by the calls that follow.
        self.producer: config.WatchedProducer = config.producer(
            settings, on_delivery=self._failures, **{"delivery.report.only.error": True}
        )

    @property
    def failure(self) -> KafkaError | None:
        """The first delivery failure since the producer was borrowed, or None."""
        return self._failures.error

    def close(self) -> None:
        """Let go of the producer now: librdkafka stops its threads and closes its connections.
        For a lease that is dropped rather than given back (fenced, evicted, failed): an exception
        kept inside the producer (a fatal error's) may refer back to it through a frame."""
        vars(self).pop("producer", None)  # a second close does nothing

    @property
    def failure_where(self) -> str | None:
        """Which record the first delivery failure was, if it was produced with a :meth:`named` callback."""
        return self._failures.where

    def named(self, where: str) -> NamedRecord:
        """A delivery callback for one record that names it (``where``) if it fails."""
        return NamedRecord(self._failures, where)

    def failure_text(self) -> str:
        """The first delivery failure, for an error message ("" if none)."""
        return "" if self.failure is None else self.failure.str()

    def took_over(self) -> None:
        """Note, for the other Python workers of this host, that this producer's ``init_transactions``
        has just fenced every older producer of its transactional id.

        Spark hands a task's writer any idle Python worker, so another worker's kept producer of the
        same id is fenced about every other micro-batch; with this note it gives way at once
        (:meth:`superseded`) instead of after a round trip to the broker that fails (~60 ms). Only a
        hint: a producer fenced from another host still finds out from the broker, and a note that
        cannot be written costs that round trip, nothing else.
        """
        if self.transactional_id is None:
            return
        path = _note_path(self.transactional_id)
        if path is None:
            return
        try:
            partial = path.with_name(f"{path.name}.{self.token}")
            partial.write_text(self.token)
            os.replace(partial, path)
        except OSError:
            pass

    def superseded(self) -> bool:
        """Whether another producer on this host took this one's transactional id since it did: then
        this one is fenced for sure and must not be used."""
        path = _note_path(self.transactional_id) if self.transactional_id is not None else None
        if path is None:
            return False
        try:
            return path.read_text() != self.token
        except OSError:  # no note (never written, pruned): only the broker can tell
            return False

    def give_back(self) -> None:
        """Return the producer to this worker's pool: only after a task that ended cleanly."""
        self._failures.error, self._failures.where, self.fresh = None, None, False
        _POOL.keep(self.key, self)
        if self.transactional_id is not None:
            _Renewer.start()


_POOL: IdlePool[Lease] = IdlePool(MAX_IDLE, Lease.close)


def renew_fenced() -> int:
    """Replace each idle transactional producer that another worker of this host has fenced
    (:meth:`Lease.superseded`) with a new, connected spare; returns how many.

    A spare has not called ``init_transactions``, so it fences nobody until a task borrows it for
    the writer's next batch and initialises it, exactly as it would a producer made on the spot.
    """
    with _RENEWING:
        fenced = _POOL.take_where(
            lambda lease: lease.transactional_id is not None and not lease.fresh and lease.superseded()
        )
        for key, lease in fenced:
            lease.close()
            _POOL.keep(key, Lease(lease.settings))  # connects before it is lent: the slow part, done while idle
        return len(fenced)


class _Renewer:
    """The worker's daemon thread that runs :func:`renew_fenced` every :data:`RENEW_EVERY_S`."""

    _thread: threading.Thread | None = None

    _lock = threading.Lock()

    @classmethod
    def start(cls) -> None:
        with cls._lock:
            if cls._thread is None or not cls._thread.is_alive():
                cls._thread = threading.Thread(target=cls._run, name="jetconnect-kafka-renew", daemon=True)
                cls._thread.start()

    @staticmethod
    def _run() -> None:
        while True:
            time.sleep(RENEW_EVERY_S)
            try:
                renew_fenced()
            except Exception:  # noqa: BLE001 - a spare that cannot be made now is made by the next task
                pass


#: How often a worker looks for fenced producers to replace: the notes are local files, read in
#: microseconds, and a fenced producer is usually wanted again one micro-batch later.
RENEW_EVERY_S = 0.05
#: Held while spares are made, so that :func:`drop_idle` cannot return with one still being made.
_RENEWING = threading.Lock()


#: Notes older than this are removed (one per streaming query and Spark partition, a few bytes each).
NOTE_MAX_AGE_S = 7 * 24 * 3600
_notes: Path | None = None


def _note_path(transactional_id: str) -> Path | None:
    """Where this host keeps the note of who last took ``transactional_id``; None if there is no
    private directory for it (the notes are then skipped)."""
    global _notes
    if _notes is None:
        folder = Path(tempfile.gettempdir()) / f"jetconnect-kafka-producers-{os.getuid()}"
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            if folder.stat().st_uid != os.getuid() or folder.stat().st_mode & 0o077:
                return None  # not ours alone: another user could fence our producers by hand
            _prune(folder)
        except OSError:
            return None
        _notes = folder
    return _notes / sha256(transactional_id.encode()).hexdigest()


def _prune(folder: Path) -> None:
    """Remove notes nobody wrote for :data:`NOTE_MAX_AGE_S` (once per worker)."""
    old = time.time() - NOTE_MAX_AGE_S
    for note in folder.iterdir():
        try:
            if note.stat().st_mtime < old:
                note.unlink()
        except OSError:
            pass


def borrow(settings: Mapping[str, Any]) -> Lease:
    """A producer with exactly these librdkafka ``settings``: an idle one of this worker if it has one."""
    return _POOL.take(settings_key(settings)) or Lease(settings)


def drop_idle() -> int:
    """Drop every idle producer of this process; returns how many. For a process that outlives
    its broker (a test run stopping its servers): librdkafka would log each reconnect until exit."""
    with _RENEWING:
        return _POOL.drop_all()


def idle_count() -> int:
    """How many producers wait in this worker's pool."""
    return len(_POOL)


__all__ = ["MAX_IDLE", "Lease", "borrow", "drop_idle", "idle_count", "renew_fenced"]
