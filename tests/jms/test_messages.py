"""Raw message log form and the user's view of it (no broker, no Spark)."""

from datetime import UTC, datetime, timedelta

import pytest

from jetconnect.errors import OptionError, SourceError
from jetconnect_jms.messages import RAW_SCHEMA, MessageView, frames_to_batch


def frame(i, body, **headers):
    return (
        {
            "message-id": f"ID:m-{i}",
            "destination": "/queue/q",
            "timestamp": "1700000000123",
            "ack": f"a{i}",
            "subscription": "s",
            "content-length": str(len(body)),
            **headers,
        },
        body,
    )


def test_frames_keep_id_destination_time_headers_and_body_bytes():
    batch = frames_to_batch([frame(1, b"hello", kind="x"), frame(2, b"\xff")])
    assert batch.schema == RAW_SCHEMA
    first = batch.to_pylist()[0]
    assert first["message_id"] == "ID:m-1" and first["timestamp_ms"] == 1700000000123
    assert dict(first["headers"])["kind"] == "x"
    assert "ack" not in dict(first["headers"])  # frame plumbing is not a message header
    assert batch.column("body").to_pylist() == [b"hello", b"\xff"]


def test_default_view_decodes_bodies_and_projects_header_columns():
    view = MessageView("jms_queue source 'q'", header_columns=("kind",))
    rows = view.to_rows(frames_to_batch([frame(1, "héllo".encode(), kind="x"), frame(2, b"b")])).to_pylist()
    assert [r["body"] for r in rows] == ["héllo", "b"]
    assert [r["kind"] for r in rows] == ["x", None]
    assert rows[0]["timestamp"] == datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert view.schema().fieldNames() == ["message_id", "destination", "timestamp", "headers", "body", "kind"]


def test_binary_view_keeps_bytes_and_other_charsets_decode():
    raw = frames_to_batch([frame(1, "é".encode("latin-1"))])
    assert MessageView("o", body_format="binary").to_rows(raw).column("body").to_pylist() == [b"\xe9"]
    assert MessageView("o", charset="latin-1").to_rows(raw).column("body").to_pylist() == ["é"]


def test_projection_gets_each_message_and_returns_rows_of_the_given_schema():
    view = MessageView(
        "o",
        projection=lambda m: (m.message_id, m.headers.get("kind"), len(m.body)),
        schema_ddl="id string, kind string, n int",
    )
    rows = view.to_rows(frames_to_batch([frame(1, b"abc", kind="k")])).to_pylist()
    assert rows == [{"id": "ID:m-1", "kind": "k", "n": 3}]


def test_undecodable_body_names_destination_and_message_id():
    view = MessageView("jms_queue source '/queue/q'")
    view.check_decodable(frames_to_batch([frame(1, b"ok")]))
    with pytest.raises(SourceError, match=r"message ID:m-2 on /queue/q .* not valid utf-8"):
        view.check_decodable(frames_to_batch([frame(1, b"ok"), frame(2, b"\xff\xfe")]))
    MessageView("o", body_format="binary").check_decodable(frames_to_batch([frame(2, b"\xff")]))


@pytest.mark.parametrize(
    "kwargs, option",
    [
        ({"body_format": "xml"}, "body_format"),
        ({"charset": "klingon"}, "charset"),
        ({"projection": lambda m: m}, "schema"),
        ({"schema_ddl": "a int"}, "schema"),
    ],
)
def test_bad_view_options_name_the_option(kwargs, option):
    with pytest.raises(OptionError, match=f"option '{option}'"):
        MessageView("o", **kwargs)


@pytest.mark.parametrize(
    "stamp, kept",
    [
        ("1700000000123", 1700000000123),
        ("0", 0),
        ("253402300799999", 253402300799999),  # 9999-12-31T23:59:59.999Z, the last a timestamp column holds
        ("253402300800000", None),  # year 10000
        ("99999999999999999999999", None),  # overflowed Arrow's int64
        ("\u00b2", None),  # passes str.isdigit, failed int()
        ("-5", None),
        ("soon", None),
        ("", None),
    ],
)
def test_a_timestamp_header_that_is_no_jms_timestamp_gives_null_and_stays_in_the_headers(stamp, kept):
    # Found by fuzzing the frames a broker may deliver: another producer can put any text in
    # "timestamp"; three of these raised (ValueError, OverflowError) instead of converting.
    raw = frames_to_batch([frame(1, b"x", timestamp=stamp)])
    assert raw.column("timestamp_ms").to_pylist() == [kept]
    assert dict(raw.column("headers").to_pylist()[0])["timestamp"] == stamp
    rows = MessageView("o").to_rows(raw).to_pylist()
    projected = MessageView("o", projection=lambda m: (m.timestamp,), schema_ddl="t timestamp").to_rows(raw).to_pylist()
    expected = None if kept is None else datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=kept)
    assert rows[0]["timestamp"] == expected
    assert projected[0]["t"] == expected  # exact: stamp / 1000 as a float was off by a microsecond up there
