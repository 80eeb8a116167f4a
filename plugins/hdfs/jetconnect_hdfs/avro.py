"""Avro on HDFS: the files family's Avro source and sink over WebHDFS, whose plain batch read and
write go to Spark's own Avro reader and writer (spark-avro) at the NameNode's ``hdfs://`` address
when the session has it, as the files plugin's do on the local disk (#35). This module adds only
what is HDFS's own (:class:`~jetconnect_hdfs.batch_reader.HdfsSparkAccess`: the URIs, and what
WebHDFS carries that Spark's client does not). It needs the jetconnect-files plugin
(``pip install 'jetconnect-hdfs[avro]'``), so it is imported only for ``format="avro"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jetconnect.api import FileInfo
from jetconnect_files.avro_sink import AvroSink
from jetconnect_files.avro_source import AvroSource
from jetconnect_hdfs.batch_reader import HdfsSparkAccess
from jetconnect_hdfs.filesystem import WebHdfsFileSystem


class HdfsAvroSource(AvroSource):
    """:class:`~jetconnect_files.avro_source.AvroSource` on WebHDFS; Spark's reader reads ``hdfs://``."""

    def __init__(self, *args: Any, spark_access: HdfsSparkAccess, **options: Any) -> None:
        super().__init__(*args, **options)
        self.spark_access = spark_access

    def spark_client_refusal(self) -> str | None:
        return self.spark_access.refusal()

    def spark_uris(self, files: Sequence[FileInfo]) -> tuple[str | None, tuple[str, ...]]:
        return self.spark_access.uris([f.path for f in files])


class HdfsAvroSink(AvroSink):
    """:class:`~jetconnect_files.avro_sink.AvroSink` on WebHDFS; Spark's writer writes ``hdfs://``."""

    def __init__(self, *args: Any, spark_access: HdfsSparkAccess, **options: Any) -> None:
        super().__init__(*args, **options)
        self.spark_access = spark_access

    def check_connection(self) -> str:
        """As the lines sink's: the NameNode asked for the directory, nothing written."""
        fs = self.staged.fs
        assert isinstance(fs, WebHdfsFileSystem), "an HDFS sink's file system is WebHDFS"
        return fs.check(self.staged.directory)

    def spark_directory_uri(self) -> tuple[str | None, str]:
        if (refusal := self.spark_access.refusal()) is not None:
            return refusal, ""
        reason, uris = self.spark_access.uris([self.staged.directory])
        return reason, uris[0] if uris else ""


__all__ = ["HdfsAvroSink", "HdfsAvroSource"]
