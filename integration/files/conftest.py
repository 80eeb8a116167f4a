"""Fixtures of the files integration tests."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pyspark
import pytest

from jetconnect.api import spark_avro_refusal

IN_CI = os.environ.get("CI", "").lower() == "true"
POM = Path(__file__).resolve().parents[2] / "bench" / "spark-avro" / "pom.xml"
#: The PySpark version spark-avro's pinned jar is built for: on it, the jar must be on the session.
SPARK_AVRO_VERSION = re.search(r"spark-avro_2.13</artifactId>\s*<version>([^<]+)<", POM.read_text()).group(1)  # type: ignore[union-attr]


@pytest.fixture
def need_spark_avro(spark):
    """Skip (or, on the PySpark spark-avro's jar is built for, fail in CI) when the session lacks it."""
    refusal = spark_avro_refusal(spark)
    if refusal is not None:
        if IN_CI and pyspark.__version__ == SPARK_AVRO_VERSION:
            pytest.fail(
                f"PySpark {pyspark.__version__} in CI must have spark-avro (scripts/test-spark-oldest.sh): {refusal}"
            )
        pytest.skip(refusal)
