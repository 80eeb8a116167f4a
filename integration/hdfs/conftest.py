"""Fixtures of the HDFS integration tests: the real HDFS (started once) and a fresh folder per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from jetconnect_hdfs import HdfsConnection, WebHdfsFileSystem

WEBHDFS_URL = "http://127.0.0.1:9870"
USER = "root"


@pytest.fixture(scope="session")
def hdfs_fs(server) -> WebHdfsFileSystem:
    """The real HDFS of scripts/servers/hdfs.sh (1 MiB blocks), as a jetconnect file system."""
    server("hdfs")
    return WebHdfsFileSystem(HdfsConnection(WEBHDFS_URL, user=USER))


@pytest.fixture
def hdfs_dir(hdfs_fs: WebHdfsFileSystem) -> Iterator[str]:
    """A fresh HDFS folder for one test, removed afterwards."""
    path = f"/jetconnect-tests/{uuid.uuid4().hex[:12]}"
    hdfs_fs.mkdirs(path)
    yield path
    hdfs_fs.delete(path, recursive=True)
