"""Jet's mapping function (``mapper``) of ``sources.files``, ``sources.file_watcher`` and
``sources.avro``, without Spark: the rows it makes, the Nones it drops, and a careless one named
by file and line or record."""

from __future__ import annotations

import datetime as dt
import json

import fastavro
import pytest

from jetconnect import sources
from jetconnect._factory_calls import call_with_options
from jetconnect._options import Options
from jetconnect._registry import get_registry
from jetconnect.errors import OptionError, SchemaError, SourceError


def read_all(source) -> list[tuple]:
    """Every row of a batch source, read split by split as Spark's tasks would."""
    return [
        tuple(r.values()) for split in source.splits() for batch in source.read_split(split) for r in batch.to_pylist()
    ]


def csv_lines(tmp_path, name="orders.csv", count=20):
    (tmp_path / name).write_text("id,amount\n" + "".join(f"{i},{i * 1.5}\n" for i in range(1, count)))
    return tmp_path


def parse(file, line):
    if line.startswith("id,"):
        return None  # Jet's rule: a mapper returning None drops the line
    id_, amount = line.split(",")
    return (file, int(id_), float(amount))


def test_files_mapper_makes_the_rows_of_its_schema_and_drops_nones(tmp_path):
    source = sources.files(
        directory=str(csv_lines(tmp_path)), mapper=parse, schema="file string, id bigint, amount double"
    )
    assert source.schema().simpleString() == "struct<file:string,id:bigint,amount:double>"
    assert sorted(read_all(source)) == [("orders.csv", i, i * 1.5) for i in range(1, 20)]
    # a mapper keeps jetconnect's reader: Spark's text reader cannot run it
    assert source.batch_reader_choice().reason == "a mapper runs in Python"
    forced = sources.files(
        directory=str(tmp_path), mapper=parse, schema="f string, i bigint, a double", batch_reader="spark"
    )
    with pytest.raises(OptionError, match=r"option 'batch_reader' is 'spark' but a mapper runs in Python"):
        forced.batch_reader_choice()


def test_the_default_schema_is_one_string_and_a_bare_value_is_its_row(tmp_path):
    source = sources.files(directory=str(csv_lines(tmp_path, count=3)), mapper=lambda file, line: line.upper())
    assert sorted(read_all(source)) == [("1,1.5",), ("2,3.0",), ("ID,AMOUNT",)]


@pytest.mark.parametrize("split_bytes", [1 << 20, 7])  # one split, or a split every 7 bytes
def test_a_mapper_that_raises_names_the_file_and_its_line_number(tmp_path, split_bytes):
    csv_lines(tmp_path)

    def strict(file, line):
        if line == "13,19.5":
            raise ValueError("no thirteen")
        return parse(file, line)

    source = sources.files(
        directory=str(tmp_path),
        mapper=strict,
        schema="file string, id bigint, amount double",
        max_split_bytes=split_bytes,
    )
    path = tmp_path / "orders.csv"
    # line 14: the header is line 1; counted in the file, wherever the split holding it starts
    with pytest.raises(
        SourceError, match=rf"files source: the mapper raised ValueError for line 14 of '{path}': no thirteen"
    ):
        read_all(source)


@pytest.mark.parametrize(
    ("row", "error"),
    [
        (("x", "not a number", 1.0), r"column 'id': .*str"),
        (("x", 1), r"2 values for 3 columns|3 columns"),
        ({"file": "x", "idd": 1, "amount": 1.0}, r"idd"),
    ],
)
def test_a_row_that_does_not_fit_the_schema_names_the_file_line_and_column(tmp_path, row, error):
    csv_lines(tmp_path)
    source = sources.files(
        directory=str(tmp_path),
        mapper=lambda file, line: row if line == "5,7.5" else parse(file, line),
        schema="file string, id bigint, amount double",
        max_split_bytes=25,
    )
    path = tmp_path / "orders.csv"
    with pytest.raises(
        SchemaError, match=rf"files source: the mapper's row for line 6 of '{path}', .*{error}"
    ) as caught:
        read_all(source)
    assert "item #" not in str(caught.value)  # the item is the line, not an index in a list


