"""Where a builder stream keeps its state when no ``wal_location`` is given (#33)."""

from __future__ import annotations

import pytest

from jetconnect._locations import CHECKPOINT_CONF, CHECKPOINT_ROOT, default_wal_location
from jetconnect._options import Options
from jetconnect.errors import OptionError
from jetconnect.testing import counter_stream


@pytest.mark.parametrize(
    ("root", "source", "expected"),
    [
        ("/data/checkpoints", "orders", "/data/checkpoints/jetconnect-wal/orders"),
        ("/data/checkpoints/", "orders", "/data/checkpoints/jetconnect-wal/orders"),
        ("file:/data/checkpoints", "orders", "/data/checkpoints/jetconnect-wal/orders"),
        ("webhdfs://nn:9870/ck", "a b/../c", "webhdfs://nn:9870/ck/jetconnect-wal/a_b_.._c"),
    ],
)
def test_the_default_is_a_folder_named_after_the_source_under_the_checkpoint_root(root, source, expected):
    assert default_wal_location({CHECKPOINT_ROOT: root}, source) == expected


def test_no_root_no_default():
    assert default_wal_location({}, "orders") is None


def test_a_stream_takes_the_default_only_when_no_wal_location_is_given(tmp_path):
    root = {CHECKPOINT_ROOT: str(tmp_path)}
    defaulted = counter_stream(10).with_options(root)
    assert defaulted.options["wal_location"] == f"{tmp_path}/jetconnect-wal/counter"
    given = counter_stream(10).with_options({**root, "wal_location": str(tmp_path / "mine")})
    assert given.options["wal_location"] == str(tmp_path / "mine")


def test_without_either_the_error_names_both_ways_out():
    with pytest.raises(OptionError, match="option 'wal_location' is required") as error:
        counter_stream(10).with_options(Options({})).initial_offset()
    assert CHECKPOINT_CONF in str(error.value)
