"""JDBC connector benchmark: jetconnect vs Spark's own JDBC source, and the sink vs raw COPY.

    python bench/bench_jdbc.py [--rows 5000000] [--partitions 4] [--repeat 2]

Starts PostgreSQL (scripts/servers/postgresql.sh), builds the table once per row count, and
prints one table: seconds (best of --repeat) and the speed ratio alternative / jetconnect (above
1.0 means jetconnect is faster), with the peak memory of the driver and of the Python workers;
the rows also go to ``bench/results/jdbc.json``. Spark's JDBC source uses Debian's PostgreSQL driver
(``libpostgresql-jdbc-java``, /usr/share/java/postgresql.jar), installed by this script if missing.

Every case runs once untimed first (both sides alike), so no side pays the session's first-job
costs (Python workers starting, JDBC classes loading) in its timing; then the sides take turns.
The session uses jetconnect's recommended Spark settings (``RECOMMENDED_SPARK_CONF``); Spark's
JDBC source runs no Python, so they change only jetconnect's side. The writes are compared with
two raw paths from Arrow already in the driver's memory: psycopg ``COPY ... (FORMAT csv)`` fed by
Arrow's CSV writer, and ADBC's ``adbc_ingest`` (binary COPY encoded in C++), the fastest floor.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pyarrow.csv as pacsv
import sqlalchemy as sa
from _harness import Bench, Row, bench_parser, bench_spark, best_of_turns

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


def main() -> None:
    parser = bench_parser(__doc__, repeat=2)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()

    subprocess.run(["bash", str(ROOT / "scripts" / "servers" / "postgresql.sh"), "start"], check=True)
    if not JAR.exists():
        subprocess.run(["apt-get", "install", "-y", "-qq", "libpostgresql-jdbc-java"], check=True)
    table = prepare(args.rows)

    from jetconnect import sinks, sources

    spark = bench_spark("bench-jdbc", master="local[2]", conf={"spark.jars": str(JAR)})
    title = (
        f"{args.rows:,} rows x 5 columns, {args.partitions} partitions, local[2], PostgreSQL 127.0.0.1, "
        "the sides taking turns"
    )
    with Bench("jdbc", args, results=args.results, title=title) as bench:

        def spark_jdbc(partitions: int):  # type: ignore[no-untyped-def]
            return (
                spark.read.format("jdbc")
                .option("url", JDBC_URL)
                .option("dbtable", table)
                .option("user", USER)
                .option("password", PASSWORD)
                .option("driver", "org.postgresql.Driver")
                .option("partitionColumn", "id")
                .option("lowerBound", 1)
                .option("upperBound", args.rows)
                .option("numPartitions", partitions)
                .option("fetchsize", 20_000)
                .load()
            )

        def jetconnect_read() -> None:
            df = sources.jdbc(
                URL,
                table=table,
                partition_column="id",
                lower_bound=1,
                upper_bound=args.rows,
                num_partitions=args.partitions,
            ).read(spark)
            df.write.format("noop").mode("overwrite").save()

        def spark_read() -> None:
            spark_jdbc(args.partitions).write.format("noop").mode("overwrite").save()

        def jetconnect_read_row_fn() -> None:  # Jet's createOutputFn: a Python call per row
            df = sources.jdbc(
                URL,
                table=table,
                partition_column="id",
                lower_bound=1,
                upper_bound=args.rows,
                num_partitions=args.partitions,
                row_fn=lambda row: (row.id,),
                row_schema="id long",
            ).read(spark)
            df.write.format("noop").mode("overwrite").save()

        read_cases = ("read: jdbc source vs Spark JDBC", "read: row_fn vs the columnar read")
        with bench.measure(*read_cases):
            read_ours, read_spark, read_row_fn = best_of_turns(
                [jetconnect_read, spark_read, jetconnect_read_row_fn], args.repeat, args.warmup
            )

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
            sinks.jdbc(
                URL, statement=f"insert into {target} (id) values (:id)", bind_fn=lambda row: {"id": row.id}
            ).write(data.select("id"))

        write_cases = (
            "write: jdbc sink vs psycopg COPY (csv)",
            "write: jdbc sink vs ADBC COPY (binary)",
            "write: bind_fn (1 column) vs the sink's COPY",
        )
        with bench.measure(*write_cases):
            write_ours, write_raw, write_adbc, write_bind = best_of_turns(
                [jetconnect_write, raw_copy, raw_adbc, jetconnect_write_bind_fn], args.repeat, args.warmup
            )
        with engine.connect() as conn:
            written = conn.execute(sa.text("select count(*) from bench_jdbc_sink")).scalar()
        assert written == args.rows, f"sink wrote {written} rows, expected {args.rows}"

        # targets from the README: the source at least as fast as Spark's, the sink >= 0.8x raw COPY
        bench.add(Row(read_cases[0], read_ours, read_spark, target=1.0, note="both written to Spark's noop sink"))
        bench.add(Row(write_cases[0], write_ours, write_raw, target=0.8, note="raw: CSV from Arrow in the driver"))
        bench.add(Row(write_cases[1], write_ours, write_adbc, note="raw: adbc_ingest from Arrow, the floor"))
        bench.add(Row(read_cases[1], read_row_fn, read_ours, note="Jet's createOutputFn: a Python call per row"))
        bench.add(Row(write_cases[2], write_bind, write_ours, note="Jet's bindFn: statement parameters per row"))
    spark.stop()


if __name__ == "__main__":
    main()
