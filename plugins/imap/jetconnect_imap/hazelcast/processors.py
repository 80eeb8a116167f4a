"""jetconnect's Hazelcast entry processors, as a Python client sends them.

An entry processor runs on the member that owns the key (and again on its backup), so a
read-modify-write of one entry is atomic there and costs one round trip; but a member runs only
Java classes it knows, never Python. These are the client halves of the Java classes under
``scripts/servers/hazelcast/java/jetconnect/hazelcast`` (compiled onto the members' classpath by
``scripts/servers/hazelcast.sh`` and registered in its ``hz.yaml``): the same factory id, class
ids and field order. A cluster of one's own needs that jar and the factory in its configuration.

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

from typing import Any

from hazelcast.serialization.api import IdentifiedDataSerializable, ObjectDataInput, ObjectDataOutput

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
