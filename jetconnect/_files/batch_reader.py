"""Which reader a batch read of lines uses: Spark's own text reader where the rows are provably
the same, jetconnect's where it adds something or where the two could differ (#35).

A batch read of plain UTF-8 lines asks nothing only jetconnect can do, and ``spark.read.text``
reads them in the JVM without a Python worker or an Arrow hop (the figures are in
plugins/files/README.md and plugins/hdfs/README.md). So, with ``batch_reader="auto"`` (the
default), :class:`SparkTextLinesSource` hands such a read to it, over exactly the files
jetconnect listed (its glob, recursion and hidden-name rules), with the rows made equal to
jetconnect's by :func:`~jetconnect._files.spark_text.spark_text_lines`.

The decision is made here once, for every file system; a plugin supplies only what is its own:
the URI Spark's Hadoop client reads a file at (:meth:`SparkTextLinesSource.spark_uris`) and what
its client could not carry (:meth:`SparkTextLinesSource.spark_client_refusal`, e.g. WebHDFS
tokens). jetconnect's reader stays for anything where Spark's rows or behaviour would differ:

- a mapper, a path column, a charset other than UTF-8, read options, split sizes the user set
  (all jetconnect's own);
- a file name Spark reads as a glob or URI (``*?[]{}\\:%``);
- a compressed name (``.gz``, ``.bz2``, ...): Hadoop decompresses by the name's suffix, in any
  case (``.GZ`` too), jetconnect reads the bytes as they are;
- a file starting with a UTF-8 byte order mark: Hadoop's line reader drops it, jetconnect keeps it
  (``\\ufeff`` starts the first line);
- ``spark.sql.files.ignoreMissingFiles`` or ``ignoreCorruptFiles`` set: Spark would skip a file
  jetconnect fails on;
- no file at all, or a directory that does not exist (jetconnect's reader says so its own way).

``batch_reader="spark"`` forces Spark's reader or fails with an :class:`OptionError` saying why
not; ``"jetconnect"`` always reads in Python workers. Streams always use jetconnect's reader
(offsets of growing files are jetconnect's).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from jetconnect._files.filesystem import FileInfo, FileSystem, LocalFileSystem
from jetconnect._files.lines_source import LinesSource
from jetconnect._files.spark_text import check_batch_reader, spark_text_lines, unsafe_file_name
from jetconnect.errors import OptionError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

_log = logging.getLogger(__name__)

T = TypeVar("T")

#: Suffixes Hadoop's ``CompressionCodecFactory`` decompresses by (its built-in codecs, plus the
#: common add-ons: LZO, Brotli, XZ); compared ignoring case, as Hadoop 3 falls back to lower case.
COMPRESSED_SUFFIXES = (
    ".gz",
    ".bz2",
    ".deflate",
    ".lz4",
    ".snappy",
    ".zst",
    ".zstd",
    ".lzo",
    ".lzo_deflate",
    ".br",
    ".xz",
)

#: The UTF-8 byte order mark, which Hadoop's ``LineRecordReader`` skips at the start of a file.
UTF8_BOM = b"\xef\xbb\xbf"

#: Spark settings under which its reader skips a file that jetconnect's fails on.
_SKIPPING_CONFS = ("spark.sql.files.ignoreMissingFiles", "spark.sql.files.ignoreCorruptFiles")


@dataclass(frozen=True)
class BatchReaderChoice:
    """Which reader a batch read uses (``spark`` or ``jetconnect``), why, and for Spark its files."""

    reader: str
    reason: str
    uris: tuple[str, ...] = ()


def skipping_files_conf(spark: SparkSession) -> str | None:
    """Why Spark's file reader would skip a file jetconnect's fails on (a ``spark.sql.files.ignore*``
    setting that is true), or None."""
    for conf in _SKIPPING_CONFS:
        if str(spark.conf.get(conf, "false")).strip().lower() == "true":
            return f"{conf} is true: Spark would skip a file jetconnect's reader fails on"
    return None


def local_file_uris(fs: FileSystem, files: Sequence[FileInfo]) -> tuple[str | None, tuple[str, ...]]:
    """(None, the ``file://`` URIs Spark reads ``files`` of the local disk at), or (why it cannot, ())."""
    if not isinstance(fs, LocalFileSystem):
        return f"no Spark URI is known for files on {type(fs).__name__}", ()
    for info in files:
        # Hadoop's file:// file system verifies a file against a ".<name>.crc" beside it (the
        # listing hides it from jetconnect): a stale one would fail Spark's read, not ours.
        directory, name = os.path.split(info.path)
        if os.path.exists(os.path.join(directory, f".{name}.crc")):
            return f"'{info.path}' has a Hadoop checksum file beside it, which Spark's reader would check", ()
    return None, tuple(f"file://{info.path}" for info in files)


def compressed_file_name(paths: Sequence[str]) -> str | None:
    """The first of ``paths`` whose name Hadoop would decompress (see :data:`COMPRESSED_SUFFIXES`)."""
    for path in paths:
        if path.lower().endswith(COMPRESSED_SUFFIXES):
            return path
    return None


def for_each_file(fn: Callable[[FileInfo], T], files: Sequence[FileInfo]) -> list[T]:
    """``fn`` of each of ``files``, in order; in parallel when there are more than two (on a remote
    file system each call is a request: the driver waits for the slowest, not for their sum)."""
    if len(files) <= 2:
        return [fn(info) for info in files]
    with ThreadPoolExecutor(max_workers=min(8, len(files))) as pool:
        return list(pool.map(fn, files))


def file_starting_with_bom(fs: FileSystem, files: Sequence[FileInfo]) -> str | None:
    """The first of ``files`` whose first bytes are a UTF-8 byte order mark, or None.

    Reads three bytes of each file (in parallel: on a remote file system each is a request)."""

    def starts_with_bom(info: FileInfo) -> bool:
        if info.size < len(UTF8_BOM):
            return False
        read_range = getattr(fs, "read_range", None)  # a remote file system's bounded read
        if read_range is not None:
            head = read_range(info.path, 0, len(UTF8_BOM))
        else:
            with fs.open(info.path) as stream:
                head = b""
                while len(head) < len(UTF8_BOM) and (chunk := stream.read(len(UTF8_BOM) - len(head))):
                    head += chunk
        return bool(head == UTF8_BOM)

    candidates = [info for info in files if info.size >= len(UTF8_BOM)]
    found = for_each_file(starts_with_bom, candidates)
    return next((info.path for info, bom in zip(candidates, found, strict=True) if bom), None)


def split_options_given(max_split_bytes: int, min_splits: int, default_min_splits: int = 0) -> list[str]:
    """The split sizes a factory's user set (not their defaults: 128 MiB and ``default_min_splits``):
    honoured by jetconnect's reader only (Spark's cuts by ``spark.sql.files.maxPartitionBytes``)."""
    given = {"max_split_bytes": max_split_bytes != 128 << 20, "min_splits": min_splits != default_min_splits}
    return [name for name, set_ in given.items() if set_]


class ListedDirectory(Protocol):
    """What :func:`files_for_spark` asks of a source: where its files are, which of them it reads,
    the options only its own reader honours, and why Spark's client cannot read as it does."""

    fs: FileSystem
    directory: str
    glob: str
    recursive: bool
    own_options: tuple[str, ...]

    def spark_client_refusal(self) -> str | None: ...


def files_for_spark(
    spark: SparkSession | None, options: Mapping[str, Any], source: ListedDirectory
) -> tuple[str | None, Sequence[FileInfo]]:
    """What every hand-off of a batch read to Spark's reader checks first, cheapest first (the
    options alone need no file system call): ``(why not, ())``, or ``(None, the files listed)``.
    Read options and split sizes the user set (``source.own_options``) are jetconnect's; so is a
    file system Spark's client cannot read as the source does (``spark_client_refusal()``), a
    session skipping missing or corrupt files, no directory or no file (jetconnect's reader says
    so), a name Spark reads as a glob or URI. A source then adds the checks of its own format."""
    if options:
        return f"read options {sorted(options)} are jetconnect's", ()
    if source.own_options:
        return f"option(s) {', '.join(source.own_options)} shape jetconnect's splits, not Spark's", ()
    if (client_refusal := source.spark_client_refusal()) is not None:
        return client_refusal, ()
    if spark is not None and (skipping := skipping_files_conf(spark)) is not None:
        return skipping, ()
    fs, directory = source.fs, source.directory
    if not fs.exists(directory):
        return f"'{directory}' does not exist (jetconnect's reader says so)", ()
    files = fs.list_files(directory, source.glob, recursive=source.recursive)
    if not files:
        return "no file matches (jetconnect's reader says so)", ()
    if (odd := unsafe_file_name([f.path for f in files])) is not None:
        return f"the name {odd!r} has characters Spark's reader takes for a glob or a URI", ()
    return None, files


def choose_batch_reader(
    batch_reader: str,
    owner: str,
    why_not_spark: Callable[[], tuple[str | None, tuple[str, ...]]],
    describe: Callable[[tuple[str, ...]], str],
    option: str = "batch_reader",
) -> BatchReaderChoice:
    """The reader a batch read of a source of ``owner`` uses, by its ``batch_reader`` option:
    Spark's when ``why_not_spark()`` finds no reason against it (and gives the URIs it reads, which
    ``describe`` turns into the reason), else jetconnect's, or with ``batch_reader="spark"`` an
    :class:`OptionError` naming the reason. One rule for every source that can hand a read over,
    and for a sink handing a batch write to Spark's writer (``option="batch_writer"``; the URIs
    are then the one directory it writes)."""
    if batch_reader == "jetconnect":
        return BatchReaderChoice("jetconnect", f"{option}='jetconnect'")
    reason, uris = why_not_spark()
    if reason is None:
        return BatchReaderChoice("spark", describe(uris), uris)
    if batch_reader == "spark":
        raise OptionError(f"{owner}: option '{option}' is 'spark' but {reason}")
    return BatchReaderChoice("jetconnect", reason)


class SparkTextLinesSource(LinesSource):
    """A :class:`LinesSource` whose batch read goes to Spark's text reader when the rows are
    provably the same (see the module's docstring); ``batch_reader``: ``auto``, ``jetconnect`` or
    ``spark``. A file system plugs in by overriding :meth:`spark_uris` (and, if its client carries
    something Spark's does not, :meth:`spark_client_refusal`)."""

    def __init__(self, *args: Any, batch_reader: str = "auto", own_options: Sequence[str] = (), **options: Any) -> None:
        super().__init__(*args, **options)
        self.batch_reader = check_batch_reader(batch_reader, self.owner)
        #: Options the user set that only jetconnect's reader honours (a factory's split sizes:
        #: Spark's reader cuts by ``spark.sql.files.maxPartitionBytes`` instead).
        self.own_options = tuple(own_options)

    def read(self, spark: SparkSession, **options: Any) -> DataFrame:
        choice = self.batch_reader_choice(spark, **options)
        _log.info("%s: batch read by %s's reader: %s", self.owner, choice.reader, choice.reason)
        if choice.reader == "spark":
            return spark_text_lines(spark, choice.uris, self.owner)
        return super().read(spark, **options)

    def batch_reader_choice(self, spark: SparkSession | None = None, **options: Any) -> BatchReaderChoice:
        """The reader :meth:`read` would use now, and why (an :class:`OptionError` if
        ``batch_reader="spark"`` cannot be honoured). ``spark``: also check its settings; ``options``:
        the read options :meth:`read` would get (any keeps jetconnect's reader)."""
        return choose_batch_reader(
            self.batch_reader,
            self.owner,
            lambda: self._why_not_spark(spark, options),
            lambda uris: f"plain UTF-8 lines of {len(uris)} files",
        )

    def spark_client_refusal(self) -> str | None:
        """Why Spark's Hadoop client cannot read as this source does (authentication, identity),
        or None. Asked before anything is listed; the default has no objection."""
        return None

    def spark_uris(self, files: Sequence[FileInfo]) -> tuple[str | None, tuple[str, ...]]:
        """(None, the URIs Spark's Hadoop client reads ``files`` at), or (why it cannot, ())."""
        return f"no Spark URI is known for files on {type(self.fs).__name__}", ()

    def _why_not_spark(self, spark: SparkSession | None, options: dict[str, Any]) -> tuple[str | None, tuple[str, ...]]:
        # Cheapest first: what the options alone decide needs no file system call.
        if self.mapper is not None:
            return "a mapper runs in Python", ()
        if self.path_column is not None:
            return f"the {self.path_column!r} column (include_file_name, include_path) is jetconnect's", ()
        if self.charset != "utf-8":
            return f"Spark's text reader reads UTF-8 only, the charset is {self.charset!r}", ()
        reason, files = files_for_spark(spark, options, self)
        if reason is not None:
            return reason, ()
        paths = [f.path for f in files]
        if (packed := compressed_file_name(paths)) is not None:
            return f"Spark's reader would decompress {packed!r} by its name, jetconnect reads its bytes", ()
        reason, uris = self.spark_uris(files)
        if reason is not None:
            return reason, ()
        if (bom := file_starting_with_bom(self.fs, files)) is not None:
            return f"{bom!r} starts with a UTF-8 byte order mark, which Spark's reader drops", ()
        return None, uris


class LocalLinesSource(SparkTextLinesSource):
    """:class:`SparkTextLinesSource` on the local disk (or a shared POSIX mount): Spark reads
    ``file://`` URIs of the same paths."""

    def spark_uris(self, files: Sequence[FileInfo]) -> tuple[str | None, tuple[str, ...]]:
        return local_file_uris(self.fs, files)


__all__ = [
    "COMPRESSED_SUFFIXES",
    "UTF8_BOM",
    "BatchReaderChoice",
    "ListedDirectory",
    "LocalLinesSource",
    "SparkTextLinesSource",
    "compressed_file_name",
    "file_starting_with_bom",
    "for_each_file",
    "local_file_uris",
    "skipping_files_conf",
    "split_options_given",
]
