"""Typed errors: each says which source, sink, option, file, offset or record is at fault."""

from __future__ import annotations


class JetconnectError(Exception):
    """Base class of every error jetconnect raises on purpose."""


class OptionError(JetconnectError, ValueError):
    """An option is missing or has a value that cannot be used; the message names the option."""

    #: The option at fault, where the check that raised knew it (two errors of one call can then
    #: be told apart by the option they blame).
    option: str | None = None


class SchemaError(JetconnectError, ValueError):
    """An item does not match the declared schema; the message names the source and the item."""


class SourceError(JetconnectError):
    """A source failed while creating, reading or restoring; the message names the source."""


class SinkError(JetconnectError):
    """A sink failed while writing or committing; the message names the sink."""


class OffsetError(SourceError):
    """A checkpointed offset cannot be honoured (data expired, topic recreated, log missing)."""


class ChecksumError(OffsetError):
    """A write-ahead file (spool segment, round record) is not what was written; the message names
    the file, the processor and the rows it held, none of which are read."""


class PluginError(JetconnectError):
    """A plugin registered something invalid (a duplicate name, a factory that is not callable)."""


class PluginLoadWarning(UserWarning):
    """A plugin could not be loaded; the others still are."""


class ConnectSetupError(JetconnectError):
    """The Spark Connect server lacks something a connector needs; the message says what to install."""


class WorkerSetupError(JetconnectError):
    """Spark's Python workers run an interpreter that lacks what a connector needs.

    The message names that interpreter, what it cannot import, and how to start the workers on the
    driver's interpreter instead.
    """
