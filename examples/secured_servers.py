"""Secured servers: PostgreSQL over TLS (verify-full) with a password and with a client certificate,
ActiveMQ's STOMP over TLS with a login and with client certificates, HDFS's WebHDFS over HTTPS with
Kerberos (SPNEGO) from a keytab; each written and read back through jetconnect, batch and streaming.

    bash scripts/servers/postgresql.sh secured start
    bash scripts/servers/activemq.sh secured start
    bash scripts/servers/hdfs.sh secured start
    PGPASSWORD=... JMS_PASSWORD=... .venv/bin/python examples/secured_servers.py [--pg-ca CA.pem] ...

Passwords come from the environment only (PGPASSWORD, JMS_PASSWORD: `NAME.sh secured env` prints
them for the suite's servers), never from the command line, and are never printed. Hosts, ports,
users, CA and client certificate files, the Kerberos principal, keytab and krb5.conf are flags
(`--help`) or environment variables, with defaults matching `NAME.sh secured` of scripts/servers/.
It writes --rows rows to a new table, queue and HDFS folder of each server, reads them back, and
checks that every row arrived once.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from urllib.parse import quote, quote_plus

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

import jetconnect
from jetconnect import sinks, sources
from jetconnect.testing import spark_builder

PG_TLS, MQ_TLS = "/tmp/jetconnect-postgresql/secured/tls", "/tmp/jetconnect-activemq/secured/tls"
HDFS_SECURED = "/tmp/jetconnect-hdfs/secured"
parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)


def flag(name: str, variable: str, default: str, kind: type = str) -> None:
    """``--name``, defaulting to the environment's ``variable``, else to ``default``."""
    parser.add_argument(f"--{name}", default=os.environ.get(variable, default), type=kind, help=f"${variable}")


flag("pg-host", "PGHOST", "localhost")  # a name the server's certificate holds (verify-full)
flag("pg-port", "PGPORT", "5433")
flag("pg-database", "PGDATABASE", "jetconnect")
flag("pg-user", "PGUSER", "jetconnect_tls")
flag("pg-cert-user", "PG_CERT_USER", "jetconnect_cert")  # logs in with its certificate (pg_hba `cert`)
flag("pg-ca", "PGSSLROOTCERT", f"{PG_TLS}/ca.pem")
flag("pg-client-cert", "PGSSLCERT", f"{PG_TLS}/client.pem")
flag("pg-client-key", "PGSSLKEY", f"{PG_TLS}/client.key")
flag("mq-host", "JMS_HOST", "localhost")
flag("mq-port", "JMS_PORT", "61614", int)
flag("mq-mtls-port", "JMS_MTLS_PORT", "61615", int)  # also requires a client certificate
flag("mq-user", "JMS_USER", "jetconnect_tls")
flag("mq-ca", "JMS_CA", f"{MQ_TLS}/ca.pem")
flag("mq-client-cert", "JMS_CLIENT_CERT", f"{MQ_TLS}/client.pem")
flag("mq-client-key", "JMS_CLIENT_KEY", f"{MQ_TLS}/client.key")
flag("hdfs-url", "WEBHDFS_URL", "https://localhost:9871")
flag("hdfs-ca", "WEBHDFS_CA", f"{HDFS_SECURED}/tls/ca.pem")
flag("hdfs-principal", "HDFS_PRINCIPAL", "jetconnect@JETCONNECT.TEST")
flag("hdfs-keytab", "HDFS_KEYTAB", f"{HDFS_SECURED}/kerberos/jetconnect.keytab")
flag("hdfs-krb5-conf", "HDFS_KRB5_CONF", f"{HDFS_SECURED}/kerberos/krb5.conf")
parser.add_argument("--rows", type=int, default=300)
parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for every message of a queue")
args = parser.parse_args()
tag, work = uuid.uuid4().hex[:8], tempfile.mkdtemp(prefix="jetconnect-example-")
orders, queue, folder = f"orders_{tag}", f"orders-{tag}", f"/jetconnect-examples/{tag}"  # new ones each run

spark = spark_builder("example-secured-servers").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
jetconnect.register(spark)  # every installed plugin, as format "jetconnect.<name>"
rows = spark.range(args.rows).selectExpr("id", "concat('order ', id) AS name").repartition(3)
found: dict[str, int] = {}  # rows arrived, by the way they were written and read


def arrived(what: str, df: DataFrame, column: str) -> None:
    """Count ``df``'s rows and distinct ``column`` values as ``what``: both must be --rows."""
    total, distinct = df.agg(F.count("*"), F.count_distinct(column)).first()
    found[what] = total if total == distinct else -total  # doubles: a failure, whatever the count


