"""The JDBC connector's user functions, carelessly written, through Spark on SQLite (issue #32).

A ``bind_fn`` that raises names the row (as plugins/jdbc/README.md says), one that leaves out a
parameter names the row and the parameter without quoting any row's data (SQLAlchemy's own error
prints the whole block), and a ``connection_fn`` that returns None names the option.
"""

from __future__ import annotations

import traceback

import pytest
import sqlalchemy as sa

from jetconnect import sinks, sources

ROW_DATA = "row-data-canary"  # in every row's name: must never show in an error


def everything_shown(error: BaseException) -> str:
    shown, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        shown += [str(error), repr(error), "".join(traceback.format_exception(error))]
        error = error.__cause__ or error.__context__
    return "\n".join(shown)


@pytest.fixture()
def sqlite_url(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'careless.db'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("create table people (id integer, name text)"))
    engine.dispose()
    return url


def test_bind_fn_that_raises_or_leaves_out_a_parameter_names_the_row_without_its_data(spark, sqlite_url):
    df = spark.createDataFrame([(i, f"{ROW_DATA}-{i}") for i in range(20)], "id long, name string").coalesce(1)
    statement = "insert into people (id, name) values (:id, :name)"

    def raises(row):
        if row.id == 7:
            raise ValueError("no name for this one")
        return {"id": row.id, "name": row.name}

    with pytest.raises(Exception) as failed:
        sinks.jdbc(sqlite_url, statement=statement, bind_fn=raises).write(df)
    text = everything_shown(failed.value)
    assert "bind_fn raised ValueError for row 7 of this partition: no name for this one" in text

    with pytest.raises(Exception) as failed:
        sinks.jdbc(sqlite_url, statement=statement, bind_fn=lambda row: {"id": row.id}).write(df)
    text = everything_shown(failed.value)
    assert "bind_fn returned no :name for row 0 of this partition" in text
    assert ROW_DATA not in text

    engine = sa.create_engine(sqlite_url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("select count(*) from people")).scalar() == 0  # nothing half-written
    engine.dispose()


def test_a_connection_fn_that_returns_none_names_the_option(spark, sqlite_url):
    source = sources.jdbc(sqlite_url, table="people", connection_fn=lambda: None, schema="id long, name string")
    with pytest.raises(Exception, match="option 'connection_fn' returned NoneType, not a DB-API connection"):
        source.read(spark).collect()
