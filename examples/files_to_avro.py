"""Files -> Avro, batch: lines of CSV files parsed by Spark and written as Avro container files,
then read back by the Avro source. No server needed (local disk).

    .venv/bin/python examples/files_to_avro.py [--directory DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from jetconnect import sinks, sources
from jetconnect.testing import spark_builder

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument(
    "--directory",
    default=os.environ.get("EXAMPLE_DIR") or tempfile.mkdtemp(prefix="jetconnect-example-"),
    help="where the input files and the Avro output go (absolute)",
)
parser.add_argument("--files", type=int, default=3)
parser.add_argument("--lines", type=int, default=1_000, help="lines per file")
args = parser.parse_args()
work = Path(args.directory).absolute()
(work / "in").mkdir(parents=True, exist_ok=True)
for f in range(args.files):
    lines = (f"{f * args.lines + i},item-{i % 5},{i % 9 + 1}\n" for i in range(args.lines))
    (work / "in" / f"orders-{f}.csv").write_text("".join(lines))

spark = spark_builder("example-files-to-avro").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
lines = sources.files(directory=str(work / "in"), glob="*.csv").read(spark)
orders = lines.selectExpr("split(value, ',') AS f").selectExpr(
    "CAST(f[0] AS BIGINT) AS id", "f[1] AS item", "CAST(f[2] AS INT) AS qty"
)
sinks.avro(directory=str(work / "avro"), codec="deflate").write(orders)

back = sources.avro(directory=str(work / "avro")).read(spark)
expected = args.files * args.lines
total, ids = back.count(), back.select("id").distinct().count()
ok = total == ids == expected
print(
    f"files_to_avro: {'ok' if ok else 'FAILED'}: {total} records ({ids} distinct ids) of {expected} lines "
    f"in {work / 'avro'}"
)
spark.stop()
sys.exit(0 if ok else 1)
