#!/usr/bin/env bash
# The oldest-PySpark profile: the unit tests, integration/core and one connector family
# (integration/files) on the floor of the PySpark range in pyproject.toml (pyspark>=FLOOR), in a
# venv of its own (.venv-spark-oldest, built by `scripts/setup.sh --spark FLOOR .venv-spark-oldest`).
# The rest of the suite runs on the newest PySpark the range allows (.venv). SIGKILL-and-restart
# tests (marker crash) are left to that run: each starts and kills a whole Spark driver and took
# ~5 min here on a loaded machine, while this profile must add only minutes to the test command.
# Part of scripts/test.sh; runs alone as `bash scripts/test-spark-oldest.sh [more pytest args]`.
# A venv that cannot be built skips the profile locally and fails it in CI (CI=true).
set -euo pipefail
cd "$(dirname "$0")/.."
floor=$(sed -nE 's/^ *"pyspark>=([0-9][0-9.]*),.*/\1/p' pyproject.toml | head -1)
if [ -z "$floor" ]; then
  echo "test-spark-oldest: no 'pyspark>=X' requirement found in pyproject.toml" >&2
  exit 1
fi
venv=.venv-spark-oldest
if ! bash scripts/setup.sh --spark "$floor" "$venv"; then
  if [ "${CI:-}" = "true" ]; then
    echo "test-spark-oldest: could not build $venv with pyspark $floor" >&2
    exit 1
  fi
  echo "test-spark-oldest: SKIPPED, could not build $venv with pyspark $floor (fatal in CI)" >&2
  exit 0
fi
# Spark's own Avro reader and writer (spark-avro, its jar from Maven Central at this PySpark's
# version, cached in ~/.cache/jetconnect-spark-avro) are on this profile's sessions, so every Avro
# test of integration/files, and integration/hdfs/test_avro.py, reads and writes through the Avro
# source's and sink's hand-offs to it (#35); the main venv's PySpark has no spark-avro jar on
# Maven Central.
avro_pom=bench/spark-avro/pom.xml avro_jars=$HOME/.cache/jetconnect-spark-avro/test-jars
avro_version=$(sed -nE '/spark-avro_2.13/{n;s/.*<version>([^<]+)<.*/\1/p}' "$avro_pom")
if [ "$avro_version" != "$floor" ]; then
  echo "test-spark-oldest: $avro_pom pins spark-avro $avro_version, not PySpark $floor: update it" >&2
  [ "${CI:-}" = "true" ] && exit 1
elif (source scripts/servers/_server.sh && maven_jars "$avro_pom" "$avro_jars" -DexcludeTransitive=true); then
  JETCONNECT_SPARK_JARS=$(ls "$avro_jars"/*.jar | paste -sd, -)
  export JETCONNECT_SPARK_JARS
else
  echo "test-spark-oldest: could not fetch spark-avro $avro_version with mvn" >&2
  [ "${CI:-}" = "true" ] && exit 1
fi
export PYTHONUNBUFFERED=1
exec "$venv/bin/python" -m pytest -m "not crash and not crash_matrix" -p no:cacheprovider tests integration/core integration/files \
    integration/hdfs/test_avro.py "$@"
