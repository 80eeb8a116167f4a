"""Reading Compact records by their schemas, without the classes that wrote them.

The format (what every Hazelcast client writes): a record is its schema id (8 bytes), then, when
the schema has variable-size fields, the length of the data section (4 bytes); the data section
holds the fixed-size fields at the positions the schema gives them (booleans as bits), then the
variable-size ones (strings, nullable numbers, nested records, arrays, decimals, dates...), and
after it one position per variable-size field (1, 2 or 4 bytes, by the data section's length;
all ones: null). A top-level value is a ``Data`` (partition hash, type id -55) around a record.

Two readers share that knowledge:

* :meth:`CompactReader.record` turns one record into a dict of Python values (nested records as
  dicts): what a Python predicate or projection gets, and a string column's JSON text;
* :meth:`CompactReader.column` turns a whole column of records into one Arrow struct array of a
  given Spark type, a field at a time over all records of one schema: fixed-size and nullable
  numbers, booleans, strings and nested records are gathered with numpy from the records' bytes
  at once; rarer kinds (decimals, dates, times, arrays) go value by value through :meth:`record`'s
  rules and the core's exact conversion. Fields are matched to the Spark struct by name: a field
  the record lacks is null, one of a kind the column cannot hold is a SchemaError naming the
  field, both types and the entry.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from hazelcast.serialization.api import FieldKind as K
from hazelcast.serialization.compact import FieldDescriptor, Schema
from pyspark.sql import types as T

from jetconnect.api import columns_to_batch, to_arrow_schema
from jetconnect.errors import SchemaError
from jetconnect_imap.hazelcast.compact.kinds import (
    ARRAY_ITEM,
    FIXED,
    NULLABLE,
    PACKED_ARRAYS,
    UNSUPPORTED,
    accepts,
)
from jetconnect_imap.hazelcast.compact.schemas import CompactSchemas
from jetconnect_imap.hazelcast.values import as_text

#: Hazelcast's type id of a Compact value (SerializationConstants.TYPE_COMPACT).
COMPACT_TYPE_ID = -55
#: Where the record of a top-level value starts: after the Data's partition hash and type id.
RECORD_START = 8
_UINT8_RANGE, _UINT16_RANGE = 255, 65535
_NUMPY = {"b": "i1", "h": "i2", "i": "i4", "q": "i8", "f": "f4", "d": "f8"}
#: Describes row ``i`` of a column for an error: the entry's key, an event's partition and sequence.
Describe = Callable[[int], str]


class CompactData:
    """A Compact value as it came from the member (the bytes of its ``Data``), decoded once the
    type of the column it fills is known."""

    __slots__ = ("buf",)

    def __init__(self, buf: bytes) -> None:
        self.buf = buf

    @property
    def schema_id(self) -> int:
        return int(struct.unpack_from(">q", self.buf, RECORD_START)[0])

    def __repr__(self) -> str:
        return f"CompactData(<{len(self.buf)} bytes>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CompactData) and other.buf == self.buf

    def __hash__(self) -> int:
        return hash(self.buf)


class CompactReader:
    """Reads records of the schemas ``schemas`` knows or fetches, in the client's byte order."""

    def __init__(self, schemas: CompactSchemas, big_endian: bool = True) -> None:
        self.schemas = schemas
        self._order = ">" if big_endian else "<"
        o = self._order
        self._i8, self._i16, self._i32, self._i64 = (struct.Struct(o + c).unpack_from for c in "bhiq")
        self._u16 = struct.Struct(o + "H").unpack_from

    # --- one record ----------------------------------------------------------------------------

    def record(self, buf: bytes, start: int = RECORD_START) -> dict[str, Any]:
        """The record at ``start`` as a dict, every field by its kind (nested records as dicts)."""
        schema = self.schemas.get(self._i64(buf, start)[0])
        data_start, positions_at, width = self._sections(buf, start, schema)
        out = {}
        for f in schema.fields:
            try:
                out[f.name] = self._field(buf, f, data_start, positions_at, width)
            except (ValueError, OverflowError) as exc:
                raise SchemaError(
                    f"Compact field '{f.name}' of {schema.type_name!r} holds a {f.kind.name} value outside what "
                    f"Python and Spark hold: {exc}"
                ) from None
        return out

    def _sections(self, buf: bytes, start: int, schema: Schema) -> tuple[int, int, int]:
        """Where a record's data section starts, where its positions are, and their width."""
        body = start + 8
        if not schema.var_sized_field_count:
            return body, 0, 4
        length = self._i32(buf, body)[0]
        width = 1 if length < _UINT8_RANGE else 2 if length < _UINT16_RANGE else 4
        return body + 4, body + 4 + length, width

    def _position(self, buf: bytes, at: int, index: int, width: int) -> int:
        """The position of variable-size field ``index`` (-1: null)."""
        if width == 1:
            value = buf[at + index]
            return -1 if value == 0xFF else value
        if width == 2:
            value = self._u16(buf, at + 2 * index)[0]
            return -1 if value == 0xFFFF else value
        return int(self._i32(buf, at + 4 * index)[0])

    def _field(self, buf: bytes, field: FieldDescriptor, data_start: int, positions_at: int, width: int) -> Any:
        kind = field.kind
        if kind == K.BOOLEAN:
            return bool((buf[data_start + field.position] >> field.bit_position) & 1)
        if kind in FIXED:
            code, _ = FIXED[kind]
            return struct.unpack_from(self._order + code, buf, data_start + field.position)[0]
        if kind in UNSUPPORTED:
            raise SchemaError(f"Compact field '{field.name}' is of kind {kind.name}, which jetconnect does not read")
        position = self._position(buf, positions_at, field.index, width)
        if position < 0:
            return None
        return self._value(buf, data_start + position, kind)

    def _value(self, buf: bytes, at: int, kind: K) -> Any:
        """A variable-size value of ``kind`` at ``at`` (a nullable number, a string, a record...)."""
        kind = NULLABLE.get(kind, kind)
        if kind == K.BOOLEAN:
            return buf[at] != 0
        if kind in FIXED:
            return struct.unpack_from(self._order + FIXED[kind][0], buf, at)[0]
        if kind == K.STRING:
            size = self._i32(buf, at)[0]
            return bytes(buf[at + 4 : at + 4 + size]).decode("utf-8")
        if kind == K.COMPACT:
            return self.record(buf, at)
        if kind == K.DECIMAL:
            size = self._i32(buf, at)[0]
            unscaled = int.from_bytes(buf[at + 4 : at + 4 + size], "big", signed=True)
            return decimal.Decimal(unscaled).scaleb(-self._i32(buf, at + 4 + size)[0])
        if kind == K.DATE:
            return dt.date(self._i32(buf, at)[0], buf[at + 4], buf[at + 5])
        if kind == K.TIME:
            return dt.time(buf[at], buf[at + 1], buf[at + 2], self._i32(buf, at + 3)[0] // 1000)
        if kind == K.TIMESTAMP:
            return dt.datetime.combine(self._value(buf, at, K.DATE), self._value(buf, at + 6, K.TIME))
        if kind == K.TIMESTAMP_WITH_TIMEZONE:
            offset = dt.timezone(dt.timedelta(seconds=self._i32(buf, at + 13)[0]))
            return self._value(buf, at, K.TIMESTAMP).replace(tzinfo=offset)
        if kind == K.ARRAY_OF_INT8:
            size = self._i32(buf, at)[0]
            return bytes(buf[at + 4 : at + 4 + size])
        if kind == K.ARRAY_OF_BOOLEAN:
            count = self._i32(buf, at)[0]
            return [bool((buf[at + 4 + i // 8] >> (i % 8)) & 1) for i in range(count)]
        if kind in PACKED_ARRAYS:
            count = self._i32(buf, at)[0]
            return list(struct.unpack_from(f"{self._order}{count}{FIXED[ARRAY_ITEM[kind]][0]}", buf, at + 4))
        if kind in ARRAY_ITEM:
            length, count = self._i32(buf, at)[0], self._i32(buf, at + 4)[0]
            items_at = at + 8
            width = 1 if length < _UINT8_RANGE else 2 if length < _UINT16_RANGE else 4
            item = ARRAY_ITEM[kind]
            out = []
            for i in range(count):
                position = self._position(buf, items_at + length, i, width)
                out.append(None if position < 0 else self._value(buf, items_at + position, item))
            return out
        raise SchemaError(f"a Compact value of kind {kind.name}, which jetconnect does not read")

    def schemas_by_path(self, values: Sequence[Any]) -> dict[str, list[Schema]]:
        """The schemas of the records among ``values`` and of every record nested in them, by
        path (``""`` for the values, ``"address"``, ``"lines"`` for the items of an array of
        records): what a Spark schema is derived from (a nested record's schema is its own)."""
        found: dict[str, dict[int, Schema]] = {}

        def walk(buf: bytes, start: int, path: str) -> None:
            schema = self.schemas.get(self._i64(buf, start)[0])
            found.setdefault(path, {})[schema.schema_id] = schema
            data_start, positions_at, width = self._sections(buf, start, schema)
            for field in schema.fields:
                if field.kind not in (K.COMPACT, K.ARRAY_OF_COMPACT):
                    continue
                position = self._position(buf, positions_at, field.index, width)
                if position < 0:
                    continue
                at = data_start + position
                inner = f"{path}.{field.name}" if path else field.name
                if field.kind == K.COMPACT:
                    walk(buf, at, inner)
                    continue
                length, count = self._i32(buf, at)[0], self._i32(buf, at + 4)[0]
                item_width = 1 if length < _UINT8_RANGE else 2 if length < _UINT16_RANGE else 4
                for i in range(count):
                    item = self._position(buf, at + 8 + length, i, item_width)
                    if item >= 0:
                        walk(buf, at + 8 + item, inner)

        for value in values:
            if type(value) is CompactData:
                walk(value.buf, RECORD_START, "")
        return {path: list(by_id.values()) for path, by_id in found.items()}

    def plain(self, value: CompactData) -> dict[str, Any]:
        """A top-level Compact value as a dict of plain Python values."""
        return self.record(value.buf, RECORD_START)

    # --- a column of records ---------------------------------------------------------------------

    def column(self, values: Sequence[Any], target: T.StructType, describe: Describe, path: str = "") -> pa.StructArray:
        """The records among ``values`` (CompactData, or None for a null) as one struct array of
        ``target``; any other value is a SchemaError naming its entry."""
        pieces: list[bytes] = []
        positions = np.full(len(values), -1, dtype=np.int64)
        at = 0
        for i, value in enumerate(values):
            if value is None:
                continue
            if type(value) is not CompactData:
                raise SchemaError(
                    f"{describe(i)}: {_what(path)} is a {type(value).__name__}, not a Compact record, so it "
                    f"cannot fill struct <{target.simpleString()}>"
                )
            pieces.append(value.buf)
            positions[i] = at + RECORD_START
            at += len(value.buf)
        blob = b"".join(pieces) + bytes(8)  # the padding lets every gather read whole words
        return _Columns(self, blob, describe).struct(positions, target, path)


class _Columns:
    """One column's records in one buffer, read a field at a time (see :meth:`CompactReader.column`)."""

    def __init__(self, reader: CompactReader, blob: bytes, describe: Describe) -> None:
        self.reader, self.blob, self.describe = reader, blob, describe
        self.bytes = np.frombuffer(blob, dtype=np.uint8)
        self.order = reader._order

    def gather(self, at: np.ndarray, code: str) -> np.ndarray:
        """The fixed-size values (struct ``code``) at byte positions ``at``, as native numbers."""
        size = struct.calcsize(code)
        raw = self.bytes[at[:, None] + np.arange(size)]
        return raw.view(self.order + _NUMPY[code]).ravel().astype(_NUMPY[code])

    def struct(self, positions: np.ndarray, target: T.StructType, path: str) -> pa.StructArray:
        """The records at ``positions`` (-1: null) as a struct array of ``target``."""
        arrow_type = to_arrow_schema(T.StructType([T.StructField("v", target)])).field(0).type
        valid = positions >= 0
        rows = np.nonzero(valid)[0]
        ids = self.gather(positions[rows], "q") if len(rows) else np.empty(0, dtype=np.int64)
        groups = [(int(sid), rows[ids == sid]) for sid in np.unique(ids)]
        order = np.concatenate([members for _, members in groups] + [np.nonzero(~valid)[0]])
        nulls = int((~valid).sum())
        children = []
        for index, field in enumerate(target.fields):
            child_type = arrow_type.field(index).type
            parts = [self.field(sid, positions[members], members, field, child_type, path) for sid, members in groups]
            if nulls:
                parts.append(pa.nulls(nulls, child_type))
            child = pa.concat_arrays(parts) if len(parts) != 1 else parts[0]
            if len(groups) > 1 or nulls:
                child = child.take(pa.array(np.argsort(order, kind="stable")))
            children.append(child)
        mask = pa.array(~valid) if nulls else None
        return pa.StructArray.from_arrays(children, fields=list(arrow_type), mask=mask)

    def field(
        self,
        schema_id: int,
        starts: np.ndarray,
        rows: np.ndarray,
        target: T.StructField,
        arrow_type: pa.DataType,
        path: str,
    ) -> pa.Array:
        """Field ``target`` of the records of one schema starting at ``starts`` (rows ``rows``)."""
        schema = self.reader.schemas.get(schema_id)
        name = f"{path}{target.name}"
        field = schema.fields_dict.get(target.name)
        n = len(starts)
        if field is None:
            if not target.nullable:
                raise SchemaError(
                    f"{self.describe(int(rows[0]))}: its {schema.type_name!r} record has no field '{name}', and "
                    f"column '{name}' is not nullable"
                )
            return pa.nulls(n, arrow_type)
        kind = field.kind
        spark = target.dataType
        compact = kind in (K.COMPACT, K.ARRAY_OF_COMPACT)
        fits = (
            isinstance(spark, T.StringType)
            if compact and not isinstance(spark, (T.StructType, T.ArrayType))
            else (isinstance(spark, T.StructType) if kind == K.COMPACT else accepts(spark, kind))
        )
        if not fits or kind in UNSUPPORTED:
            raise SchemaError(
                f"{self.describe(int(rows[0]))}: Compact field '{name}' of {schema.type_name!r} is {kind.name}, which "
                f"column '{name}' of type {spark.simpleString()} cannot hold"
            )
        data_start, positions_at, width = self.sections(starts, schema)
        if kind == K.BOOLEAN and isinstance(spark, T.BooleanType):
            bits = (self.bytes[data_start + field.position] >> field.bit_position) & 1
            return pa.array(bits.astype(bool), arrow_type)
        if kind in FIXED and _numeric(spark):
            return _numbers(self.gather(data_start + field.position, FIXED[kind][0]), arrow_type)
        if kind in FIXED or kind == K.BOOLEAN:  # into a string column: the number's text
            return self.by_value(starts, rows, field, target, arrow_type, path)
        offsets = self.var_positions(positions_at, field.index, width)
        present = offsets >= 0
        at = np.where(present, data_start + np.maximum(offsets, 0), 0)
        plain = NULLABLE.get(kind)
        if plain in FIXED and _numeric(spark):
            return _numbers(self.gather(at, FIXED[plain][0]), arrow_type, present)
        if plain == K.BOOLEAN and isinstance(spark, T.BooleanType):
            return pa.array(self.bytes[at] != 0, arrow_type, mask=~present)
        if kind == K.STRING and isinstance(spark, T.StringType):
            return self.strings(at, present, name, rows)
        if kind == K.COMPACT and isinstance(spark, T.StructType):
            return self.struct(np.where(present, at, -1), spark, f"{name}.")
        return self.by_value(starts, rows, field, target, arrow_type, path)

    def sections(self, starts: np.ndarray, schema: Schema) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each record's data section start, positions start and position width (as in ``_sections``)."""
        body = starts + 8
        if not schema.var_sized_field_count:
            return body, body, np.full(len(starts), 4)
        length = self.gather(body, "i").astype(np.int64)
        width = np.where(length < _UINT8_RANGE, 1, np.where(length < _UINT16_RANGE, 2, 4))
        return body + 4, body + 4 + length, width

    def var_positions(self, positions_at: np.ndarray, index: int, width: np.ndarray) -> np.ndarray:
        """Each record's position of variable-size field ``index`` (-1: null), read at its own width."""
        out = np.empty(len(positions_at), dtype=np.int64)
        for size, code, null in ((1, "", 0xFF), (2, "h", 0xFFFF), (4, "i", None)):
            rows = np.nonzero(width == size)[0]
            if not len(rows):
                continue
            at = positions_at[rows] + size * index
            value = self.bytes[at].astype(np.int64) if size == 1 else self.gather(at, code).astype(np.int64)
            if null is not None:
                value &= null
                value[value == null] = -1
            out[rows] = value
        return out

    def strings(self, at: np.ndarray, present: np.ndarray, name: str, rows: np.ndarray) -> pa.Array:
        """The strings at ``at`` (a length, then UTF-8) as one string array, copied at once."""
        lengths = np.where(present, self.gather(at, "i"), 0).astype(np.int64)
        offsets = np.zeros(len(at) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        source = np.repeat(at + 4 - offsets[:-1], lengths) + np.arange(offsets[-1])
        data = self.bytes[source]
        validity = pa.py_buffer(np.packbits(present, bitorder="little")) if not present.all() else None
        array = pa.StringArray.from_buffers(
            len(at), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data), validity, int((~present).sum())
        )
        try:
            array.validate(full=True)
        except pa.ArrowInvalid:
            bad = next(i for i in range(len(at)) if present[i] and not _utf8(data[offsets[i] : offsets[i + 1]]))
            raise SchemaError(f"{self.describe(int(rows[bad]))}: Compact field '{name}' is not valid UTF-8") from None
        return array

    def by_value(
        self,
        starts: np.ndarray,
        rows: np.ndarray,
        field: FieldDescriptor,
        target: T.StructField,
        arrow_type: pa.DataType,
        path: str,
    ) -> pa.Array:
        """A field read value by value (:meth:`CompactReader.record`'s rules), then converted
        exactly by the core; a string column takes each value's text as :func:`.values.as_text` shows it."""
        reader, blob = self.reader, self.blob
        values = []
        for row, start in zip(rows.tolist(), starts.tolist()):
            schema = reader.schemas.get(reader._i64(blob, start)[0])
            data_start, positions_at, width = reader._sections(blob, start, schema)
            try:
                values.append(reader._field(blob, field, data_start, positions_at, width))
            except (ValueError, OverflowError) as exc:  # a date or time Python (and Spark) cannot hold
                raise SchemaError(
                    f"{self.describe(row)}: Compact field '{path}{target.name}' holds a {field.kind.name} value "
                    f"outside what Spark holds: {exc}"
                ) from None
        if isinstance(target.dataType, T.StringType):
            values = [as_text(v) for v in values]
        try:
            return _converted(values, target)
        except SchemaError:  # a value the column's type cannot hold: name its entry
            bad = _first_bad(values, target)
            raise SchemaError(
                f"{self.describe(int(rows[bad]))}: Compact field '{path}{target.name}' holds {values[bad]!r}, which "
                f"column '{path}{target.name}' of type {target.dataType.simpleString()} cannot hold"
            ) from None


def _numeric(spark: T.DataType) -> bool:
    return isinstance(spark, (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType))


def _numbers(values: np.ndarray, arrow_type: pa.DataType, present: np.ndarray | None = None) -> pa.Array:
    """Numbers as an array of the column's type (a kind the column accepts only widens)."""
    mask = None if present is None or present.all() else ~present
    return pa.array(values.astype(arrow_type.to_pandas_dtype()), arrow_type, mask=mask)


def _converted(values: list[Any], target: T.StructField) -> pa.Array:
    """``values`` as an array of the field's type, by the core's exact conversion (SchemaError if one does not fit)."""
    return columns_to_batch([values], T.StructType([target]), "Compact").column(0)


def _first_bad(values: list[Any], target: T.StructField) -> int:
    for index, value in enumerate(values):
        try:
            _converted([value], target)
        except SchemaError:
            return index
    return 0


def _utf8(raw: np.ndarray) -> bool:
    try:
        raw.tobytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _what(path: str) -> str:
    return f"field '{path.rstrip('.')}'" if path else "the value"


__all__ = ["COMPACT_TYPE_ID", "RECORD_START", "CompactData", "CompactReader", "Describe"]
