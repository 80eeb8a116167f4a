"""Spark's own Avro reader (spark-avro) as the batch path of an Avro source, giving jetconnect's rows (#35).

A batch read of Avro container files that asks nothing only jetconnect can do (no reader schema
that differs from the files', no read options) is what ``spark.read.format("avro")`` does in the
JVM, without a Python worker or an Arrow hop (the figures are in plugins/files/README.md, from
bench/bench_avro.py). spark-avro is not part of PySpark: it is on a session only when its jar is
(``spark.jars``, ``--packages``), so :func:`spark_avro_refusal` asks the session first.

What makes Spark's rows jetconnect's, found by reading spark-avro (``AvroOptions``,
``AvroUtils``, ``AvroFileFormat``) and checked by integration/files/test_avro_batch_reader.py:

- the schema: Spark's reader converts the first file's writer schema as
  :func:`~jetconnect._files.avro_schema.to_spark_schema` does, except where the two differ (a
  union of several types, which Spark turns into a struct of members, time of day in newer
  Sparks): :func:`schema_difference` compares them and any difference keeps jetconnect's reader.
  Spark's file sources report every field nullable, whatever the file says: nullability is the
  one thing compared loosely (the values are the same; the DataFrame's schema says nullable);
- dates and timestamps: Spark rebases those of files written in its ``LEGACY`` calendar mode (or
  by Spark before 3.0) and, by the ``spark.sql.avro.datetimeRebaseModeInRead`` setting, maybe of
  files without Spark's metadata; jetconnect (fastavro) reads the proleptic Gregorian values as
  they are. :data:`SPARK_AVRO_OPTIONS` makes Spark read them as they are too, and a source keeps
  its own reader for a file whose metadata asks for rebasing;
- strings: a string that is not UTF-8 fails jetconnect's read naming the block; Spark's reader
  would pass the bytes on (Python then shows replacement characters). :func:`spark_avro_records`
  checks every string (nested ones too) and fails the query naming the file instead;
- file names: Spark's reader skips files without the ``.avro`` suffix when the Hadoop setting
  ``avro.mapred.ignore.inputs.without.extension`` is true; :func:`spark_avro_frame` tells it not to
  where a listed file has another name;
- field names equal but for case: Spark matches fields ignoring case (by default) and fails;
  :func:`schema_difference` keeps jetconnect's reader for them.

The same holds for a plain batch *write* of an Avro sink (no Avro schema of the user's, no file
rolling): ``df.write.format("avro")`` writes in the JVM what jetconnect's sink would write through
Python workers, the same records under the same schema but for names (Spark's decimals are
``fixed``, jetconnect's ``bytes``; both read back as the same decimal).
:func:`spark_avro_write_refusal` says where it would not: a name Avro's Java library refuses
(fastavro writes it), a type jetconnect's sink refuses (its error is the user's answer), a session
that rebases dates on write. :func:`spark_avro_write` writes as the sink would leave a directory:
no ``_SUCCESS`` marker, no Hadoop ``.crc`` beside each file (which would keep a later read from
Spark's reader, see :func:`~jetconnect._files.batch_reader.local_file_uris`), files named
``part-*.avro`` and visible only once the job commits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pyspark.sql.types import (
    ArrayType,
    DataType,
    DateType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

#: Read options given to spark-avro: dates and timestamps as the file holds them (proleptic
#: Gregorian, as fastavro reads them), whatever ``spark.sql.avro.datetimeRebaseModeInRead`` says.
SPARK_AVRO_OPTIONS = {"datetimeRebaseMode": "CORRECTED"}

#: Header metadata of files Spark wrote in its legacy (Julian) calendar: its reader rebases them.
SPARK_LEGACY_DATETIME_KEY = "org.apache.spark.legacyDateTime"
SPARK_VERSION_KEY = "org.apache.spark.version"


def spark_avro_refusal(spark: SparkSession) -> str | None:
    """Why ``spark.read.format("avro")`` is not available in ``spark`` (spark-avro's jar is not on
    the session), or None. Costs an analysis of an empty read (tens of milliseconds); under Spark
    Connect the server answers."""
    try:
        spark.read.format("avro").schema("probe int").load().schema  # noqa: B018  # forces the lookup
    except Exception as exc:  # classic and Connect raise different AnalysisException classes
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"Spark's Avro reader (spark-avro) is not on this session: {first_line[:300]}"
    return None


def spark_avro_frame(spark: SparkSession, uris: Sequence[str]) -> DataFrame:
    """Spark's Avro reader over ``uris``, as it is (a lazy read: its ``schema`` reads one header)."""
    if not uris:
        raise ValueError("spark_avro_frame needs at least one file")
    options = dict(SPARK_AVRO_OPTIONS)
    if not all(uri.endswith(".avro") for uri in uris):
        # Spark skips a file without the suffix, without a word, when the Hadoop setting
        # avro.mapred.ignore.inputs.without.extension is true; this (deprecated) option overrides it.
        # Set only where needed: Spark logs a deprecation warning for it.
        options["ignoreExtension"] = "true"
    return spark.read.format("avro").options(**options).load(list(uris))


