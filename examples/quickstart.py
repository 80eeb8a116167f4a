"""The quickstart: no server, only the connectors built into jetconnect (the README and getting
started show this file whole).

    .venv/bin/python examples/quickstart.py

A batch job (``items`` aggregated by Spark, written to ``logger``) and a streaming job (Jet's
``item_stream`` into parquet, run twice from one checkpoint: the second run resumes where the
first ended). It prints what each job did, then one line: every streamed item exactly once.
"""

import os
import sys
import tempfile
import time

from pyspark.sql import SparkSession

from jetconnect import sinks, sources
from jetconnect.spark import RECOMMENDED_SPARK_CONF

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers run this Python
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # local mode: Spark listens on loopback only
work = tempfile.mkdtemp(prefix="jetconnect-quickstart-")
spark = (
    SparkSession.builder.master("local[2]")
    .config(map=dict(RECOMMENDED_SPARK_CONF))
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")

# A batch job: Jet's TestSources.items, aggregated by Spark, into Jet's Sinks.logger
orders = sources.items(
    [("apples", 3), ("bread", 1), ("apples", 2), ("coffee", 5)], schema="product string, quantity int"
).read(spark)
totals = orders.groupBy("product").sum("quantity").withColumnRenamed("sum(quantity)", "quantity")
sinks.logger(prefix="total ").write(totals)  # one log line per row, on the console (stderr)
for row in totals.orderBy("product").collect():
    print(f"batch: {row.product}: {row.quantity}")

# A streaming job: Jet's TestSources.itemStream (100 items a second, replayable) into parquet;
# it began 5 s ago: the first run catches up, the second reads what came since
stream = sources.item_stream(items_per_second=100, start_ms=int((time.time() - 5) * 1000))
for run in (1, 2):  # the second run resumes from the first one's checkpoint
    df = stream.read_stream(spark, wal_location=f"{work}/rounds")  # each micro-batch's record
    query = (
        df.writeStream.format("parquet")
        .option("path", f"{work}/out")
        .option("checkpointLocation", f"{work}/checkpoint")
        .trigger(availableNow=True)  # read what the stream holds now, then stop
        .start()
    )
    query.awaitTermination()
    print(f"stream: run {run}: {sum(p['numInputRows'] for p in query.recentProgress)} items")

out = spark.read.parquet(f"{work}/out")
total, distinct = out.count(), out.select("sequence").distinct().count()
ok = total == distinct > 0
print(f"quickstart: {'ok' if ok else 'FAILED'}: {total} items streamed, {distinct} distinct")
spark.stop()
sys.exit(0 if ok else 1)