def test_mapper_options_are_checked_where_the_source_is_built(tmp_path):
    with pytest.raises(
        OptionError, match=r"option 'mapper' must be a Python function of \(file, line\) \(pass it to sources.files"
    ):
        sources.files(directory=str(tmp_path), mapper="lambda f, l: l")
    with pytest.raises(OptionError, match=r"option 'schema' describes what 'mapper' returns; give both or neither"):
        sources.files(directory=str(tmp_path), schema="n int")
    with pytest.raises(OptionError, match=r"give option 'include_file_name' or 'mapper', not both"):
        sources.files(directory=str(tmp_path), mapper=parse, include_file_name=True)
    with pytest.raises(
        OptionError, match=r"file_watcher: option 'mapper' must be a Python function .*sources.file_watcher"
    ):
        sources.file_watcher(directory=str(tmp_path), mapper=3)
    with pytest.raises(
        OptionError, match=r"avro source: option 'mapper' must be a Python function of \(file, record\)"
    ):
        sources.avro(directory=str(tmp_path), mapper="r['id']")
    with pytest.raises(OptionError, match=r"avro source: option 'mapped_schema' describes what 'mapper' returns"):
        sources.avro(directory=str(tmp_path), mapped_schema="id bigint")


@pytest.mark.parametrize("name", ["files", "file_watcher", "avro"])
def test_a_mapper_from_spark_string_options_is_an_option_error(tmp_path, name):
    # what spark.read.format(f"jetconnect.{name}").option("mapper", ...) hands the registry
    factory = get_registry().sources[name].factory
    options = Options({"directory": str(tmp_path), "mapper": "lambda f, l: l"}, f"source '{name}'")
    with pytest.raises(
        OptionError, match=r"option 'mapper' must be a Python function .*a string option cannot carry one\), got str"
    ):
        call_with_options(factory, options, f"source '{name}'")


def test_file_watcher_maps_appended_lines_and_replays_them_the_same(tmp_path):
    (tmp_path / "a.log").write_text("old\n")
    watcher = sources.file_watcher(
        directory=str(tmp_path),
        mapper=lambda file, line: None if line == "skip" else (file, len(line)),
        schema="f string, n int",
    )
    start = watcher.initial_offset()
    with open(tmp_path / "a.log", "a") as out:
        out.write("one\nskip\nthree\nhalf")
    end = watcher.latest_offset(start, None)

    def rows():
        return [
            tuple(r.values())
            for rng in watcher.ranges(start, end)
            for b in watcher.read_range(rng)
            for r in b.to_pylist()
        ]

    assert rows() == [("a.log", 3), ("a.log", 5)] == rows()  # the same range twice: the same rows


def test_a_file_watcher_mapper_that_raises_names_the_line(tmp_path):
    (tmp_path / "a.log").write_text("1\n2\nboom\n")
    watcher = sources.file_watcher(
        directory=str(tmp_path), read_existing=True, mapper=lambda f, line: (int(line),), schema="n int"
    )
    end = watcher.latest_offset(watcher.initial_offset(), None)
    with pytest.raises(SourceError, match=r"file_watcher: the mapper raised ValueError for line 3 of '.*a.log'"):
        [b for rng in watcher.ranges({}, end) for b in watcher.read_range(rng)]


