"""A Spark application that uses every secured server of the suite the way a user's pipeline
would (PostgreSQL over TLS, ActiveMQ's STOMP over TLS, HDFS over HTTPS with Kerberos from a
keytab), and fails against each the way a careless one would: run by
integration/test_secured_secrets.py, which then searches every file it wrote for the passwords
and private keys it was given.

What a client needs of each server comes in the environment (``JETCONNECT_SECURED``, JSON), never
in a file or on the command line: the files of this run must hold no secret of their own making.
It logs at DEBUG (Python) and INFO (Spark) to stderr, and every failure with its whole traceback.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote, quote_plus

logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
logging.getLogger("py4j").setLevel(logging.INFO)  # every py4j command at DEBUG: noise, not secrets

import jetconnect  # noqa: E402 - logging first, so the imports' own records are kept
from jetconnect import sinks, sources  # noqa: E402
from jetconnect.testing import spark_builder, wait_until  # noqa: E402

log = logging.getLogger("secured_app")
servers = json.loads(os.environ["JETCONNECT_SECURED"])
work = Path(sys.argv[1])
events = work / "events"
events.mkdir(parents=True, exist_ok=True)
spark = (
    spark_builder("secured-secrets")
    .config("spark.eventLog.enabled", "true")
    .config("spark.eventLog.dir", str(events))
    .config("spark.eventLog.compress", "false")  # Spark 4 compresses it (zstd): the search reads bytes
    .config("spark.local.dir", str(work / "spark-local"))
    .config("spark.sql.warehouse.dir", str(work / "warehouse"))
    .getOrCreate()
)
spark.sparkContext.setLogLevel("INFO")
jetconnect.register(spark)
tag = uuid.uuid4().hex[:8]


def expect_failure(what: str, fail) -> None:
    try:
        fail()
    except Exception:
        log.exception("%s failed, as it should", what)  # the whole chained traceback, into the log
    else:
        raise AssertionError(f"{what} did not fail")


def stream_until(query, done, what: str) -> None:
    try:
        wait_until(lambda: query.exception() is not None or done(), 240, what)
        if query.exception() is not None:
            raise AssertionError(f"{what}: {query.exception()}")
    finally:
        query.stop()


# --- PostgreSQL: TLS only, scram-sha-256 -----------------------------------------------------------
pg = servers["postgresql"]


def pg_url(password: str) -> str:
    return (
        f"postgresql+psycopg://{pg['user']}:{quote_plus(password)}@{pg['host']}:{pg['port']}/{pg['database']}"
        f"?sslmode=verify-full&sslrootcert={quote(pg['ca'], safe='/')}"
    )


url = pg_url(pg["password"])
table = f"secrets_{tag}"
sinks.jdbc(url, table=table).write(spark.range(0, 200).selectExpr("id", "concat('r', id) as name"))
print("repr", repr(sources.jdbc(url, table=table)), repr(sinks.jdbc(url, table=table)), flush=True)
for use_copy in (True, False):
    df = sources.jdbc(url, table=table, use_copy=use_copy).read(spark)
    assert df.count() == 200
    df.explain(True)
copied = f"{table}_stream"
stream = sources.jdbc(url, table=table, offset_column="id").read_stream(spark, max_records_per_batch=50)
query = sinks.jdbc(url, table=copied).write_stream(
    stream, checkpoint_location=str(work / "checkpoints" / "jdbc"), trigger={"processingTime": "300 milliseconds"}
)


def copied_rows() -> int:
    import sqlalchemy as sa

    time.sleep(0.5)
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(f"select count(*) from {copied}")).scalar_one()
    except sa.exc.ProgrammingError:  # the sink creates the table with its first micro-batch
        return 0
    finally:
        engine.dispose()


stream_until(query, lambda: copied_rows() >= 200, "200 rows streamed")
assert copied_rows() == 200
print("jdbc ok", flush=True)
wrong = pg_url("not-" + pg["password"])
expect_failure(
    "jdbc read, wrong password",
    lambda: sources.jdbc(wrong, table=table, schema="id long, name string").read(spark).collect(),
)
expect_failure("jdbc write, wrong password", lambda: sinks.jdbc(wrong, table=table + "_x").write(df))

# --- ActiveMQ: STOMP over TLS, login required ------------------------------------------------------
mq = servers["activemq"]
mq_options = {
    "host": mq["host"],
    "port": mq["port"],
    "user": mq["user"],
    "password": mq["password"],
    "tls_ca_file": mq["ca"],
}
queue = f"secrets-{tag}"
messages = spark.createDataFrame([(f"m{i}",) for i in range(100)], "body string").repartition(2)
sinks.jms_queue(queue, **mq_options).write(messages)
source = sources.jms_queue(queue, wal_location=str(work / "wal" / "jms"), **mq_options)
print("repr", repr(source), repr(source.settings), repr(sinks.jms_queue(queue, **mq_options)), flush=True)
out = work / "jms-out"
query = (
    source.read_stream(spark)
    .writeStream.format("parquet")
    .option("path", str(out))
    .option("checkpointLocation", str(work / "checkpoints" / "jms"))
    .trigger(processingTime="300 milliseconds")
    .start()
)


def jms_rows() -> int:
    time.sleep(0.5)
    try:
        return spark.read.parquet(str(out)).count()
    except Exception:  # noqa: BLE001 - no file yet
        return 0


stream_until(query, lambda: jms_rows() >= 100, "100 messages streamed")
print("jms ok", flush=True)
wrong_mq = {**mq_options, "password": "not-" + mq["password"]}
expect_failure("jms write, wrong password", lambda: sinks.jms_queue(queue, **wrong_mq).write(messages))

# --- HDFS: WebHDFS over HTTPS, Kerberos ---------------------------------------------------------------
fs = servers["hdfs"]
hdfs_options = {
    "url": fs["url"],
    "tls_ca_file": fs["ca"],
    "kerberos": True,
    "kerberos_principal": fs["principal"],
    "kerberos_keytab": fs["keytab"],
    "kerberos_config": fs["krb5_conf"],
}
folder = f"/jetconnect-secrets/{tag}"
sinks.hdfs(directory=f"{folder}/in", **hdfs_options).write(messages.selectExpr("body as value"))
stream = sources.hdfs(path=f"{folder}/in", **hdfs_options).read_stream(spark)
query = sinks.hdfs(directory=f"{folder}/out", **hdfs_options).write_stream(
    stream, checkpoint_location=str(work / "checkpoints" / "hdfs"), trigger={"processingTime": "500 milliseconds"}
)


def hdfs_lines() -> int:
    time.sleep(0.5)
    try:
        return sources.hdfs(path=f"{folder}/out", **hdfs_options).read(spark).count()
    except Exception:  # noqa: BLE001 - the sink makes the folder with its first micro-batch
        return 0


stream_until(query, lambda: hdfs_lines() >= 100, "100 lines streamed")
assert hdfs_lines() == 100
print("hdfs ok", flush=True)
expect_failure(
    "hdfs read, no Kerberos",
    lambda: sources.hdfs(path=folder, url=fs["url"], tls_ca_file=fs["ca"], user="root").read(spark).collect(),
)
expect_failure(
    "hdfs read, CA not trusted",
    lambda: sources.hdfs(path=folder, **{**hdfs_options, "tls_ca_file": fs["untrusted_ca"]}).read(spark).collect(),
)

spark.stop()
print("done", flush=True)
