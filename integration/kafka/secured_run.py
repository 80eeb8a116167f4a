"""A secured Kafka pipeline in a Spark of its own, for test_secrets_nowhere.py: run as a script.

``python secured_run.py SECURED_JSON OUT_DIR``: a SparkSession (jetconnect's settings, the event
log on, INFO logging) whose every file lands under OUT_DIR, and a pipeline through both secured
listeners, each way of giving credentials taken once: Spark string options with a JAAS login and a
truststore, inline PEM (the private key in an option), an encrypted key, Python keywords. Then a
refused attempt, the doctor, and the connectors' reprs. stdout and stderr (the driver's and, in
local mode, the executors' and Python workers') are the caller's to capture.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import uuid
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.sql import functions as F

from jetconnect import cli, register, sinks, sources
from jetconnect.testing import spark_builder


def main(secured_json: str, out_dir: str) -> None:
    s = json.loads(Path(secured_json).read_text())
    out = Path(out_dir)
    (out / "events").mkdir(parents=True)
    # Spark's INFO log, the most it writes and where a secret would show, to a file: a shell (PySpark
    # is one) filters what its console appender shows down to WARN
    log4j = out / "log4j2.properties"
    log4j.write_text(
        "rootLogger.level = info\nrootLogger.appenderRef.file.ref = file\n"
        f"appender.file.type = File\nappender.file.name = file\nappender.file.fileName = {out / 'spark.log'}\n"
        "appender.file.layout.type = PatternLayout\nappender.file.layout.pattern = %d %p %c: %m%n%ex\n"
    )
    spark = (
        spark_builder("secured-run")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.compress", "false")  # scanned as text by the test
        .config("spark.eventLog.dir", str(out / "events"))
        .config("spark.local.dir", str(out / "local"))
        .config("spark.sql.warehouse.dir", str(out / "warehouse"))
        .config("spark.sql.streaming.checkpointLocation", str(out / "default-checkpoints"))
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log4j}")
        .getOrCreate()
    )
    register(spark)
    admin = AdminClient({"bootstrap.servers": s["plaintext"]})
    topics = [f"secured-{uuid.uuid4().hex[:8]}-{n}" for n in ("in", "out", "alo")]
    for future in admin.create_topics([NewTopic(t, 2, 1) for t in topics]).values():
        future.result(timeout=30)
    source_topic, out_topic, alo_topic = topics

    escaped = s["password"].replace("\\", "\\\\").replace('"', '\\"')
    jaas = {
        "kafka.bootstrap.servers": s["sasl_ssl"],
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{s["user"]}" password="{escaped}";',
        "kafka.ssl.truststore.location": s["client-truststore.jks"],
        "kafka.ssl.truststore.password": s["store_password"],
    }
    inline_pem = {
        "kafka.bootstrap.servers": s["mtls"],
        "kafka.security.protocol": "SSL",
        "kafka.ssl.ca.location": s["ca.pem"],
        "kafka.ssl.certificate.pem": Path(s["client.pem"]).read_text(),
        "kafka.ssl.key.pem": Path(s["client.key"]).read_text(),
    }
    encrypted = {
        "security_protocol": "SSL",
        "ssl_ca_location": s["ca.pem"],
        "ssl_certificate_location": s["client.pem"],
        "ssl_key_location": s["client-encrypted.key"],
        "ssl_key_password": s["key_password"],
    }
    sasl_python = {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": s["user"],
        "sasl_password": s["password"],
        "ssl_ca_location": s["ca.pem"],
    }

    rows = spark.range(100).select(F.concat(F.lit("s"), F.col("id").cast("string")).alias("value"))
    rows.write.format("jetconnect.kafka").options(**jaas).option("topic", source_topic).mode("append").save()
    # SQL's way in: a view over the source, its options (the private key among them) in the statement,
    # which EXPLAIN and the event log print, masked as spark.redaction.regex says
    clause = ", ".join(f"'{k}' '{_sql(v)}'" for k, v in {**inline_pem, "subscribe": source_topic}.items())
    statement = f"CREATE TEMPORARY VIEW secured USING jetconnect.kafka OPTIONS ({clause})"
    explained = "\n".join(row[0] for row in spark.sql(f"EXPLAIN EXTENDED {statement}").collect())
    spark.sql(statement)
    read = spark.table("secured")
    with contextlib.redirect_stdout(io.StringIO()) as plan:
        read.explain("extended")
    (out / "explain.txt").write_text(explained + "\n" + plan.getvalue())
    print("batch read:", read.count())
    sinks.kafka(bootstrap_servers=s["mtls"], topic=alo_topic, delivery="at-least-once", **encrypted).write(rows)

    def stream() -> None:
        df = spark.readStream.format("jetconnect.kafka").options(**inline_pem).option("subscribe", source_topic).load()
        query = (
            df.select("value")
            .writeStream.format("jetconnect.kafka")
            .options(**jaas)
            .option("topic", out_topic)
            .option("checkpointLocation", str(out / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(240)
        print("stream progress:", [p["numInputRows"] for p in query.recentProgress])

    stream()
    sinks.kafka(bootstrap_servers=s["sasl_ssl"], topic=source_topic, **sasl_python).write(rows)
    stream()  # restarted from the checkpoint

    wrong = {**sasl_python, "sasl_password": s["password"] + "-wrong"}
    try:
        sources.kafka(bootstrap_servers=s["sasl_ssl"], topics=[source_topic], **wrong).read(spark).count()
    except Exception as exc:  # noqa: BLE001 - the message is what is looked at
        print("refused:", exc)
    print("reprs:", sources.kafka(bootstrap_servers=s["sasl_ssl"], topics=[source_topic], **sasl_python))
    print("reprs:", sinks.kafka(bootstrap_servers=s["mtls"], topic=out_topic, **encrypted))
    options = [f"{k}={v}" for k, v in {**jaas, "topic": out_topic}.items()]
    cli.main(["doctor", "--skip-spark", "--sink", "kafka", *(a for o in options for a in ("--option", o))])
    print("topics:", json.dumps(topics))
    spark.stop()


def _sql(text: str) -> str:
    """``text`` inside a SQL string literal."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


if __name__ == "__main__":
    main(*sys.argv[1:3])
