"""A builder stream without ``wal_location`` keeps its state under the session's checkpoint root (#33).

Only ``spark.sql.streaming.checkpointLocation`` is set: no ``checkpointLocation`` option on the
query, no ``wal_location`` on the source. The query must run, restart from its checkpoint (Spark's
``<root>/<query name>``) and deliver every item once: a restart that lost the round records would
start the counter again at 0, and the output would hold the first run's numbers twice.
"""

from __future__ import annotations

import uuid

from jetconnect._locations import CHECKPOINT_CONF, WAL_FOLDER
from jetconnect.testing import counter_stream


def test_a_builder_stream_with_only_the_session_checkpoint_root_restarts_exactly(spark, tmp_path):
    root, out = tmp_path / "checkpoints", tmp_path / "out"
    name = f"wal_default_{uuid.uuid4().hex[:8]}"
    spark.conf.set(CHECKPOINT_CONF, str(root))
    try:
        for total in (300, 700):  # the second run finds more to read: it must continue at 300
            df = counter_stream(total, per_fill=50).read_stream(spark)
            query = (
                df.writeStream.format("parquet").option("path", str(out)).queryName(name).trigger(availableNow=True)
            ).start()
            query.awaitTermination(180)
            assert query.exception() is None
    finally:
        spark.conf.unset(CHECKPOINT_CONF)
    numbers = [row.n for row in spark.read.parquet(str(out)).collect()]
    assert sorted(numbers) == list(range(700))
    assert len(list((root / name / "commits").iterdir())) >= 2  # Spark's checkpoint, one commit per run at least
    assert list((root / WAL_FOLDER / "counter").rglob("*.arrow"))  # the round records, beside it
