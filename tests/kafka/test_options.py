"""Option mistakes are caught when the source or sink is made, naming the option; no broker needed."""

from __future__ import annotations

import pickle

import pytest

from jetconnect._factory_calls import call_with_options
from jetconnect._options import Options
from jetconnect.errors import OptionError
from jetconnect_kafka import kafka_sink, kafka_source


def test_exactly_one_of_topics_and_pattern() -> None:
    with pytest.raises(OptionError, match="exactly one of options 'topics'"):
        kafka_source("h:9092")
    with pytest.raises(OptionError, match="exactly one of options 'topics'"):
        kafka_source("h:9092", topics=["a"], pattern="a.*")


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("on_offset_out_of_range", "rewind", "'on_offset_out_of_range' must be one of fail, earliest, latest"),
        ("key_format", "json", "'key_format' must be one of bytes, string, short"),
        ("value_format", "avro", "needs option 'avro_schema'"),
        ("pattern", "orders[", "'pattern' is not a regular expression"),
        ("starting_offsets", "yesterday", "'starting_offsets' must be earliest, latest"),
    ],
)
def test_bad_source_options_name_the_option(option: str, value: str, message: str) -> None:
    kwargs = {"topics": ["t"], option: value} if option != "pattern" else {option: value}
    with pytest.raises(OptionError, match=message):
        kafka_source("h:9092", **kwargs)


def test_string_options_from_spark_become_typed_arguments_and_client_settings() -> None:
    options = Options(
        {
            "bootstrap_servers": "h:9092",
            "topics": "a, b",
            "max_records_per_batch": "500",
            "kafka.fetch.max.bytes": "1048576",
        }
    )
    source = call_with_options(kafka_source, options, owner="source 'kafka'")
    assert source.topics == ["a", "b"] and source.max_records_per_batch == 500
    assert source.config["fetch.max.bytes"] == "1048576"


def test_a_source_pickles_without_its_driver_client() -> None:
    source = kafka_source("h:9092", topics=["t"], value_format="string")
    assert pickle.loads(pickle.dumps(source)).schema() == source.schema()


def test_sink_delivery_mode_is_checked() -> None:
    with pytest.raises(OptionError, match="'delivery' must be one of exactly-once, at-least-once"):
        kafka_sink("h:9092", topic="t", delivery="maybe")


def test_jets_functions_are_python_functions_and_records_are_checked():
    from jetconnect import sinks, sources
    from jetconnect_kafka.errors import KafkaSinkError
    from jetconnect_kafka.records import ProducerRecord, as_producer_record, wire_bytes

    with pytest.raises(OptionError, match="option 'projection' must be a Python function"):
        sources.kafka("127.0.0.1:1", topics=["t"], projection="lambda r: r")
    with pytest.raises(OptionError, match="option 'schema' describes what 'projection' returns"):
        sources.kafka("127.0.0.1:1", topics=["t"], schema="n long")
    projected = sources.kafka("127.0.0.1:1", topics=["t"], projection=lambda r: (r.offset,), schema="n long")
    assert projected.schema().simpleString() == "struct<n:bigint>"
    with pytest.raises(OptionError, match="option 'record_fn' must be a Python function"):
        sinks.kafka("127.0.0.1:1", topic="t", record_fn=3)
    assert as_producer_record(("k", "v"), "row 0") == ProducerRecord(key="k", value="v")
    assert as_producer_record({"value": b"v", "topic": "x"}, "row 0").topic == "x"
    with pytest.raises(KafkaSinkError, match=r"keys \['valu'\] for row 7; it needs 'value'"):
        as_producer_record({"valu": 1}, "row 7")
    with pytest.raises(KafkaSinkError, match="returned int for row 2"):
        as_producer_record(5, "row 2")
    with pytest.raises(KafkaSinkError, match="a value of type dict for row 3; give bytes or str"):
        wire_bytes({"a": 1}, "value", "row 3")
    assert wire_bytes("é", "value", "row 0") == "é".encode()
