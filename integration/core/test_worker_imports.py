"""Workers started on the wrong Python: a clear WorkerSetupError before the first read (#22).

The user's mistake, reproduced in a process of its own: the driver runs the project's venv, Spark's
Python workers a bare interpreter of the same version without pyarrow or jetconnect
(``PYSPARK_PYTHON``, or PATH's ``python3`` when the venv was not activated). One Spark start.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PIPELINE = textwrap.dedent("""
    import sys

    from pyspark.sql import SparkSession

    from jetconnect import WorkerSetupError, sources

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        sources.items(["a", "b"]).read(spark).collect()
    except WorkerSetupError as error:
        print("WORKER SETUP ERROR:", error)
        sys.exit(3)
    finally:
        spark.stop()
    print("the read worked")
""")


def test_workers_without_pyarrow_fail_the_first_read_clearly(tmp_path: Path) -> None:
    # a venv without packages: the same Python version as the driver, none of its libraries
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True, timeout=60)
    bare = str(tmp_path / "bare" / "bin" / "python")
    (tmp_path / "pipeline.py").write_text(PIPELINE)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_DRIVER_PYTHON")}
    env.update(PYSPARK_PYTHON=bare, SPARK_LOCAL_IP="127.0.0.1")
    run = subprocess.run(
        [sys.executable, "pipeline.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    output = run.stdout + run.stderr
    assert run.returncode == 3, output[-4000:]
    message = run.stdout.split("WORKER SETUP ERROR:", 1)[1]
    assert f"Spark's Python workers run {bare}, which cannot import" in message
    assert "pyarrow (ModuleNotFoundError: No module named 'pyarrow')" in message
    assert f"PYSPARK_PYTHON={sys.executable}" in message  # the fix names the driver's interpreter
    assert "PythonException" not in output and "Traceback" not in output
