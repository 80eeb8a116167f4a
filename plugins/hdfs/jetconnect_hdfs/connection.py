"""How to reach WebHDFS and who to be there: a picklable description, one client per process.

The driver plans and executors read, so what travels is this small frozen description; each Python
process builds its own ``hdfs`` client from it on first use. A delegation token is a secret: it is
kept out of ``repr`` and redacted from every error and log line (WebHDFS puts it in URLs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import hdfs

from jetconnect.api import ClientCache, redact
from jetconnect.errors import OptionError

#: This process's clients (a forked Spark worker makes its own: the session's sockets are not shared).
_clients: ClientCache[HdfsConnection, hdfs.Client] = ClientCache("hdfs clients")


@dataclass(frozen=True)
class HdfsConnection:
    """A WebHDFS endpoint and the identity to use on it.

    Authentication, in the order checked: ``token`` (a delegation token), ``kerberos=True``
    (SPNEGO through ``requests-kerberos``, with an optional ``kerberos_principal``), else simple
    authentication as ``user``. ``proxy_user`` impersonates another user (``doas``).
    """

    url: str
    user: str | None = None
    proxy_user: str | None = None
    kerberos: bool = False
    kerberos_principal: str | None = None
    kerberos_mutual_auth: str = "OPTIONAL"
    token: str | None = field(default=None, repr=False)
    timeout: float = 60.0

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise OptionError(
                f"hdfs: option 'url' must be a WebHDFS http(s) URL such as http://namenode:9870, got {self.url!r}"
            )
        if self.kerberos_mutual_auth.upper() not in ("REQUIRED", "OPTIONAL", "DISABLED"):
            raise OptionError(
                f"hdfs: option 'kerberos_mutual_auth' must be REQUIRED, OPTIONAL or DISABLED, got {self.kerberos_mutual_auth!r}"
            )

    def client(self) -> hdfs.Client:
        """This process's client for the endpoint (made once: it holds a pooled HTTP session)."""
        return _clients.get(self, self._new_client)

    def _new_client(self) -> hdfs.Client:
        common: dict[str, Any] = {"proxy": self.proxy_user, "timeout": self.timeout}
        if self.token:
            return hdfs.TokenClient(self.url, self.token, **common)
        if self.kerberos:
            try:
                from hdfs.ext.kerberos import KerberosClient
            except ImportError as exc:
                raise OptionError(
                    "hdfs: option 'kerberos' needs the requests-kerberos package "
                    "(pip install 'jetconnect-hdfs[kerberos]')"
                ) from exc
            import requests_kerberos

            mutual = getattr(requests_kerberos, self.kerberos_mutual_auth.upper())
            extra = {"principal": self.kerberos_principal} if self.kerberos_principal else {}
            return KerberosClient(self.url, mutual_auth=mutual, **extra, **common)
        return hdfs.InsecureClient(self.url, user=self.user, **common)

    def redact(self, text: str) -> str:
        """``text`` without this connection's token, in any spelling (the core's :func:`redact`)."""
        return redact(text, [self.token])

    def __str__(self) -> str:
        return self.url


__all__ = ["HdfsConnection"]
