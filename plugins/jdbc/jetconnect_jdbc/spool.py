"""A partition's batches, passed on as Spark hands them over and kept on local disk for a retry.

The sink writes a partition in one transaction while Spark is still converting its later batches.
A retried transaction (a lost connection) and the search for a refused row must see the same rows
again, but Spark hands a partition over only once: each batch is appended to an Arrow IPC file
before it is passed on, so memory holds one batch at a time, however large the partition.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa


class Spool:
    """Iterate for the batches: what earlier iterations read comes back from disk, then the rest.

    Use it as a context manager; the file is removed on exit.
    """

    def __init__(self, data: Iterator[pa.RecordBatch]) -> None:
        self._data = data
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._file: BinaryIO | None = None
        self._writer: pa.ipc.RecordBatchStreamWriter | None = None
        self._kept = 0

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        yield from self._replay()
        for batch in self._data:
            if batch.num_rows == 0:
                continue
            self._keep(batch)
            yield batch

    def drain(self) -> None:
        """Read the rest from Spark without keeping it (a skipped replay never reads its input)."""
        for _ in self._data:
            pass

    def _keep(self, batch: pa.RecordBatch) -> None:
        if self._writer is None:
            self._folder = tempfile.TemporaryDirectory(prefix="jetconnect-jdbc-")
            self._file = open(Path(self._folder.name) / "partition.arrows", "wb")  # noqa: SIM115 - closed in close()
            self._writer = pa.ipc.new_stream(self._file, batch.schema)
        self._writer.write_batch(batch)
        assert self._file is not None
        self._file.flush()  # a replay opens the file anew and must find every batch kept so far
        self._kept += 1

    def _replay(self) -> Iterator[pa.RecordBatch]:
        if self._kept == 0:
            return
        assert self._folder is not None
        count = self._kept  # batches appended while replaying are read from Spark's side of __iter__
        with pa.OSFile(str(Path(self._folder.name) / "partition.arrows")) as source:
            reader = pa.ipc.open_stream(source)
            for _ in range(count):
                yield reader.read_next_batch()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None
