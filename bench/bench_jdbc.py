"""JDBC connector benchmark: jetconnect vs Spark's own JDBC source, and the sink vs raw COPY.

    python bench/bench_jdbc.py [--rows 5000000] [--partitions 4] [--repeat 2]

Starts PostgreSQL (scripts/servers/postgresql.sh), builds the table once per row count, and
prints one table: seconds (best of --repeat) and the speed ratio alternative / jetconnect (above
1.0 means jetconnect is faster). Spark's JDBC source uses Debian's PostgreSQL driver
(``libpostgresql-jdbc-java``, /usr/share/java/postgresql.jar), installed by this script if missing.

Every case runs once untimed first (both sides alike), so no side pays the session's first-job
costs (Python workers starting, JDBC classes loading) in its timing; then the sides take turns.
The session uses jetconnect's recommended Spark settings (``RECOMMENDED_SPARK_CONF``); Spark's
JDBC source runs no Python, so they change only jetconnect's side. The writes are compared with
two raw paths from Arrow already in the driver's memory: psycopg ``COPY ... (FORMAT csv)`` fed by
Arrow's CSV writer, and ADBC's ``adbc_ingest`` (binary COPY encoded in C++), the fastest floor.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow.csv as pacsv
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
JAR = Path("/usr/share/java/postgresql.jar")
USER, PASSWORD, DATABASE = "jetconnect", "pg-Secret-7f3a", "jetconnect"  # scripts/servers/postgresql.sh
URL = f"postgresql+psycopg://{USER}:{PASSWORD}@127.0.0.1:5432/{DATABASE}"
JDBC_URL = f"jdbc:postgresql://127.0.0.1:5432/{DATABASE}"


def prepare(rows: int) -> str:
    """A source table of ``rows`` rows (built server-side, kept between runs)."""
    table = f"bench_jdbc_{rows}"
    engine = sa.create_engine(URL)
    with engine.begin() as conn:
        exists = sa.inspect(conn).has_table(table)
        if not exists or conn.execute(sa.text(f"select count(*) from {table}")).scalar() != rows:
            conn.exec_driver_sql(f"drop table if exists {table}")
            conn.exec_driver_sql(
                f"create table {table} (id bigint primary key, grp int, amount numeric(12,2), name text,"
                " ts timestamptz)"
            )
            conn.exec_driver_sql(
                f"insert into {table} select g, g %% 100, (g %% 100000) / 100.0, 'name-' || g,"
                f" timestamptz '2024-01-01' + g * interval '1 second' from generate_series(1, {rows}) g"
            )
            conn.exec_driver_sql(f"analyze {table}")
    engine.dispose()
    return table


def best(fns: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    """The best time of each of ``fns`` over ``repeat`` rounds; each round runs them in turn, so
    the JVM warming up (JIT) over the run favours none of them."""
    for fn in fns:
        fn()  # warm-up, untimed
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, taken in zip(fns, times, strict=True):
            started = time.perf_counter()
            fn()
            taken.append(time.perf_counter() - started)
    return [min(taken) for taken in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    subprocess.run(["bash", str(ROOT / "scripts" / "servers" / "postgresql.sh"), "start"], check=True)
    if not JAR.exists():
        subprocess.run(["apt-get", "install", "-y", "-qq", "libpostgresql-jdbc-java"], check=True)
    table = prepare(args.rows)

    import jetconnect
    from jetconnect import sinks, sources
    from jetconnect.testing import spark_builder

    spark = spark_builder("bench-jdbc", master="local[2]").config("spark.jars", str(JAR)).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jetconnect.register(spark)

    def spark_jdbc(partitions: int):  # type: ignore[no-untyped-def]
        return (
            spark.read.format("jdbc").option("url", JDBC_URL).option("dbtable", table)
            .option("user", USER).option("password", PASSWORD).option("driver", "org.postgresql.Driver")
            .option("partitionColumn", "id").option("lowerBound", 1).option("upperBound", args.rows)
            .option("numPartitions", partitions).option("fetchsize", 20_000).load()
        )

    def jetconnect_read() -> None:
        df = sources.jdbc(URL, table=table, partition_column="id", lower_bound=1, upper_bound=args.rows,
                          num_partitions=args.partitions).read(spark)
        df.write.format("noop").mode("overwrite").save()

    def spark_read() -> None:
        spark_jdbc(args.partitions).write.format("noop").mode("overwrite").save()

    def jetconnect_read_row_fn() -> None:  # Jet's createOutputFn: a Python call per row
        df = sources.jdbc(URL, table=table, partition_column="id", lower_bound=1, upper_bound=args.rows,
                          num_partitions=args.partitions, row_fn=lambda row: (row.id,), row_schema="id long").read(spark)
        df.write.format("noop").mode("overwrite").save()

    read_ours, read_spark, read_row_fn = best([jetconnect_read, spark_read, jetconnect_read_row_fn], args.repeat)

    # The sink writes the same rows (cached, in --partitions partitions); raw COPY streams them from
    # Arrow already in the driver's memory: the floor for any Spark-to-PostgreSQL path.
    data = spark_jdbc(args.partitions).cache()
    data.count()
    arrow = data.toArrow()
    engine = sa.create_engine(URL)

    def fresh_target(name: str) -> str:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"drop table if exists {name}")
            conn.exec_driver_sql(f"create table {name} (like {table})")
        return name

    def jetconnect_write() -> None:
        sinks.jdbc(URL, table=fresh_target("bench_jdbc_sink")).write(data)

    def raw_copy() -> None:
        target = fresh_target("bench_jdbc_copy")
        with engine.begin() as conn:
            cursor = conn.connection.driver_connection.cursor()
            with cursor.copy(f"COPY {target} FROM STDIN (FORMAT csv)") as copy:
                for batch in arrow.to_batches(max_chunksize=100_000):
                    buffer = io.BytesIO()
                    pacsv.write_csv(batch, buffer, pacsv.WriteOptions(include_header=False))
                    copy.write(buffer.getbuffer())

    def raw_adbc() -> None:
        import adbc_driver_postgresql.dbapi

        target = fresh_target("bench_jdbc_adbc")
        libpq_url = sa.make_url(URL).set(drivername="postgresql").render_as_string(hide_password=False)
        with adbc_driver_postgresql.dbapi.connect(libpq_url) as conn:
            with conn.cursor() as cursor:
                cursor.adbc_ingest(target, arrow, mode="append")
            conn.commit()

    def jetconnect_write_bind_fn() -> None:  # Jet's bindFn: a statement, its parameters made per row
        target = fresh_target("bench_jdbc_bind")
        sinks.jdbc(URL, statement=f"insert into {target} (id) values (:id)",
                   bind_fn=lambda row: {"id": row.id}).write(data.select("id"))

    write_ours, write_raw, write_adbc, write_bind = best(
        [jetconnect_write, raw_copy, raw_adbc, jetconnect_write_bind_fn], args.repeat)
    with engine.connect() as conn:
        written = conn.execute(sa.text("select count(*) from bench_jdbc_sink")).scalar()
    assert written == args.rows, f"sink wrote {written} rows, expected {args.rows}"

    print()
    print(f"JDBC bench: {args.rows:,} rows x 5 columns, {args.partitions} partitions, local[2], "
          f"PostgreSQL 127.0.0.1, best of {args.repeat}, {os.cpu_count()} cores (python {sys.version.split()[0]})")
    rows = [
        ("read: jdbc source vs Spark JDBC (noop write)", read_ours, read_spark),
        ("write: jdbc sink vs raw psycopg COPY (csv)", write_ours, write_raw),
        ("write: jdbc sink vs raw ADBC COPY (binary)", write_ours, write_adbc),
        ("read: row_fn vs the columnar read", read_row_fn, read_ours),
        ("write: statement + bind_fn (1 column) vs COPY", write_bind, write_ours),
    ]
    print(f"{'case':<46}{'jetconnect s':>14}{'other s':>10}{'speed ratio':>13}")
    for case, ours, other in rows:
        print(f"{case:<46}{ours:>14.2f}{other:>10.2f}{other / ours:>12.2f}x")
    spark.stop()


if __name__ == "__main__":
    main()
