"""What jetconnect reads off a SparkSession, the same way for classic sessions and Spark Connect."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jetconnect.spark._connect import is_connect

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def conf(spark: SparkSession, key: str) -> str | None:
    """The session's value of ``key``, or None when it is not set (or cannot be read)."""
    try:
        value = spark.conf.get(key, None)
    except Exception:  # a Connect server may refuse some keys; unset is the honest answer
        return None
    return None if value in (None, "") else str(value)


def members(spark: SparkSession) -> int:
    """How many executors share a job: Jet's cluster members, the factor in ``distributed(n)``.

    Configuration comes first, because a stream's parallelism must not depend on how many executors
    happened to have registered when it started: ``spark.executor.instances`` (YARN, Kubernetes),
    then ``spark.cores.max / spark.executor.cores`` (standalone), 1 for a local master; only then
    the executors registered now (classic sessions). Set the option ``jetconnect.members`` to pin it.
    """
    instances = _positive(conf(spark, "spark.executor.instances"))
    if instances:
        return instances
    if (conf(spark, "spark.master") or "local").startswith("local"):
        return 1
    cores_max, cores = _positive(conf(spark, "spark.cores.max")), _positive(conf(spark, "spark.executor.cores"))
    if cores_max and cores:
        return max(1, cores_max // cores)
    if is_connect(spark):
        return 1
    executors = spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
    return max(1, len(executors) - 1)  # one of them is the driver


def filter_pushdown(spark: SparkSession) -> bool:
    """Whether Spark hands Python data sources their filters (off unless configured)."""
    return (conf(spark, _PUSHDOWN_CONF) or "false").lower() == "true"


def _positive(value: str | None) -> int | None:
    try:
        number = int(value) if value is not None else 0
    except ValueError:
        return None
    return number if number > 0 else None
