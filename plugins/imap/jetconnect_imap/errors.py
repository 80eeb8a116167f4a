"""The IMap family's errors, whichever backend raised them."""

from __future__ import annotations

from jetconnect.errors import JetconnectError, OffsetError, OptionError


class StoreError(JetconnectError):
    """The store cannot do what was asked: a wrong URL, a structure configured differently, a bad
    name, a server's refusal. Connectors re-raise it as a SourceError or SinkError naming themselves."""


class StructureNameError(StoreError, OptionError):
    """A map, cache or list name the store cannot hold as given (empty, not a string, a control
    character; on the embedded store anything but plain words): refused where the connector is built."""


class JournalNotEnabledError(StoreError):
    """The map or cache keeps no event journal."""


class JournalEventsLostError(StoreError):
    """Events ``[lost_from, lost_to)`` of a partition's journal were dropped before being read."""

    def __init__(self, kind: str, name: str, partition: int, lost_from: int, lost_to: int) -> None:
        self.kind, self.name, self.partition = kind, name, partition
        self.lost_from, self.lost_to = lost_from, lost_to
        super().__init__(
            f"events {lost_from}..{lost_to - 1} of partition {partition} of {kind} '{name}' were lost: the "
            f"event journal dropped them (capacity or time-to-live) before they were read; the oldest it "
            f"still has is {lost_to}"
        )


class JournalSequenceError(StoreError, OffsetError):
    """A sequence that cannot belong to the journal asked: past its end, or of another journal
    (the structure was destroyed and created again, the cluster restarted without persistence, the
    embedded store's file was replaced). An :class:`~jetconnect.errors.OffsetError` too: a
    checkpoint's offset that this journal cannot honour."""


__all__ = [
    "JournalEventsLostError",
    "JournalNotEnabledError",
    "JournalSequenceError",
    "StoreError",
    "StructureNameError",
]
