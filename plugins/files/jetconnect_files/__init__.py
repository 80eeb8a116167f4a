"""jetconnect's files family: lines (batch and watched), Avro container files, exactly-once file sinks."""

from __future__ import annotations

from jetconnect_files.avro_sink import AvroSink
from jetconnect_files.avro_source import AvroSource
from jetconnect_files.lines_sink import FilesSink
from jetconnect.files.lines_source import FilesSource
from jetconnect.files.growing_files import FileWatcherSource

__all__ = ["AvroSink", "AvroSource", "FileWatcherSource", "FilesSink", "FilesSource"]
