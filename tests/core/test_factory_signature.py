"""Options shared through ``**options: Unpack[Shared]`` are options like any other: Spark's text
is converted by the TypedDict's types, defaults come from the base class that names them, and an
unknown or bad one is refused by name."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import TypedDict, Unpack

import pytest

from jetconnect._factory_calls import call_with_options, check_arguments
from jetconnect._factory_signature import factory_options, factory_signature
from jetconnect._options import Options
from jetconnect.errors import OptionError


class Shared(TypedDict, total=False):
    chunk_rows: int
    ttl_s: float | None
    store: str | None


class Base:
    def __init__(self, name: str, *, chunk_rows: int = 100, ttl_s: float | None = None, store: str | None = None):
        self.name, self.chunk_rows, self.ttl_s, self.store = name, chunk_rows, ttl_s, store


class Connector(Base):
    def __init__(self, name: str, *, columns: Iterable[str] | None = None, **shared: Unpack[Shared]) -> None:
        super().__init__(name, **shared)
        self.columns = None if columns is None else list(columns)


def test_the_unpacked_options_are_keyword_parameters_with_the_base_defaults() -> None:
    parameters = factory_signature(Connector).parameters
    assert list(parameters) == ["name", "columns", "chunk_rows", "ttl_s", "store"]
    assert parameters["chunk_rows"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["chunk_rows"].default == 100
    assert factory_options(Connector)[1]["chunk_rows"] is int


def test_spark_text_is_converted_by_the_shared_types() -> None:
    made = call_with_options(
        Connector, Options({"name": "m", "chunk_rows": "5", "ttl_s": "1.5", "columns": "a,b"}), "sink 'x'"
    )
    assert (made.chunk_rows, made.ttl_s, made.columns) == (5, 1.5, ["a", "b"])
    untouched = call_with_options(Connector, Options({"name": "m"}), "sink 'x'")
    assert (untouched.chunk_rows, untouched.ttl_s, untouched.store) == (100, None, None)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"name": "m", "chunk_rows": "many"}, "chunk_rows"),
        ({"name": "m", "ttl_s": "-1"}, "ttl_s"),
        ({"name": "m", "chunk_rowz": "5"}, "chunk_rowz"),
    ],
)
def test_a_bad_or_unknown_shared_option_is_refused_by_name(options: dict[str, str], named: str) -> None:
    with pytest.raises(OptionError, match=named):
        call_with_options(Connector, Options(options), "sink 'x'")


def test_a_python_call_is_checked_by_the_shared_types_too() -> None:
    with pytest.raises(OptionError, match="chunk_rows"):
        check_arguments(Connector, ("m",), {"chunk_rows": True}, "sink 'x'")
    check_arguments(Connector, ("m",), {"chunk_rows": 3}, "sink 'x'")


def test_a_plain_var_keyword_stays_a_passthrough() -> None:
    def factory(name: str, **client_config: str) -> tuple[str, dict[str, str]]:
        return name, client_config

    assert factory_signature(factory) == inspect.signature(factory)
    assert call_with_options(factory, Options({"name": "n", "acks": "all"}), "x") == ("n", {"acks": "all"})
