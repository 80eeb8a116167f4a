"""The errors of the HDFS connector, and which WebHDFS failures are worth retrying."""

from __future__ import annotations

import requests
import urllib3.exceptions
from hdfs.util import HdfsError

from jetconnect.api import explain_connection_failure, is_permanent_connection_failure
from jetconnect.errors import JetconnectError


class WebHdfsError(JetconnectError, OSError):
    """A WebHDFS call failed for good; the message names the operation, the path and the server."""


#: Java exceptions that retrying cannot fix: the path, the permissions or the request is wrong.
_PERMANENT = {
    "AccessControlException",
    "AuthenticationException",
    "FileAlreadyExistsException",
    "FileNotFoundException",
    "IllegalArgumentException",
    "InvalidPathException",
    "ParentNotDirectoryException",
    "PathIsNotEmptyDirectoryException",
    "SecurityException",
    "UnsupportedOperationException",
}

#: Messages of generic IOExceptions that are the caller's mistake, not the cluster's state.
_PERMANENT_MESSAGES = ("out of the range",)  # an OPEN at or past the end of the file

#: Failures of the connection itself: the NameNode or a DataNode is restarting or unreachable.
NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    urllib3.exceptions.HTTPError,
    ConnectionError,
    TimeoutError,
)


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` may pass if the same call is tried again a little later.

    A NameNode that was just restarted refuses connections, then answers with SafeModeException,
    RetriableException or an IOException about missing blocks until the DataNodes report in. A
    connection TLS refused (a certificate not trusted or naming another host, plain HTTP to an
    HTTPS port) is not transient.
    """
    if isinstance(exc, HdfsError):
        # An HdfsError without a Java exception is the client's own verdict (e.g. rename said no).
        return (
            exc.exception is not None
            and exc.exception not in _PERMANENT
            and not any(text in exc.message for text in _PERMANENT_MESSAGES)
        )
    # a TLS failure is a ConnectionError too, but a certificate does not become trusted by waiting
    return isinstance(exc, NETWORK_ERRORS) and not is_permanent_connection_failure(str(exc))


def as_os_error(exc: HdfsError, what: str) -> OSError:
    """The standard ``OSError`` subclass for a permanent WebHDFS failure (callers catch those)."""
    # The first line says it all; the rest is the NameNode's Java stack trace.
    first_line = (exc.message or "").strip().split("\n", 1)[0]
    message = f"{what}: {explain_connection_failure(first_line)}{first_line}"
    if exc.exception == "FileNotFoundException":
        return FileNotFoundError(message)
    if exc.exception == "FileAlreadyExistsException":
        return FileExistsError(message)
    if exc.exception in ("AccessControlException", "SecurityException"):
        return PermissionError(message)
    return WebHdfsError(message)


__all__ = ["NETWORK_ERRORS", "WebHdfsError", "as_os_error", "is_transient"]
