"""Kafka -> PostgreSQL, exactly-once: a streaming query from a topic into a table, committed per
micro-batch (a restart from the checkpoint writes nothing twice).

    bash scripts/servers/kafka.sh start && bash scripts/servers/postgresql.sh start
    .venv/bin/python examples/kafka_to_jdbc.py [--bootstrap HOST:PORT] [--url SQLALCHEMY_URL]

It creates a topic with --records records and a new table, runs the query until the topic is
drained (Trigger.AvailableNow), then counts the table.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import uuid

from confluent_kafka.admin import AdminClient, NewTopic

import jetconnect
from jetconnect import sinks, sources
from jetconnect.testing import spark_builder

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092"))
parser.add_argument(
    "--url",
    default=os.environ.get(
        "JETCONNECT_PG_URL", "postgresql+psycopg://jetconnect:pg-Secret-7f3a@127.0.0.1:5432/jetconnect"
    ),
)
parser.add_argument("--records", type=int, default=2_000)
args = parser.parse_args()
topic, table = f"orders-{uuid.uuid4().hex[:8]}", f"orders_{uuid.uuid4().hex[:8]}"
work = tempfile.mkdtemp(prefix="jetconnect-example-")

admin = AdminClient({"bootstrap.servers": args.bootstrap})
for future in admin.create_topics([NewTopic(topic, 2, 1)]).values():
    future.result(timeout=30)

spark = spark_builder("example-kafka-to-jdbc").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
orders_in = spark.range(args.records).selectExpr("to_json(named_struct('id', id, 'qty', id % 7)) AS value")
sinks.kafka(bootstrap_servers=args.bootstrap, topic=topic, value_format="string").write(orders_in)

# Python objects, functions allowed
orders = sources.kafka(bootstrap_servers=args.bootstrap, topics=[topic], value_format="string")
query = sinks.jdbc(url=args.url, table=table).write_stream(
    orders.read_stream(spark, max_records_per_batch=50_000).selectExpr("value AS body"),
    checkpoint_location=f"{work}/checkpoint",
    trigger={"availableNow": True},
)
query.awaitTermination()

# or Spark's string options, for SQL and notebooks
jetconnect.register(spark)  # every installed plugin, as format "jetconnect.<name>"
in_topic = (
    spark.read.format("jetconnect.kafka")
    .option("bootstrap_servers", args.bootstrap)
    .option("topics", topic)
    .load()
    .count()
)

rows = sources.jdbc(args.url, table=table).read(spark)
total, distinct = rows.count(), rows.distinct().count()
ok = total == distinct == in_topic == args.records
print(
    f"kafka_to_jdbc: {'ok' if ok else 'FAILED'}: {total} rows ({distinct} distinct) in table {table}, "
    f"{in_topic} records in topic {topic}, {args.records} produced"
)
spark.stop()
sys.exit(0 if ok else 1)
