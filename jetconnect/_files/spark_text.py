"""Spark's own text reader as the batch path of a lines source, giving jetconnect's rows (#35).

A batch read of plain lines, with nothing only jetconnect can do (no mapper, no path column, UTF-8),
is what ``spark.read.text`` does in the JVM, without a Python worker or an Arrow hop (the figures
are in plugins/hdfs/README.md, from bench/bench_hdfs.py). A source hands such a read to it over exactly the files it
listed itself, so the file set (glob, recursion, hidden names) stays jetconnect's, and the rows are
made identical to :func:`~jetconnect._files.line_splits.read_lines`'s:

- lines end at ``\\n`` only (``lineSep``): Hadoop's default reader also ends a line at a lone
  ``\\r``, jetconnect keeps it inside the line;
- one ``\\r`` before the ``\\n`` is dropped (CRLF files), also at the end of a last line that has no
  ``\\n``;
- bytes that are not UTF-8 fail the query with a message naming the file (not the byte offset:
  Spark's reader does not know it, jetconnect's does) instead of becoming a string no Python can
  decode. (A ``count()`` reads no column: Spark then
  skips the check, as jetconnect's reader skips nothing but decodes anyway.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from jetconnect.errors import OptionError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

#: Which reader a batch read of lines uses: ``auto`` (Spark's when nothing needs jetconnect's),
#: ``jetconnect`` (always the Python data source), ``spark`` (Spark's, or an error saying why not).
BATCH_READERS = ("auto", "jetconnect", "spark")

#: Characters Hadoop's ``Path`` and Spark's path globbing read as syntax, not as part of a name.
_PATH_SYNTAX = set("*?[]{}\\:%")


def check_batch_reader(value: str, owner: str, option: str = "batch_reader") -> str:
    """``value`` if it is one of :data:`BATCH_READERS`, else an :class:`OptionError` naming the
    option (``batch_writer`` for a sink that can hand a write to Spark's writer: the same values)."""
    if value not in BATCH_READERS:
        raise OptionError(f"{owner}: option '{option}' must be one of {', '.join(BATCH_READERS)}; got {value!r}")
    return value


def unsafe_file_name(paths: Sequence[str]) -> str | None:
    """The first of ``paths`` Spark would not read as a literal file name (glob or URI syntax in
    it), or None when every one is safe to hand over."""
    for path in paths:
        if _PATH_SYNTAX & set(path):
            return path
    return None


def spark_text_lines(spark: SparkSession, uris: Sequence[str], owner: str) -> DataFrame:
    """``value string`` rows of the files ``uris`` (URIs Spark's Hadoop client reads, such as
    ``hdfs://namenode:8020/logs/a.txt``), read by Spark's text source, equal row for row to what
    jetconnect's line reader gives for the same bytes (see the module's docstring). ``owner``
    starts the message of a failure."""
    from pyspark.sql import functions as F

    if not uris:
        raise ValueError("spark_text_lines needs at least one file")
    raw = F.col("value")
    # Both checks are cheap where they pass: a byte compare for the CR, one pass for UTF-8; the
    # file's name is looked up only for a row that fails (a CASE evaluates the branch it takes).
    # (Reading ``_metadata.file_path`` and matching a regexp on every row instead costs 3.4x the
    # plain read in bench/bench_hdfs.py's sum(length).)
    undecodable = F.raise_error(
        F.concat(
            F.lit(f"{owner}: '"),
            F.input_file_name(),
            F.lit("' holds bytes that do not decode as utf-8 (set option charset, or batch_reader='jetconnect' "),
            F.lit("to have the byte offset named)"),
        )
    )
    without_cr = F.when(raw.endswith("\r"), F.expr("substring(value, 1, length(value) - 1)")).otherwise(raw)
    value = F.when(F.is_valid_utf8(raw), without_cr).otherwise(undecodable)
    return spark.read.option("lineSep", "\n").text(list(uris)).select(value.alias("value"))


__all__ = ["BATCH_READERS", "check_batch_reader", "spark_text_lines", "unsafe_file_name"]