def drain(what: str, stream: DataFrame) -> None:
    """Stream ``stream`` into parquet until --rows messages arrived (a queue has no end), then
    stop and count them as ``what``."""
    out = f"{work}/{len(found)}"
    query = stream.writeStream.format("parquet").option("path", out).option("checkpointLocation", f"{out}-chk").start()
    deadline = time.monotonic() + args.timeout
    while sum(p["numInputRows"] for p in query.recentProgress) < args.rows and time.monotonic() < deadline:
        if query.exception() is not None:
            raise SystemExit(f"secured_servers: FAILED: {what}: {query.exception()}")
        time.sleep(1)
    query.processAllAvailable()
    query.stop()
    arrived(what, spark.read.parquet(out), "body")


# --- PostgreSQL: TLS only, verify-full, scram-sha-256 or a client certificate ---------------------
password = os.environ["PGPASSWORD"]
url = (
    f"postgresql+psycopg://{args.pg_user}:{quote_plus(password)}@{args.pg_host}:{args.pg_port}/{args.pg_database}"
    f"?sslmode=verify-full&sslrootcert={quote(args.pg_ca, safe='/')}"
)
sinks.jdbc(url, table=orders).write(rows)
df = sources.jdbc(url, table=orders, partition_column="id", num_partitions=3).read(spark)  # COPY
sinks.jdbc(url, table=f"{orders}_copy").write(df)
by_name = (
    spark.read.format("jetconnect.jdbc")
    .option("url", url)
    .option("table", f"{orders}_copy")
    .option("use_copy", "false")
    .load()
)

# a client certificate instead of a password (pg_hba.conf's `cert`)
cert_url = (
    f"postgresql+psycopg://{args.pg_cert_user}@{args.pg_host}:{args.pg_port}/{args.pg_database}?sslmode=verify-full"
    f"&sslrootcert={quote(args.pg_ca, safe='/')}&sslcert={quote(args.pg_client_cert, safe='/')}&sslkey={quote(args.pg_client_key, safe='/')}"
)
sinks.jdbc(cert_url, table=f"{orders}_cert").write(rows)
by_cert = sources.jdbc(cert_url, table=f"{orders}_cert").read(spark)
arrived("jdbc: COPY", df, "id")
arrived("jdbc: cursor, by format name", by_name, "id")
arrived("jdbc: client certificate", by_cert, "id")

# --- ActiveMQ: STOMP over TLS, a login required; client certificates on another port ---------------
df = rows.selectExpr("name AS body")
password = os.environ["JMS_PASSWORD"]
options = dict(host=args.mq_host, port=args.mq_port, user=args.mq_user, password=password, tls_ca_file=args.mq_ca)
sinks.jms_queue(queue, **options).write(df)
# what is received goes to a write-ahead log (beside the checkpoint) before it is acknowledged
stream = sources.jms_queue(queue, wal_location=f"{work}/orders-wal", **options).read_stream(spark)
# a broker that requires client certificates (needClientAuth): its own port, and the client's files
mtls = dict(options, port=args.mq_mtls_port, tls_cert_file=args.mq_client_cert, tls_key_file=args.mq_client_key)
sinks.jms_queue(f"{queue}-mtls", **mtls).write(df)
mtls_stream = (
    spark.readStream.format("jetconnect.jms_queue")
    .option("destination", f"{queue}-mtls")
    .options(**{k: str(v) for k, v in mtls.items()})
    .option("wal_location", f"{work}/orders-mtls-wal")
    .load()
)
drain("jms: TLS and a login", stream)
drain("jms: client certificate, by format name", mtls_stream)

# --- HDFS: WebHDFS over HTTPS, Kerberos from a keytab ---------------------------------------------
df = rows.selectExpr("name AS value")
options = dict(
    url=args.hdfs_url,  # WebHDFS over TLS (swebhdfs)
    tls_ca_file=args.hdfs_ca,
    kerberos=True,  # SPNEGO
    kerberos_principal=args.hdfs_principal,
    kerberos_keytab=args.hdfs_keytab,  # or none: the ticket cache kinit made
    kerberos_config=args.hdfs_krb5_conf,  # when not the system's
)
sinks.hdfs(directory=f"{folder}/in", **options).write(df)
stream = sources.hdfs(path=f"{folder}/in", **options).read_stream(spark)
query = sinks.hdfs(directory=f"{folder}/out", **options).write_stream(
    stream, checkpoint_location=f"{work}/hdfs-chk", trigger={"availableNow": True}
)
query.awaitTermination()
arrived("hdfs: HTTPS and Kerberos, streamed", sources.hdfs(path=f"{folder}/out", **options).read(spark), "value")

ok = all(count == args.rows for count in found.values())
print(
    f"secured_servers: {'ok' if ok else 'FAILED'}: {args.rows} rows each way, "
    + ", ".join(f"{what}: {count}" for what, count in found.items())
)
spark.stop()
sys.exit(0 if ok else 1)
