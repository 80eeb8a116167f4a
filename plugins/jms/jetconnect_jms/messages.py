"""JMS messages as Arrow: the raw form kept in the write-ahead log, and the rows a query sees.

The log keeps each message whole (id, destination, JMS timestamp, every header, body bytes), so
replay never depends on the broker; the user's view (body decoded or not, chosen headers as
columns, or a projection function) is computed from it on the executors.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from jetconnect.api import mapped_rows, parse_schema, rows_to_batch, to_arrow_schema
from jetconnect.errors import OptionError, SourceError

#: The write-ahead log's record of one message.
RAW_SCHEMA = pa.schema(
    [
        pa.field("message_id", pa.string(), nullable=False),
        pa.field("destination", pa.string()),
        pa.field("timestamp_ms", pa.int64()),
        pa.field("headers", pa.map_(pa.string(), pa.string())),
        pa.field("body", pa.binary()),
    ]
)

#: The latest JMS timestamp kept (ms): 9999-12-31T23:59:59.999Z, the end of Spark's and Python's timestamps.
MAX_TIMESTAMP_MS = 253_402_300_799_999
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: STOMP frame headers that describe the frame, not the message: not shown as message headers.
_FRAME_HEADERS = frozenset({"ack", "subscription", "content-length"})
BODY_FORMATS = ("string", "binary")


@dataclass(frozen=True)
class JmsMessage:
    """What a projection function receives: one message, body decoded per ``body_format``."""

    message_id: str
    destination: str
    timestamp: datetime | None
    headers: dict[str, str]
    body: str | bytes


def frames_to_batch(frames: Sequence[tuple[dict[str, str], bytes]]) -> pa.RecordBatch:
    """The raw log form of received MESSAGE frames, in the order received.

    The headers map is built from flat key and value lists and their offsets: Arrow converts a
    list of pairs per message about three times slower, and this runs for every message.
    """
    ids, destinations, stamps, bodies = [], [], [], []
    keys: list[str] = []
    values: list[str] = []
    offsets = [0]
    for frame_headers, body in frames:
        ids.append(frame_headers["message-id"])
        destinations.append(frame_headers.get("destination"))
        stamps.append(_timestamp_ms(frame_headers.get("timestamp")))
        for key, value in frame_headers.items():
            if key not in _FRAME_HEADERS:
                keys.append(key)
                values.append(value)
        offsets.append(len(keys))
        bodies.append(body if isinstance(body, bytes) else str(body).encode("utf-8"))
    headers = pa.MapArray.from_arrays(
        pa.array(offsets, pa.int32()), pa.array(keys, pa.string()), pa.array(values, pa.string())
    )
    return pa.RecordBatch.from_arrays(
        [
            pa.array(ids, pa.string()),
            pa.array(destinations, pa.string()),
            pa.array(stamps, pa.int64()),
            headers,
            pa.array(bodies, pa.binary()),
        ],
        schema=RAW_SCHEMA,
    )


def _timestamp_ms(stamp: str | None) -> int | None:
    """The JMS timestamp header as ms since the epoch, or None if it is not one.

    Another producer may put anything in it ("²" passes ``str.isdigit``, 10**30 overflows Arrow's
    int64, year 10000 is past what a timestamp column holds): such a value is no JMS timestamp, so
    the column is null; the header map keeps the text.
    """
    if not stamp or not (stamp.isascii() and stamp.isdigit()) or len(stamp) > 15:
        return None
    value = int(stamp)
    return value if value <= MAX_TIMESTAMP_MS else None


@dataclass(frozen=True)
class MessageView:
    """How raw messages become rows: the schema a query sees and the conversion to it.

    ``projection`` (Python API only) maps a :class:`JmsMessage` to a row of ``schema``; without
    it rows are ``message_id, destination, timestamp, headers, body`` plus one string column per
    name in ``header_columns``.
    """

    owner: str
    body_format: str = "string"
    charset: str = "utf-8"
    header_columns: tuple[str, ...] = ()
    projection: Callable[[JmsMessage], Any] | None = None
    schema_ddl: str | None = None

    def __post_init__(self) -> None:
        if self.body_format not in BODY_FORMATS:
            raise OptionError(
                f"{self.owner}: option 'body_format' must be one of {', '.join(BODY_FORMATS)}, got {self.body_format!r}"
            )
        try:
            codecs.lookup(self.charset)
        except LookupError:
            raise OptionError(f"{self.owner}: option 'charset' names no known encoding: {self.charset!r}") from None
        if self.projection is not None and self.schema_ddl is None:
            raise OptionError(
                f"{self.owner}: option 'schema' is required with a projection (the DDL of what it returns)"
            )
        if self.projection is None and self.schema_ddl is not None:
            raise OptionError(f"{self.owner}: option 'schema' only applies with a projection")

    def schema(self) -> Any:
        if self.schema_ddl is not None:
            return parse_schema(self.schema_ddl)
        body = "string" if self.body_format == "string" else "binary"
        extra = "".join(f", `{name}` string" for name in self.header_columns)
        return parse_schema(
            f"message_id string NOT NULL, destination string, timestamp timestamp, "
            f"headers map<string,string>, body {body}{extra}"
        )

    def check_decodable(self, batch: pa.RecordBatch) -> None:
        """Raise naming the destination and message id of the first body that does not decode.

        Called on the driver before a message is accepted, so a bad message is never
        acknowledged: it stays on the broker and nothing accepted before it is lost.
        """
        if self.body_format != "string":
            return
        if self._is_utf8:
            try:
                batch.column("body").cast(pa.string())  # Arrow validates UTF-8 when casting
                return
            except pa.ArrowInvalid:
                pass  # find the message at fault below
        for message_id, destination, body in zip(
            batch.column("message_id").to_pylist(),
            batch.column("destination").to_pylist(),
            batch.column("body").to_pylist(),
        ):
            try:
                body.decode(self.charset)
            except UnicodeDecodeError as exc:
                raise SourceError(
                    f"{self.owner}: message {message_id} on {destination} has a body that is not valid "
                    f"{self.charset} ({exc.reason} at byte {exc.start}); it was not acknowledged and stays "
                    f"on the broker: read it with body_format='binary' or remove it"
                ) from None

    @property
    def _is_utf8(self) -> bool:
        return codecs.lookup(self.charset).name == "utf-8"

    def to_rows(self, raw: pa.RecordBatch) -> pa.RecordBatch:
        """The user's view of a raw log batch (executor side)."""
        schema = self.schema()
        if self.projection is not None:
            # a message the projection returns None for is left out (Jet's rule for mapping functions)
            return rows_to_batch(mapped_rows(self.projection(m) for m in self._messages(raw)), schema, self.owner)
        arrow_schema = to_arrow_schema(schema)
        # checked: a log written before MAX_TIMESTAMP_MS existed must fail, not wrap around
        stamps = pc.multiply_checked(raw.column("timestamp_ms"), 1000).cast(arrow_schema.field("timestamp").type)
        columns = [
            raw.column("message_id"),
            raw.column("destination"),
            stamps,
            raw.column("headers").cast(arrow_schema.field("headers").type),
            self._bodies(raw.column("body")),
        ]
        for name in self.header_columns:
            columns.append(pa.array(_header_values(raw.column("headers"), name), pa.string()))
        return pa.RecordBatch.from_arrays(columns, schema=arrow_schema)

    def _bodies(self, bodies: pa.Array) -> pa.Array:
        if self.body_format == "binary":
            return bodies
        if self._is_utf8:
            return bodies.cast(pa.string())
        return pa.array([b.decode(self.charset) for b in bodies.to_pylist()], pa.string())

    def _messages(self, raw: pa.RecordBatch) -> list[JmsMessage]:
        bodies = self._bodies(raw.column("body")).to_pylist()
        messages = []
        for i, (mid, dest, stamp, headers) in enumerate(
            zip(*(raw.column(n).to_pylist() for n in ("message_id", "destination", "timestamp_ms", "headers")))
        ):
            when = _EPOCH + timedelta(milliseconds=stamp) if stamp is not None else None  # exact, unlike stamp / 1000
            messages.append(JmsMessage(mid, dest, when, dict(headers or ()), bodies[i]))
        return messages


def _header_values(headers: pa.Array, name: str) -> list[str | None]:
    return [dict(pairs).get(name) if pairs is not None else None for pairs in headers.to_pylist()]


__all__ = ["BODY_FORMATS", "RAW_SCHEMA", "JmsMessage", "MessageView", "frames_to_batch"]
