"""The driver's sign that a query is alive, for the receivers of its stream run.

Spark may end a query's reader process without calling the reader's ``stop()``, so the receivers
in the executors (:mod:`jetconnect._builders._receiver`) cannot wait for a stop marker alone:
the driver's reader process runs a :class:`QueryBeacon` that rewrites the run's beacon file
(:attr:`~jetconnect._run_directory.RunDirectory.beacon`), and a receiver whose beacon stops
changing stops itself.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import weakref

from jetconnect._builders._lease import owner_description
from jetconnect._files.filesystem import FileSystem

log = logging.getLogger("jetconnect.source")

#: How often the beacon beats (the receivers allow ``QUERY_GONE_S`` of silence).
BEACON_S = 1.0


class QueryBeacon(threading.Thread):
    """Beats in the driver's reader process while a query runs: rewrites ``path`` every :data:`BEACON_S`.

    Spark runs a stream reader in one Python process per query, which ends with the query (or
    its driver) whether or not Spark calls the reader's ``stop()``; so does this daemon thread.
    The receivers of the query's run watch the file's content change, on their own clocks (the
    driver's clock and the file system's times are not compared with theirs). It also stops when
    ``owner`` is garbage (a reader nobody uses) or its process is orphaned (the JVM that started it
    died).
    """

    def __init__(self, fs: FileSystem, path: str, owner: object) -> None:
        super().__init__(name=f"jetconnect query beacon {path}", daemon=True)
        self.fs = fs
        self.path = path
        self._done = threading.Event()
        self._parent = os.getppid()
        self._owner = weakref.ref(owner)

    def stop(self) -> None:
        self._done.set()

    def run(self) -> None:
        beat = 0
        while not self._done.is_set() and self._owner() is not None and os.getppid() == self._parent:
            beat += 1
            try:
                with self.fs.create(self.path, overwrite=True) as handle:
                    handle.write(json.dumps({"beat": beat, **owner_description()}).encode())
            except OSError as exc:  # a busy file system: the receivers allow QUERY_GONE_S
                log.warning("query beacon %s: %s", self.path, exc)
            self._done.wait(BEACON_S)


__all__ = ["BEACON_S", "QueryBeacon"]