def as_nullable(data_type: DataType) -> DataType:
    """``data_type`` with every field, element and value nullable, as Spark's file sources report it."""
    if isinstance(data_type, StructType):
        return StructType([StructField(f.name, as_nullable(f.dataType), True) for f in data_type.fields])
    if isinstance(data_type, ArrayType):
        return ArrayType(as_nullable(data_type.elementType), True)
    if isinstance(data_type, MapType):
        return MapType(as_nullable(data_type.keyType), as_nullable(data_type.valueType), True)
    return data_type


def schema_difference(ours: StructType, spark_schema: StructType, case_sensitive: bool = False) -> str | None:
    """Why Spark's reader would not give rows of ``ours`` (jetconnect's schema of the files), or None
    when ``spark_schema`` (Spark's, all nullable) is ``ours`` but for nullability."""
    if as_nullable(ours) != spark_schema:
        return (
            f"Spark's reader gives {spark_schema.simpleString()[:300]}, jetconnect's "
            f"{as_nullable(ours).simpleString()[:300]}"
        )
    if not case_sensitive and (twins := _names_equal_but_for_case(ours)) is not None:
        return f"fields {twins} differ only by case, which Spark's reader matches ignoring case"
    return None


def _names_equal_but_for_case(data_type: DataType) -> str | None:
    if isinstance(data_type, StructType):
        seen: dict[str, str] = {}
        for f in data_type.fields:
            if f.name.lower() in seen:
                return f"{seen[f.name.lower()]!r} and {f.name!r}"
            seen[f.name.lower()] = f.name
        return next(filter(None, (_names_equal_but_for_case(f.dataType) for f in data_type.fields)), None)
    if isinstance(data_type, ArrayType):
        return _names_equal_but_for_case(data_type.elementType)
    if isinstance(data_type, MapType):
        return _names_equal_but_for_case(data_type.valueType)
    return None


def rebased_by_spark(metadata: dict[str, str]) -> bool:
    """Whether Spark's reader rebases the dates and timestamps of a file with this header metadata
    whatever it is told (Spark's ``DataSourceUtils.datetimeRebaseSpec``): written by Spark before
    3.0, or by Spark in ``LEGACY`` mode."""
    version = metadata.get(SPARK_VERSION_KEY)
    if version is None:
        return False  # then the read option decides: SPARK_AVRO_OPTIONS says no rebase
    return version < "3.0.0" or SPARK_LEGACY_DATETIME_KEY in metadata


def spark_avro_records(spark: SparkSession, uris: Sequence[str], schema: StructType, owner: str) -> DataFrame:
    """The records of the files ``uris`` read by Spark's Avro reader, equal row for row to what
    jetconnect's reader gives for them (``schema``: jetconnect's Spark schema of the files, which
    the caller has checked Spark's equals, see :func:`schema_difference`): every string is checked
    to be UTF-8, and one that is not fails the query with a message naming the file."""
    from pyspark.sql import functions as F

    columns = []
    for field in schema.fields:
        column = F.col(f"`{field.name}`")
        valid = _valid_utf8(column, field.dataType)
        if valid is None:
            columns.append(column)
            continue
        undecodable = F.raise_error(
            F.concat(
                F.lit(f"{owner}: '"),
                F.input_file_name(),
                F.lit(
                    f"' holds a string in field '{field.name}' that is not UTF-8: a corrupt file "
                    "(batch_reader='jetconnect' names the block)"
                ),
            )
        )
        # The file's name is looked up only for a row that fails (a CASE evaluates the branch it takes).
        columns.append(F.when(valid, column).otherwise(undecodable).alias(field.name))
    return spark_avro_frame(spark, uris).select(*columns)


