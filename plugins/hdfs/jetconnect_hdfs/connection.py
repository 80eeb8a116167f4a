"""How to reach WebHDFS and who to be there: a picklable description, one client per process.

The driver plans and executors read, so what travels is this small frozen description; each Python
process builds its own ``hdfs`` client from it on first use. A delegation token is a secret: it is
kept out of ``repr`` and redacted from every error and log line (WebHDFS puts it in URLs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import hdfs
import requests

from jetconnect.api import ClientCache, redact
from jetconnect.errors import OptionError
from jetconnect_hdfs.kerberos import spnego_auth

#: This process's clients (a forked Spark worker makes its own: the session's sockets are not shared).
_clients: ClientCache[HdfsConnection, hdfs.Client] = ClientCache("hdfs clients")


class _Session(requests.Session):
    """An HTTP session that verifies against ``ca_file`` (the NameNode's and the DataNodes'
    certificates) when given: requests lets ``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE`` override a
    session's own ``verify``, and an option the user gave must not lose to the environment."""

    def __init__(self, ca_file: str | None) -> None:
        super().__init__()
        self.ca_file = ca_file

    def merge_environment_settings(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        settings = super().merge_environment_settings(*args, **kwargs)
        if self.ca_file is not None:
            settings["verify"] = self.ca_file
        return settings


@dataclass(frozen=True)
class HdfsConnection:
    """A WebHDFS endpoint and the identity to use on it.

    Authentication, in the order checked: ``token`` (a delegation token), ``kerberos=True``
    (SPNEGO, :mod:`jetconnect_hdfs.kerberos`: the ticket cache, or ``kerberos_keytab`` for
    ``kerberos_principal``), else simple authentication as ``user``. ``proxy_user`` impersonates
    another user (``doas``). An ``https://`` URL (``swebhdfs``) is verified against
    ``tls_ca_file`` (the system's CAs when None), certificate and host name, on the NameNode and
    on the DataNodes it redirects to.
    """

    url: str
    user: str | None = None
    proxy_user: str | None = None
    token: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    tls_ca_file: str | None = None
    kerberos: bool = False
    kerberos_principal: str | None = None
    kerberos_keytab: str | None = None
    kerberos_config: str | None = None

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise OptionError(
                f"hdfs: option 'url' must be a WebHDFS http(s) URL such as http://namenode:9870, got {self.url!r}"
            )
        if not self.kerberos and any((self.kerberos_principal, self.kerberos_keytab, self.kerberos_config)):
            raise OptionError(
                "hdfs: options 'kerberos_principal', 'kerberos_keytab', 'kerberos_config' need kerberos=true"
            )
        if self.kerberos and self.user is not None:
            raise OptionError(
                "hdfs: option 'user' is simple authentication; with kerberos=true the user is the Kerberos "
                "principal (option 'kerberos_principal')"
            )
        if self.tls_ca_file is not None and not self.url.startswith("https://"):
            raise OptionError(
                f"hdfs: option 'tls_ca_file' verifies an https:// WebHDFS URL; option 'url' is {self.url!r}"
            )

    def client(self) -> hdfs.Client:
        """This process's client for the endpoint (made once: it holds a pooled HTTP session)."""
        return _clients.get(self, self._new_client)

    def _new_client(self) -> hdfs.Client:
        session = _Session(self.tls_ca_file)
        common: dict[str, Any] = {"proxy": self.proxy_user, "timeout": self.timeout, "session": session}
        if self.token:
            return hdfs.TokenClient(self.url, self.token, **common)
        if self.kerberos:
            session.auth = spnego_auth(self.kerberos_principal, self.kerberos_keytab, self.kerberos_config, "hdfs")
            return hdfs.Client(self.url, **common)
        return hdfs.InsecureClient(self.url, user=self.user, **common)

    def redact(self, text: str) -> str:
        """``text`` without this connection's token, in any spelling (the core's :func:`redact`)."""
        return redact(text, [self.token])

    def __str__(self) -> str:
        return self.url


__all__ = ["HdfsConnection"]
