"""Registers the HDFS source and sink with jetconnect (entry point ``hdfs``)."""

from jetconnect import hookimpl
from jetconnect_hdfs.connectors import hdfs_sink, hdfs_source


@hookimpl
def register_sources(register):
    # Exact replay: offsets hold byte positions of files HDFS only lets grow.
    register(hdfs_source, name="hdfs")


@hookimpl
def register_sinks(register):
    # Staged files renamed (never overwriting) at commit: a re-delivered batch is written once.
    register(hdfs_sink, name="hdfs")


@hookimpl
def register_file_systems(register):
    # wal_location=webhdfs://...: builder streams keep their round records and spools on HDFS
    from jetconnect_hdfs.locations import resolve_webhdfs

    register("webhdfs", resolve_webhdfs)
    register("webhdfss", resolve_webhdfs)
