"""Range splits: every value (and NULL) falls in exactly one split, whatever the bounds."""

import datetime

import sqlalchemy as sa

from jetconnect_jdbc.partitioning import RangeSplit, range_splits


def owners(splits: list[RangeSplit], value: object) -> list[int]:
    engine = sa.create_engine("sqlite://")
    column = sa.column("v")
    found = []
    with engine.connect() as conn:
        for split in splits:
            hit = conn.execute(
                sa.select(sa.literal(1))
                .select_from(sa.select(sa.literal(value).label("v")).subquery())
                .where(split.condition(sa.column("v")))
            ).first()
            if hit is not None:
                found.append(split.index)
    del column
    return found


def test_integer_ranges_cover_every_value_once_including_outside_the_bounds_and_null():
    splits = range_splits(0, 100, 4)
    assert len(splits) == 4
    for value in (-5, 0, 24, 25, 50, 99, 100, 1000, None):
        assert len(owners(splits, value)) == 1, value


def test_small_integer_range_gives_fewer_splits():
    assert len(range_splits(1, 3, 8)) == 2


def test_dates_are_cut_on_whole_days():
    splits = range_splits(datetime.date(2024, 1, 1), datetime.date(2024, 1, 3), 8)
    assert [s.lower for s in splits] == [None, datetime.date(2024, 1, 2)]


def test_timestamps_and_equal_bounds():
    start = datetime.datetime(2024, 1, 1)
    splits = range_splits(start, start + datetime.timedelta(hours=4), 4)
    assert splits[1].lower == start + datetime.timedelta(hours=1)
    assert range_splits(start, start, 4) == [RangeSplit(0, None, None, with_nulls=True)]
