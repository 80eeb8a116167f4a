"""Spark's own connectors for the native rows of the benchmarks: jars from Maven Central, and the
PySpark venv whose version matches them (#35).

A connector jar (``spark-sql-kafka-0-10_2.13``, ``spark-avro_2.13``) must be built for PySpark's
exact Spark version, and Maven Central serves them only up to some version that may be older than
the main venv's PySpark. So each connector has a small pom under ``bench/<name>/pom.xml`` pinning
the version, its jars are copied once into ``~/.cache/jetconnect-<name>`` (``mvn
dependency:copy-dependencies``; given to Spark through ``spark.jars``, not ``spark.jars.packages``,
whose Ivy ignores Maven's settings), and the native rows run on a venv with that PySpark
(``bash scripts/setup.sh --spark VERSION VENV`` builds it when missing).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The venv the native rows run on when the main venv's PySpark has no connector jar on Maven Central.
OLDEST_VENV = ROOT / ".venv-spark-oldest"

__all__ = ["OLDEST_VENV", "maven_jars", "pom_version", "spark_venv_python"]


def pom_version(pom: Path, artifact_id: str) -> str:
    """The version ``pom`` pins for ``artifact_id`` (the Spark version PySpark must have)."""
    found = re.search(
        rf"<artifactId>{re.escape(artifact_id)}</artifactId>\s*<version>([^<]+)</version>", pom.read_text()
    )
    if found is None:
        raise RuntimeError(f"{pom}: no {artifact_id} version")
    return found.group(1)


def maven_jars(pom: Path, cache: Path) -> list[Path]:
    """The jars ``pom`` lists (not their dependencies: PySpark has Scala, Hadoop, Avro), from Maven
    Central once, then from ``cache``: an unchanged pom never reaches Maven again."""
    libs, copy = cache / "libs", cache / "pom.xml"
    if not (libs.is_dir() and copy.exists() and copy.read_bytes() == pom.read_bytes()):
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(["rm", "-rf", str(libs)], check=True)
        subprocess.run(
            [
                "mvn", "-q", "-B", "-f", str(pom), "dependency:copy-dependencies",
                "-DexcludeTransitive=true", f"-DoutputDirectory={libs}",
            ],
            check=True,
        )  # fmt: skip
        copy.write_bytes(pom.read_bytes())
    return sorted(libs.glob("*.jar"))


def spark_venv_python(version: str, venv: Path = OLDEST_VENV) -> Path:
    """The Python of ``venv``, built with PySpark ``version`` (and jetconnect) first if it has another."""
    python = venv / "bin" / "python"
    have = ""
    if python.exists():  # on a fresh clone the venv is not there yet
        have = subprocess.run(
            [str(python), "-c", "import pyspark; print(pyspark.__version__)"], capture_output=True, text=True
        ).stdout.strip()
    if have != version:
        print(f"building {venv.name} with PySpark {version} (it has {have or 'nothing'})")
        subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "--spark", version, str(venv)], check=True)
    return python
