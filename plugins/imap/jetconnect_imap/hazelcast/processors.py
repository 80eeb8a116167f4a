"""jetconnect's Hazelcast entry processors, as a Python client sends them, and the jar the
members need to run them.

An entry processor runs on the member that owns the key (and again on its backup), so a
read-modify-write of one entry is atomic there and costs one round trip; but a member runs only
Java classes it knows, never Python. These are the client halves of the Java classes shipped with
this package (``jetconnect_imap/hazelcast/java/jetconnect/hazelcast``): the same factory id, class
ids and field order. A cluster runs them once each member has the jar on its classpath and the
factory in its configuration::

    python -m jetconnect_imap.hazelcast.processors jar --classpath /opt/hazelcast/lib/hazelcast-5.7.0.jar \
        --out jetconnect-processors.jar

    # hazelcast.yaml of every member (and the jar in its lib/ or CLASSPATH)
    hazelcast:
      serialization:
        data-serializable-factories:
          - factory-id: 7301
            class-name: jetconnect.hazelcast.JetconnectSerializableFactory

(``scripts/servers/hazelcast.sh`` builds the test cluster's jar with the same command.)

* :class:`AddDelta` adds a long to an integer value (a missing entry counts as 0) and returns
  the new value: counters that concurrent writers never lose an increment of. A value that is
  not an integer fails the call (IllegalArgumentException from the member).
* :class:`SetValue` sets the value (``None`` removes the entry) and returns the one replaced:
  applying it twice leaves the same state, so a replayed micro-batch changes nothing.

Use them with ``imap.execute_on_key(key, AddDelta(5))`` or the ``map_with_entry_processor`` sink.
Values are whatever the client serializes (str, int as Long with ``IntType.LONG``, float, bool,
bytearray, ``HazelcastJsonValue``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hazelcast.serialization.api import IdentifiedDataSerializable, ObjectDataInput, ObjectDataOutput

#: The Java classes' sources, shipped with this package.
JAVA_SOURCES = Path(__file__).with_name("java")
#: The factory class the members' configuration names.
FACTORY_CLASS = "jetconnect.hazelcast.JetconnectSerializableFactory"
#: ``JetconnectSerializableFactory.FACTORY_ID`` of the Java side (hz.yaml's
#: ``serialization.data-serializable-factories``).
FACTORY_ID = 7301
#: ``JetconnectSerializableFactory.ADD_DELTA``: :class:`AddDelta`.
ADD_DELTA_CLASS_ID = 1
#: ``JetconnectSerializableFactory.SET_VALUE``: :class:`SetValue`.
SET_VALUE_CLASS_ID = 2


class AddDelta(IdentifiedDataSerializable):
    """``jetconnect.hazelcast.AddDeltaProcessor``: value += ``delta`` (a 64-bit integer)."""

    def __init__(self, delta: int = 0) -> None:
        if isinstance(delta, bool) or not isinstance(delta, int) or not -(2**63) <= delta < 2**63:
            raise ValueError(f"AddDelta: delta must be a 64-bit integer, got {delta!r}")
        self.delta = delta

    def write_data(self, object_data_output: ObjectDataOutput) -> None:
        object_data_output.write_long(self.delta)

    def read_data(self, object_data_input: ObjectDataInput) -> None:
        self.delta = object_data_input.read_long()

    def get_factory_id(self) -> int:
        return FACTORY_ID

    def get_class_id(self) -> int:
        return ADD_DELTA_CLASS_ID

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AddDelta) and other.delta == self.delta

    def __hash__(self) -> int:
        return hash((AddDelta, self.delta))

    def __repr__(self) -> str:
        return f"AddDelta({self.delta})"


class SetValue(IdentifiedDataSerializable):
    """``jetconnect.hazelcast.SetValueProcessor``: value = ``value`` (``None`` removes the entry)."""

    def __init__(self, value: Any = None) -> None:
        self.value = value

    def write_data(self, object_data_output: ObjectDataOutput) -> None:
        object_data_output.write_object(self.value)

    def read_data(self, object_data_input: ObjectDataInput) -> None:
        self.value = object_data_input.read_object()

    def get_factory_id(self) -> int:
        return FACTORY_ID

    def get_class_id(self) -> int:
        return SET_VALUE_CLASS_ID

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SetValue) and other.value == self.value

    def __hash__(self) -> int:
        return hash((SetValue, repr(self.value)))

    def __repr__(self) -> str:
        # the class only: a value may be anything a user writes, secrets included
        return f"SetValue(<{type(self.value).__name__}>)"


#: For ``HazelcastClient(data_serializable_factories=...)``: lets a client read these processors
#: back (a member never sends them, but a value holding one would otherwise be unreadable).
DATA_SERIALIZABLE_FACTORIES: dict[int, dict[int, type[IdentifiedDataSerializable]]] = {
    FACTORY_ID: {ADD_DELTA_CLASS_ID: AddDelta, SET_VALUE_CLASS_ID: SetValue}
}


def build_jar(classpath: str, out: Path, jdk: Path | None = None) -> Path:
    """Compile the Java halves of these processors against ``classpath`` (the members' Hazelcast
    jar, 5.x) into the jar ``out``, with the JDK at ``jdk`` (default: the ``javac`` on PATH)."""
    javac = str(jdk / "bin" / "javac") if jdk else shutil.which("javac")
    if not javac or not Path(javac).exists():
        raise RuntimeError("javac (a JDK 17 or newer) is needed to build the entry processors' jar")
    jar = str(Path(javac).with_name("jar"))
    sources = sorted(str(p) for p in JAVA_SOURCES.rglob("*.java"))
    with tempfile.TemporaryDirectory(prefix="jetconnect-processors-") as classes:
        compiled = subprocess.run(
            [javac, "--release", "17", "-nowarn", "-d", classes, "-cp", classpath, *sources],
            capture_output=True,
            text=True,
        )
        if compiled.returncode != 0:
            raise RuntimeError(f"javac failed on {JAVA_SOURCES}:\n{compiled.stdout}{compiled.stderr}")
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".tmp")
        packed = subprocess.run([jar, "cf", str(partial), "-C", classes, "."], capture_output=True, text=True)
        if packed.returncode != 0:
            raise RuntimeError(f"jar failed: {packed.stderr}")
        partial.replace(out)
    return out


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jetconnect_imap.hazelcast.processors",
        description="Build the jar of jetconnect's entry processors for a Hazelcast cluster's members.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("jar", help="compile the processors against the members' Hazelcast jar")
    build.add_argument("--classpath", required=True, help="the members' Hazelcast jar (or a classpath holding it)")
    build.add_argument("--out", required=True, type=Path, help="the jar to write")
    build.add_argument("--jdk", type=Path, help="a JDK home (default: the javac on PATH)")
    args = parser.parse_args(argv)
    try:
        print(build_jar(args.classpath, args.out, args.jdk))
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        f"put it on every member's classpath and register the factory: serialization: data-serializable-factories: "
        f"- factory-id: {FACTORY_ID} class-name: {FACTORY_CLASS}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(_main())
