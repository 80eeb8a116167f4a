"""The libpq connection string DuckDB's PostgreSQL scanner is given, and the batch sizing."""

import pyarrow as pa

from jetconnect_jdbc.duckdb_pool import libpq_dsn
from jetconnect_jdbc.pg_copy import BATCH_BYTES, batch_rows


def test_the_dsn_quotes_every_value_and_keeps_the_url_options():
    dsn = libpq_dsn("postgresql+psycopg://ann:it's%20a\\pw@db.example:6543/sales?sslmode=require")
    assert dsn == (
        "host='db.example' port='6543' user='ann' password='it\\'s a\\\\pw' dbname='sales' sslmode='require'"
        " options='-c TimeZone=UTC -c DateStyle=ISO,YMD -c standard_conforming_strings=on'"
    )


def test_the_dsn_leaves_out_what_the_url_does_not_say():
    assert (
        libpq_dsn("postgresql://localhost/db")
        == "host='localhost' dbname='db' options='-c TimeZone=UTC -c DateStyle=ISO,YMD -c standard_conforming_strings=on'"
    )


def test_a_batch_holds_about_batch_bytes_whatever_the_width():
    narrow = pa.schema([("id", pa.int64())])
    wide = pa.schema([(f"c{i}", pa.string()) for i in range(200)])
    assert batch_rows(narrow) == BATCH_BYTES // 8
    assert batch_rows(wide) == BATCH_BYTES // (200 * 32)
    assert batch_rows(pa.schema([(f"c{i}", pa.string()) for i in range(100_000)])) == 1024


def test_the_urls_own_server_options_are_kept_before_ours():
    dsn = libpq_dsn("postgresql://h/db?options=-c%20search_path%3Dsales&options=-c%20work_mem%3D64MB")
    assert dsn.endswith(
        "options='-c work_mem=64MB -c TimeZone=UTC -c DateStyle=ISO,YMD -c standard_conforming_strings=on'"
    )
