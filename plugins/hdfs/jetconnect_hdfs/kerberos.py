"""Kerberos (SPNEGO) for WebHDFS: who the client is, and the HTTP authentication that proves it.

A kerberized NameNode answers every WebHDFS call with ``401 Negotiate`` until the client sends a
Kerberos service ticket for ``HTTP/<the NameNode's host>``; it then redirects reads and writes to
a DataNode with a delegation token in the URL (secret: redacted wherever a URL shows). The
client's identity comes, as for Hadoop's own clients, from a ticket cache (``kinit``; the default
one, or ``KRB5CCNAME``) or, given ``keytab``, from that keytab: then each Python process (every
Spark worker) gets its own tickets into a private in-memory cache, and nothing is written.

Built on ``gssapi`` (MIT Kerberos through GSS-API) and ``requests-gssapi``, the extra
``jetconnect-hdfs[kerberos]``. ``config`` is a ``krb5.conf`` for this process, when the system's
(``/etc/krb5.conf``) is not the one to use: MIT Kerberos reads ``KRB5_CONFIG`` when a context is
made, so it is set in the environment of the process (and the Spark workers it forks).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from jetconnect.errors import OptionError


class KerberosLoginError(OptionError):
    """No Kerberos credentials could be had for the client (no ticket, a keytab without the principal)."""


def spnego_auth(principal: str | None, keytab: str | None, config: str | None, owner: str) -> Any:
    """A ``requests`` auth handler that answers WebHDFS's ``Negotiate`` with the client's ticket."""
    try:
        import gssapi
        import requests_gssapi
    except ImportError:
        raise OptionError(
            f"{owner}: option 'kerberos' needs the gssapi and requests-gssapi packages "
            "(pip install 'jetconnect-hdfs[kerberos]'; gssapi builds against MIT Kerberos: libkrb5-dev)"
        ) from None
    if config is not None:
        if not os.path.isfile(config):
            raise OptionError(f"{owner}: option 'kerberos_config' names no file: {config}")
        os.environ["KRB5_CONFIG"] = config
    if keytab is not None and not os.path.isfile(keytab):
        raise OptionError(f"{owner}: option 'kerberos_keytab' names no file: {keytab}")
    name = gssapi.Name(principal, gssapi.NameType.kerberos_principal) if principal else None
    store: dict[bytes | str, bytes | str] | None = None
    if keytab is not None:
        # tickets from the keytab into a cache of this process alone, never a file
        store = {"client_keytab": keytab, "ccache": f"MEMORY:jetconnect-{uuid.uuid4().hex}"}
    try:
        creds = gssapi.Credentials(name=name, usage="initiate", store=store)
        creds.lifetime  # noqa: B018 - asks for the ticket now: no ticket is an error here, not at the first call
    except gssapi.exceptions.GSSError as exc:
        who = principal or "the default principal"
        where = f"keytab {keytab}" if keytab else "the ticket cache (kinit first, or give option 'kerberos_keytab')"
        raise KerberosLoginError(
            f"{owner}: authentication refused: no Kerberos credentials for {who} from {where}: {exc}"
        ) from None
    # mutual authentication OPTIONAL: TLS proves the server already, and a DataNode (token, no
    # SPNEGO) sends no Negotiate answer to check
    return requests_gssapi.HTTPSPNEGOAuth(creds=creds, mutual_authentication=requests_gssapi.OPTIONAL)


__all__ = ["KerberosLoginError", "spnego_auth"]
