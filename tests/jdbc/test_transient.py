"""Which real database errors are retried: only those that may go away by themselves."""

import sqlite3

import pytest
import sqlalchemy as sa

from jetconnect_jdbc.transient import is_transient


def raised(fn) -> BaseException:
    with pytest.raises(sa.exc.DBAPIError) as failure:
        fn()
    return failure.value


def test_a_locked_sqlite_file_is_transient_a_missing_table_or_duplicate_key_is_not(tmp_path):
    path = tmp_path / "db.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("create table t (id integer primary key)")
    holder.execute("insert into t values (1)")
    holder.execute("begin exclusive")
    engine = sa.create_engine(f"sqlite:///{path}", connect_args={"timeout": 0.05})
    try:
        with engine.connect() as conn:
            assert is_transient(raised(lambda: conn.execute(sa.text("insert into t values (2)"))))
    finally:
        holder.execute("rollback")
    with engine.connect() as conn:
        assert not is_transient(raised(lambda: conn.execute(sa.text("select * from missing"))))
        assert not is_transient(raised(lambda: conn.execute(sa.text("insert into t values (1)"))))


def test_a_refused_connection_is_transient():
    engine = sa.create_engine("postgresql+psycopg://u:p@127.0.0.1:1/db", connect_args={"connect_timeout": 2})
    assert is_transient(raised(engine.connect))


def test_errors_that_are_not_from_the_database_are_not_retried():
    assert not is_transient(ValueError("bad"))