AVRO = {
    "type": "record",
    "name": "Event",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "amount", "type": "double"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def write_avro(path, count: int, block: int = 10) -> None:
    records = [{"id": i, "amount": i * 10.0, "at": START + dt.timedelta(seconds=i)} for i in range(count)]
    with open(path, "wb") as out:
        fastavro.writer(out, AVRO, records, sync_interval=block * 30)


def test_avro_mapper_gets_the_file_name_and_each_record_as_fastavro_decodes_it(tmp_path):
    (tmp_path / "day").mkdir()
    write_avro(tmp_path / "day" / "events.avro", 50)
    seen = []

    def big(file, record):
        seen.append(record)
        return (file, record["id"], record["at"]) if record["amount"] > 400 else None

    source = sources.avro(
        directory=str(tmp_path), recursive=True, mapper=big, mapped_schema="file string, id bigint, at timestamp"
    )
    rows = sorted(read_all(source))
    assert [r[:2] for r in rows] == [("day/events.avro", i) for i in range(41, 50)]
    assert rows[0][2] == START + dt.timedelta(seconds=41)
    assert isinstance(seen[0]["at"], dt.datetime) and seen[0]["at"].tzinfo is not None  # a logical type, decoded
    assert source.batch_reader_choice(None).reason == "a mapper runs in Python"
    assert sorted(read_all(sources.avro(directory=str(tmp_path), recursive=True, mapper=lambda f, r: str(r["id"]))))[
        :2
    ] == [("0",), ("1",)]


def test_an_avro_mapper_that_raises_or_misfits_names_the_record_and_its_block(tmp_path):
    write_avro(tmp_path / "e.avro", 50)
    blocks = []
    with open(tmp_path / "e.avro", "rb") as f:
        for block in fastavro.block_reader(f):
            blocks.append([r["id"] for r in block])
    assert len(blocks) > 2, blocks  # record 33 is not in the first block
    index = next(i for i, ids in enumerate(blocks) if 33 in ids)
    nth = blocks[index].index(33) + 1

    def strict(file, record):
        if record["id"] == 33:
            raise KeyError("no 33")
        return (record["id"],)

    raising = sources.avro(directory=str(tmp_path), mapper=strict, mapped_schema="id bigint")
    pattern = (
        rf"avro source: the mapper raised KeyError for record {nth} of the block at byte \d+ of '.*e.avro': 'no 33'"
    )
    with pytest.raises(SourceError, match=pattern):
        read_all(raising)
    misfit = sources.avro(
        directory=str(tmp_path),
        mapper=lambda f, r: (str(r["id"]) if r["id"] == 33 else r["id"],),
        mapped_schema="id bigint",
    )
    with pytest.raises(
        SchemaError,
        match=rf"avro source: the mapper's row for record {nth} of the block at byte \d+ of '.*e.avro', \('33',\)",
    ):
        read_all(misfit)


def test_an_avro_mapper_gets_records_resolved_to_the_reader_schema_with_logical_types_decoded(tmp_path):
    import decimal
    import uuid

    writer = {
        "type": "record",
        "name": "Pay",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
            {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        ],
    }
    ref = uuid.UUID("12345678-1234-5678-1234-567812345678")
    with open(tmp_path / "p.avro", "wb") as out:
        fastavro.writer(out, writer, [{"id": 1, "price": decimal.Decimal("9.99"), "ref": ref}])
    # a reader schema that drops `id` and adds `note` with its default
    reader = {
        "type": "record",
        "name": "Pay",
        "fields": [writer["fields"][1], writer["fields"][2], {"name": "note", "type": "string", "default": "none"}],
    }
    seen = []
    source = sources.avro(
        directory=str(tmp_path), schema=json.dumps(reader), mapper=lambda f, r: seen.append(r) or (str(r["price"]),)
    )
    assert read_all(source) == [("9.99",)]
    assert seen == [{"price": decimal.Decimal("9.99"), "ref": ref, "note": "none"}]


def test_a_whole_files_mapper_keeps_the_same_rule(tmp_path):
    # the HDFS source's format="bytes" mapper: one rule with the lines' and the records'
    from jetconnect.files_family import LocalFileSystem, WholeFilesSource

    (tmp_path / "a.bin").write_bytes(b"\x00\x01")
    (tmp_path / "b.bin").write_bytes(b"")

    def whole(mapper, schema="n int"):
        return WholeFilesSource(LocalFileSystem(), str(tmp_path), mapper=mapper, mapped_schema=schema, owner="hdfs")

    assert read_all(whole(lambda path, content: (len(content),) if content else None)) == [(2,)]
    with pytest.raises(SourceError, match=r"hdfs: the mapper raised ZeroDivisionError for the content of '.*b.bin'"):
        read_all(whole(lambda path, content: (1 // len(content),)))
    with pytest.raises(
        SchemaError, match=r"hdfs: the mapper's row for the content of '.*a.bin', \(b'\\x00\\x01',\), does not match"
    ):
        read_all(whole(lambda path, content: (content,)))