def _has_string(data_type: DataType) -> bool:
    if isinstance(data_type, StringType):
        return True
    if isinstance(data_type, StructType):
        return any(_has_string(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return _has_string(data_type.elementType)
    if isinstance(data_type, MapType):
        return _has_string(data_type.keyType) or _has_string(data_type.valueType)
    return False


def _each_valid(inner: DataType) -> Callable[[Column], Column]:
    """The one-argument lambda ``forall`` takes (Spark counts its parameters: no default may bind ``inner``)."""

    def valid(element: Column) -> Column:
        check = _valid_utf8(element, inner)
        assert check is not None  # only called where inner holds a string
        return check

    return valid


def _valid_utf8(column: Column, data_type: DataType) -> Column | None:
    """A never-null boolean: whether every string in ``column`` (of ``data_type``) is UTF-8; None
    when it holds no string at all."""
    from pyspark.sql import functions as F

    if not _has_string(data_type):
        return None
    checks: list[Column] = []
    if isinstance(data_type, StringType):
        checks.append(F.is_valid_utf8(column))
    elif isinstance(data_type, StructType):
        checks += [c for f in data_type.fields if (c := _valid_utf8(column.getField(f.name), f.dataType)) is not None]
    elif isinstance(data_type, ArrayType):
        checks.append(F.forall(column, _each_valid(data_type.elementType)))
    elif isinstance(data_type, MapType):
        for values, inner in ((F.map_keys(column), data_type.keyType), (F.map_values(column), data_type.valueType)):
            if _has_string(inner):
                checks.append(F.forall(values, _each_valid(inner)))
    valid = checks[0]
    for check in checks[1:]:
        valid = valid & check
    return column.isNull() | valid


#: The sink's codecs (Avro's names) as spark-avro's ``compression`` option names them.
SPARK_AVRO_CODECS = {"null": "uncompressed", "deflate": "deflate", "snappy": "snappy", "zstandard": "zstandard"}

#: Write options given to spark-avro, in the job's Hadoop configuration: no ``_SUCCESS`` file, and
#: Hadoop's raw local file system (no ``.crc`` file beside each Avro file; a new instance, since
#: Hadoop caches file systems by scheme, not by configuration).
SPARK_AVRO_WRITE_OPTIONS = {
    "mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
    "fs.file.impl.disable.cache": "true",
}

#: A name Avro's Java library accepts (``Schema.validateName``); fastavro does not check.
_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def spark_avro_write_refusal(spark: SparkSession, schema: StructType) -> str | None:
    """Why ``df.write.format("avro")`` would not write rows of ``schema`` as an Avro sink without
    a schema of the user's does (or why it is not there), or None. The caller has checked that the
    sink takes ``schema`` at all (:func:`~jetconnect._files.avro_schema.to_avro_schema`): Spark's
    writer takes every such type too."""
    fields = _fields(schema, "")
    for path, _ in fields:
        if not _AVRO_NAME.fullmatch(path.rsplit(".", 1)[-1]):
            return f"field '{path}' is not a name Avro's Java library (Spark's writer) accepts"
    if (twins := _names_equal_but_for_case(schema)) is not None:
        return f"fields {twins} differ only by case, which Spark's writer refuses"
    dated = any(isinstance(t, (DateType, TimestampType, TimestampNTZType)) for _, t in fields)
    rebase = str(spark.conf.get("spark.sql.avro.datetimeRebaseModeInWrite", "CORRECTED")).strip().upper()
    if dated and rebase != "CORRECTED":
        return f"spark.sql.avro.datetimeRebaseModeInWrite is {rebase}: Spark's writer would rebase the dates"
    return spark_avro_refusal(spark)


def _fields(data_type: DataType, path: str) -> list[tuple[str, DataType]]:
    """Every field of ``data_type`` (nested ones too) as ``(dotted path, type)``, and the element,
    key and value types of its arrays and maps under their field's path."""
    found: list[tuple[str, DataType]] = []
    if isinstance(data_type, StructType):
        for f in data_type.fields:
            inner = f"{path}.{f.name}" if path else f.name
            found.append((inner, f.dataType))
            found += _fields(f.dataType, inner)
    elif isinstance(data_type, ArrayType):
        found += [(path, data_type.elementType), *_fields(data_type.elementType, path)]
    elif isinstance(data_type, MapType):
        found += [(path, data_type.valueType), *_fields(data_type.valueType, path)]
    return found


def spark_avro_write(df: DataFrame, uri: str, codec: str) -> None:
    """Append ``df`` to the directory at ``uri`` with Spark's Avro writer, compressed with
    ``codec`` (an Avro codec name, see :data:`SPARK_AVRO_CODECS`); see the module's docstring."""
    (
        df.write.format("avro")
        .mode("append")
        .option("compression", SPARK_AVRO_CODECS[codec])
        .options(**SPARK_AVRO_WRITE_OPTIONS)
        .save(uri)
    )


__all__ = [
    "SPARK_AVRO_CODECS",
    "SPARK_AVRO_OPTIONS",
    "SPARK_AVRO_WRITE_OPTIONS",
    "SPARK_LEGACY_DATETIME_KEY",
    "SPARK_VERSION_KEY",
    "as_nullable",
    "rebased_by_spark",
    "schema_difference",
    "spark_avro_frame",
    "spark_avro_records",
    "spark_avro_refusal",
    "spark_avro_write",
    "spark_avro_write_refusal",
]
