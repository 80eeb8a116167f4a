"""jetconnect's files family on the local disk: factories for the core's lines source and stream
(:mod:`jetconnect.files_family`), Avro container files, exactly-once file sinks."""

from __future__ import annotations

from jetconnect_files.avro_sink import AvroSink
from jetconnect_files.avro_source import AvroSource
from jetconnect_files.lines_sink import FilesSink

__all__ = ["AvroSink", "AvroSource", "FilesSink"]
