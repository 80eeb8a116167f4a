"""Keys and values as Kafka's own Java serializers write them (``org.apache.kafka.common.serialization``).

``short``, ``integer``, ``long``, ``float`` and ``double`` are the big-endian bytes of
``ShortSerializer`` ... ``DoubleSerializer`` (2, 4, 8, 4 and 8 bytes; floats as IEEE 754, as
``Float.floatToRawIntBits`` writes them); ``uuid`` is what ``UUIDSerializer`` writes, the UUID's
text (``UUID.toString()``, 36 characters of UTF-8), not 16 raw bytes. A null record is null both
ways, as for the Java serializers. Decoding is columnar: one join and one NumPy view per batch.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import DataType, DoubleType, FloatType, IntegerType, LongType, ShortType

from jetconnect_kafka.serde import DecodeError, StringFormat, ValueFormat


class FixedWidthFormat(ValueFormat):
    """A number in ``width`` big-endian bytes, as one of Kafka's Java serializers writes it."""

    def __init__(self, name: str, java: str, spark: DataType, dtype: str, arrow: pa.DataType) -> None:
        self.name, self.java, self.spark = name, java, spark
        self.dtype = np.dtype(dtype)
        self.width = self.dtype.itemsize
        self.arrow = arrow

    def spark_type(self) -> DataType:
        return self.spark

    def decode(self, values: Sequence[bytes | None]) -> pa.Array:
        column = pa.array(values, type=pa.binary())
        if not len(column):
            return pa.array([], type=self.arrow)
        lengths = pc.binary_length(column)
        wrong = pc.not_equal(lengths, self.width)
        if pc.any(wrong).as_py():  # nulls are null in ``wrong`` too, so they pass
            at = pc.index(wrong, True).as_py()
            raise DecodeError(
                at,
                f"value has {len(values[at] or b'')} bytes; Kafka's {self.java} writes {self.width} "
                f"(was it written by another serializer?)",
            )
        nulls = column.is_null().to_numpy(zero_copy_only=False) if column.null_count else None
        if nulls is not None:
            column = column.fill_null(b"\0" * self.width)
        data = column.buffers()[2]  # a fresh array: its values start at byte 0, each ``width`` long
        numbers = np.frombuffer(data, dtype=self.dtype, count=len(column)).astype(self.dtype.newbyteorder("="))
        return pa.array(numbers, type=self.arrow, mask=nulls)

    def encode(self, column: pa.Array) -> list[bytes | None]:
        try:
            column = column.cast(self.arrow)  # safe: a value out of range is an error, never wrapped
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise ValueError(f"a {column.type} column does not fit Kafka's {self.java} ({self.arrow}): {exc}") from None
        filled = column.fill_null(0) if column.null_count else column
        raw = filled.to_numpy(zero_copy_only=False).astype(self.dtype).tobytes()
        w = self.width
        out: list[bytes | None] = [raw[i : i + w] for i in range(0, len(raw), w)]
        if column.null_count:
            for i, valid in enumerate(column.is_valid().to_pylist()):
                if not valid:
                    out[i] = None
        return out


class UuidFormat(StringFormat):
    """``UUIDSerializer``: the UUID as text; decoding checks that it is one (``UUID.fromString``)."""

    name = "uuid"

    def decode(self, values: Sequence[bytes | None]) -> pa.Array:
        text = super().decode(values)
        for i, value in enumerate(text.to_pylist()):
            if value is not None and not _is_uuid(value):
                raise DecodeError(i, f"value {value[:40]!r} is not a UUID as Kafka's UUIDSerializer writes it")
        return text

    def encode(self, column: pa.Array) -> list[bytes | None]:
        out: list[bytes | None] = []
        for value in column.to_pylist():
            if value is None:
                out.append(None)
                continue
            if not isinstance(value, str):
                raise ValueError(f"uuid format takes a string column, got {type(value).__name__}")
            out.append(str(uuid.UUID(value)).encode())  # canonical text, as Java's UUID.toString()
        return out


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36


#: format name -> (Java serializer, Spark type, big-endian dtype, Arrow type)
_FIXED = {
    "short": ("ShortSerializer", ShortType(), ">i2", pa.int16()),
    "integer": ("IntegerSerializer", IntegerType(), ">i4", pa.int32()),
    "long": ("LongSerializer", LongType(), ">i8", pa.int64()),
    "float": ("FloatSerializer", FloatType(), ">f4", pa.float32()),
    "double": ("DoubleSerializer", DoubleType(), ">f8", pa.float64()),
}
JAVA_FORMATS = (*_FIXED, "uuid")


def java_format(name: str) -> ValueFormat:
    """The format of Kafka's Java serializer ``name`` (one of :data:`JAVA_FORMATS`)."""
    if name == "uuid":
        return UuidFormat()
    java, spark, dtype, arrow = _FIXED[name]
    return FixedWidthFormat(name, java, spark, dtype, arrow)


__all__ = ["JAVA_FORMATS", "FixedWidthFormat", "UuidFormat", "java_format"]
