"""Offset keys, starting positions and admission control: pure functions, no broker."""

from __future__ import annotations

import pytest

from jetconnect._admission import admit_offsets
from jetconnect.errors import OptionError
from jetconnect_kafka.offsets import (
    EARLIEST,
    parse_starting_offsets,
    partition_key,
    resolve_starting_offsets,
    split_key,
)


def test_partition_keys_round_trip_even_with_dots_and_dashes() -> None:
    assert split_key(partition_key("orders.eu-1", 12)) == ("orders.eu-1", 12)


def test_a_key_without_partition_is_refused() -> None:
    with pytest.raises(OptionError, match="'orders' is not a 'topic:partition'"):
        split_key("orders")


@pytest.mark.parametrize("text, default", [("earliest", "earliest"), ("LATEST", "latest")])
def test_named_positions(text: str, default: str) -> None:
    assert parse_starting_offsets(text).default == default


def test_json_maps_in_both_shapes_with_special_offsets() -> None:
    flat = parse_starting_offsets('{"orders:0": 17, "orders:1": -2}')
    nested = parse_starting_offsets('{"orders": {"0": 17, "1": -2}}')
    assert flat.offsets == nested.offsets == {"orders:0": 17, "orders:1": EARLIEST}


def test_timestamps_as_epoch_millis_or_iso_time() -> None:
    assert parse_starting_offsets("1700000000000").timestamp_ms == 1_700_000_000_000
    assert parse_starting_offsets("2023-11-14T22:13:20+00:00").timestamp_ms == 1_700_000_000_000


def test_bad_positions_name_the_option() -> None:
    with pytest.raises(OptionError, match="'starting_offsets'.*got 'soonish'"):
        parse_starting_offsets("soonish")
    with pytest.raises(OptionError, match="'ending_offsets' must be JSON"):
        parse_starting_offsets("{oops", "ending_offsets")
    with pytest.raises(OptionError, match="offset of 'orders:0'"):
        parse_starting_offsets('{"orders:0": -7}')


def test_admit_shares_the_budget_and_gives_leftovers_to_busy_partitions() -> None:
    start = {"t:0": 0, "t:1": 100, "t:2": 5}
    end = {"t:0": 2, "t:1": 1000, "t:2": 1000}
    admitted = admit_offsets(start, end, 100)
    assert admitted["t:0"] == 2  # short partition drained
    assert sum(admitted[k] - start[k] for k in start) == 100
    assert admitted["t:1"] - 100 == 49 and admitted["t:2"] - 5 == 49


def test_admit_never_exceeds_end_nor_moves_back() -> None:
    start = {"t:0": 10, "t:1": 10}
    end = {"t:0": 10, "t:1": 12}
    assert admit_offsets(start, end, 1000) == end
    assert admit_offsets(start, end, 1) == {"t:0": 10, "t:1": 11}


def test_admit_with_a_budget_smaller_than_the_partitions() -> None:
    start = dict.fromkeys(["t:0", "t:1", "t:2"], 0)
    end = dict.fromkeys(start, 10)
    admitted = admit_offsets(start, end, 2)
    assert sum(admitted.values()) == 2 and all(v <= 1 for v in admitted.values())


@pytest.mark.parametrize(
    "reset, starts",
    [
        (None, "earliest"),
        ("latest", "latest"),
        ("largest", "latest"),
        ("smallest", "earliest"),
        ("Beginning", "earliest"),
        ("end", "latest"),
    ],
)
def test_a_users_auto_offset_reset_chooses_where_a_new_query_starts(reset, starts):
    from jetconnect import sources

    settings = {} if reset is None else {"auto_offset_reset": reset}
    source = sources.kafka("127.0.0.1:1", topics=["t"], **settings)
    assert source.starting.default == starts
    assert resolve_starting_offsets(starts, reset) == starts  # the same answer twice is no conflict


def test_auto_offset_reset_that_disagrees_or_cannot_start_a_query_is_an_error():
    with pytest.raises(
        OptionError, match=r"'starting_offsets' \('earliest'\) and auto.offset.reset \('latest'\) disagree"
    ):
        resolve_starting_offsets("earliest", "latest")
    with pytest.raises(OptionError, match=r"auto.offset.reset='error' cannot choose where a new query starts"):
        resolve_starting_offsets(None, "error")
    assert resolve_starting_offsets('{"t:0": 5}', None) == '{"t:0": 5}'


def test_an_empty_group_id_is_an_error_naming_it():
    from jetconnect import sources

    with pytest.raises(OptionError, match="option 'group_id' is empty"):
        sources.kafka("127.0.0.1:1", topics=["t"], group_id=" ")
