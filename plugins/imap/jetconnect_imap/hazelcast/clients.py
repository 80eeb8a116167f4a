"""One ``hazelcast.HazelcastClient`` per cluster and process, from a ``store`` URL and a
``client_config`` (Jet's ``ClientConfig``).

``store="hazelcast://[user[:password]@]host[:port][,host[:port]...]/cluster-name"`` names the
members to start from (port 5701 if left out; IPv6 as ``[::1]:5701``) and the cluster name
(percent-decoded; Hazelcast's default ``dev`` when there is no path). A user and password become
the client's ``creds_username`` / ``creds_password``; as in every jetconnect URL the user part
ends at the *last* ``@``, so a password may hold ``@``, ``#``, ``/`` or ``?`` raw (a literal
``%`` is ``%25``). Wherever the URL shows, its password is ``***``.

``client_config`` takes any keyword of ``hazelcast.HazelcastClient`` (checked before connecting);
its secret-named values (``creds_password``, ``creds_token``, ``ssl_password``,
``cloud_discovery_token``, ...) never show in a repr or an error. jetconnect sets, unless the
config says otherwise:

* ``default_int_type=IntType.LONG``: the client's default sends a Python ``int`` as a Java
  Integer and fails from 2**31 on; Java members and other clients read Long as a 64-bit integer.
  (Any other int type is refused: a connector must not fail on its 2**31-th order.)
* ``smart_routing=True``: each request goes straight to the member owning its partition.
* ``cluster_connect_timeout=10`` (seconds): a client not connected by then is shut down and a
  :class:`HazelcastConnectError` names the store and what is at fault (:func:`diagnose`), never a
  hang. The bound is jetconnect's own: the client's default retries for ever, and even with a
  timeout its first authentication waits for ever on a peer that accepts TCP and never answers.

:func:`client_for` keeps the client in a :class:`~jetconnect.api.ClientCache`: every Spark task of a
Python worker shares it (its connections, partition table and member list), a forked worker
builds its own, and one that shut down (it lost every member for longer than its reconnect
window) is replaced by a new one on next use.

Public API: :func:`parse_store_url` (-> :class:`HazelcastTarget`), :func:`client_settings`,
:func:`client_for`, :func:`cluster_id`, :func:`diagnose`, :func:`shown_config`, :func:`close_all`, :class:`HazelcastUrlError`,
:class:`HazelcastConnectError`, :data:`DEFAULT_CONNECT_TIMEOUT`, :data:`DEFAULT_PORT`.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import unquote

import hazelcast
from hazelcast.config import Config, IntType
from hazelcast.errors import HazelcastError

from jetconnect.api import ClientCache, redact, redact_options, redact_url, secrets_of, split_credentials, url_secrets
from jetconnect_imap.hazelcast.errors import HazelcastConnectError, HazelcastUrlError
from jetconnect_imap.hazelcast.probe import Finding, Verdict, probe, tls_file_problem

log = logging.getLogger(__name__)

#: Hazelcast's member port, when a member in the URL names none.
DEFAULT_PORT = 5701
#: Seconds the first connection may take before :func:`client_for` gives up.
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Seconds each step of a member's probe may take when a connect failed (connect, handshake, answer).
_PROBE_STEP_S = 2.0
#: Seconds a client shut down at the deadline gets to end its connecting thread.
_SHUTDOWN_WAIT_S = 5.0
#: Hazelcast's default cluster name (what a URL without a path means).
DEFAULT_CLUSTER_NAME = "dev"

#: Keywords the URL sets: naming them in ``client_config`` too must agree with the URL.
_FROM_URL = ("cluster_members", "cluster_name", "creds_username", "creds_password")
_HOST_NAME = re.compile(
    r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class HazelcastTarget:
    """What a ``hazelcast://`` URL names: the members to start from, the cluster, the credentials."""

    members: tuple[str, ...]
    cluster_name: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        user = f", username={self.username!r}" if self.username is not None else ""
        password = ", password='***'" if self.password is not None else ""
        return f"HazelcastTarget(members={self.members!r}, cluster_name={self.cluster_name!r}{user}{password})"


def parse_store_url(url: str) -> HazelcastTarget:
    """The members, cluster name and credentials of ``url``; :class:`HazelcastUrlError` naming
    the ``store`` option and the part at fault (the password masked) for anything else."""
    if not isinstance(url, str):
        raise HazelcastUrlError(f"store must be a hazelcast:// URL string, got {type(url).__name__}")
    shown = redact_url(url)

    def bad(what: str) -> HazelcastUrlError:
        return HazelcastUrlError(
            f"store {shown!r}: {what}; expected hazelcast://[user[:password]@]host[:port][,host[:port]...]/cluster-name"
        )

    scheme, sep, _ = url.partition("://")
    if not sep or scheme.lower() != "hazelcast":
        raise bad("the scheme must be hazelcast://")
    without_user, username, password = split_credentials(url)
    rest = without_user.partition("://")[2]
    for char, name in (("?", "a query ('?')"), ("#", "a fragment ('#')")):
        if char in rest:
            raise bad(f"{name} is not part of a Hazelcast store URL (client settings go in client_config)")
    hosts, slash, path = rest.partition("/")
    if not hosts:
        raise bad("no member address")
    members = tuple(_member(part, bad) for part in hosts.split(","))
    if slash and not path:
        raise bad("the cluster name after '/' is empty")
    if "/" in path:
        raise bad(f"the path {path!r} has more than one segment: only the cluster name follows the members")
    if _PERCENT.search(path):
        raise bad("the cluster name has a '%' that is not a %XX escape (write a literal '%' as %25)")
    try:
        cluster = unquote(path, errors="strict") if path else DEFAULT_CLUSTER_NAME
    except UnicodeDecodeError:
        raise bad("the cluster name's %XX escapes are not UTF-8") from None
    if cluster in (".", "..") or not cluster.isprintable():
        raise bad(f"the cluster name {cluster!r} is not a usable name")
    return HazelcastTarget(members=members, cluster_name=cluster, username=username, password=password)


def _member(text: str, bad: Any) -> str:
    """``host:port`` of one member of the URL, checked (port 5701 when left out)."""
    text = text.strip()
    if not text:
        raise bad("an empty member address (two commas, or a comma at an end)")
    if text.startswith("["):  # IPv6: [::1]:5701
        host, close, port = text[1:].partition("]")
        if not close or (port and not port.startswith(":")):
            raise bad(f"member {text!r} is not [ipv6]:port")
        port = port[1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad(f"member {text!r}: {host!r} is not an IPv6 address") from None
        shown_host = f"[{host}]"
    else:
        host, _, port = text.partition(":")
        if not _HOST_NAME.match(host):
            raise bad(f"member {text!r}: {host!r} is not a host name or IPv4 address")
        shown_host = host
    if port == "":
        return f"{shown_host}:{DEFAULT_PORT}"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise bad(f"member {text!r}: the port {port!r} is not a number from 1 to 65535")
    return f"{shown_host}:{int(port)}"


def config_secrets(url: str, config: Mapping[str, Any]) -> tuple[str, ...]:
    """Every secret a store URL and a client's settings hold, to mask wherever they might show:
    the URL's password, secret-named settings, and a ``token_provider``'s token."""
    secrets: list[str] = [*url_secrets(url), *secrets_of(dict(config))]
    provider = config.get("token_provider")
    token = getattr(provider, "token", None)
    if callable(token):
        try:
            value = token()
        except Exception:  # a provider that cannot give its token now: nothing more to mask
            value = None
        if isinstance(value, (bytes, bytearray)):
            secrets.append(bytes(value).decode("utf-8", "replace"))
        elif isinstance(value, str):
            secrets.append(value)
    return tuple(secret for secret in secrets if secret)


def client_settings(url: str, client_config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The keywords :func:`client_for` gives ``hazelcast.HazelcastClient``: ``client_config``, the
    URL's members, cluster and credentials, and jetconnect's defaults (module docstring). A
    keyword the client does not know, a value of the wrong type, or a setting that contradicts
    the URL is a :class:`HazelcastUrlError` naming it (secrets masked)."""
    target = parse_store_url(url)
    config = dict(client_config or {})
    secrets = config_secrets(url, config)
    for key in config:
        if not isinstance(key, str):
            raise HazelcastUrlError(f"client_config keys must be keyword names, got {key!r}")
    from_url: dict[str, Any] = {"cluster_members": list(target.members), "cluster_name": target.cluster_name}
    if target.username is not None:
        from_url["creds_username"] = target.username
    if target.password is not None:
        from_url["creds_password"] = target.password
    if config.get("cloud_discovery_token") is not None:
        raise HazelcastUrlError(
            "client_config['cloud_discovery_token'] (***): Hazelcast Cloud discovery finds a cluster's members "
            f"itself, and the store URL {redact_url(url)!r} names them; the client takes one or the other. "
            "jetconnect connects to the URL's members: give the Cloud cluster's member addresses in the URL "
            "(and its TLS settings in client_config), without the token"
        )
    for key in _FROM_URL:
        if key in config and key in from_url and config[key] != from_url[key]:
            raise HazelcastUrlError(
                f"client_config[{key!r}]={_shown(key, config[key])!r} contradicts the store URL "
                f"{redact_url(url)!r}, which sets it to {_shown(key, from_url[key])!r}: give it in one place"
            )
    settings: dict[str, Any] = {
        "default_int_type": IntType.LONG,
        "smart_routing": True,
        "cluster_connect_timeout": DEFAULT_CONNECT_TIMEOUT,
        **config,
        **from_url,
    }
    if settings["default_int_type"] != IntType.LONG:
        raise HazelcastUrlError(
            "client_config['default_int_type'] must be IntType.LONG (64-bit integers, what Java members "
            f"and other clients read); got {settings['default_int_type']!r}"
        )
    timeout = settings["cluster_connect_timeout"]
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise HazelcastUrlError(
            f"client_config['cluster_connect_timeout'] must be a positive number of seconds (a bound on "
            f"connecting, never infinite), got {timeout!r}"
        )
    try:
        Config.from_dict(settings)  # the client's own check of names and types, before any socket
    except Exception as exc:  # InvalidConfigurationError, TypeError, ValueError: all a bad config
        raise HazelcastUrlError(f"client_config for {redact_url(url)!r}: {redact(str(exc), secrets)}") from None
    return settings


def shown_config(client_config: Mapping[str, Any] | None) -> dict[str, Any]:
    """``client_config`` fit to show: secret-named values ``***``, URLs without their password."""
    return redact_options({str(k): v for k, v in (client_config or {}).items()})


def _shown(key: str, value: Any) -> Any:
    return redact_options({key: value})[key]


def _cache_key(url: str, client_config: Mapping[str, Any] | None) -> tuple[str, str]:
    # repr of the sorted items: a config may hold dicts, lists or functions (unhashable), and two
    # equal configs should share one client; the key is never shown.
    return url, repr(sorted((str(k), repr(v)) for k, v in (client_config or {}).items()))


def _shutdown(client: hazelcast.HazelcastClient) -> None:
    try:
        client.shutdown()
    except Exception:  # closing is best effort: the cluster may be gone already
        log.debug("shutting down a Hazelcast client failed", exc_info=True)


def is_running(client: hazelcast.HazelcastClient) -> bool:
    """Whether ``client`` still works: a client that lost every member for longer than its
    reconnect window (``cluster_connect_timeout``) shuts itself down for good."""
    return bool(client.lifecycle_service.is_running())


#: A client that shut down (an outage longer than its reconnect window) is replaced on next use.
_clients: ClientCache[tuple[str, str], hazelcast.HazelcastClient] = ClientCache(
    "hazelcast clients", on_close=_shutdown, alive=is_running
)


def client_for(url: str, client_config: Mapping[str, Any] | None = None) -> hazelcast.HazelcastClient:
    """The client of the cluster ``url`` names, with ``client_config``: one per (url, config) per
    process, connected (it sees the cluster's members) or a :class:`HazelcastConnectError` within
    ``cluster_connect_timeout`` seconds."""
    settings = client_settings(url, client_config)
    return _clients.get(_cache_key(url, client_config), lambda: _new_client(url, settings))


def _new_client(url: str, settings: dict[str, Any]) -> hazelcast.HazelcastClient:
    """A connected client, or a :class:`HazelcastConnectError` within ``cluster_connect_timeout``
    (and the few seconds :func:`diagnose` takes) saying what is at fault."""
    timeout = settings["cluster_connect_timeout"]
    unusable = tls_file_problem(Config.from_dict(settings)) if settings.get("ssl_enabled") else ""
    if unusable:  # the client would retry a socket it cannot make until the deadline
        raise HazelcastConnectError(
            f"cannot connect to Hazelcast cluster {settings['cluster_name']!r} at {redact_url(url)!r}: "
            f"the TLS settings in client_config cannot be used: {unusable}"
        )
    try:
        return _connect_within(settings, timeout)
    except HazelcastError as exc:
        secrets = config_secrets(url, settings)
        said = f"the client said {redact(f'{type(exc).__name__}: {exc}', secrets)}"
    except _Abandoned:
        said = "the client had not connected at the deadline, and was shut down"
    error = HazelcastConnectError(
        f"could not connect to Hazelcast cluster {settings['cluster_name']!r} at {redact_url(url)!r} "
        f"within {timeout:g} s: {diagnose(settings)} ({said})"
    )
    # outside the except block: the client's exception (whose context may hold the settings) is
    # not chained to ours
    raise error


class _Abandoned(Exception):
    """The client was still connecting at the deadline, and was shut down."""


def _connect_within(settings: dict[str, Any], timeout: float) -> hazelcast.HazelcastClient:
    """``hazelcast.HazelcastClient(**settings)``, given up after ``timeout`` seconds.

    The client's constructor returns only once connected, and its own ``cluster_connect_timeout``
    bounds only its retries: a peer that accepts TCP and never answers the protocol handshake (an
    HTTP server, a silent port) keeps its first authentication waiting for ever. So the client is
    built in a thread of its own and hands itself over before it connects; at the deadline it is
    shut down (its connections close, its constructor fails and the thread ends).
    """
    handed: list[hazelcast.HazelcastClient] = []
    outcome: dict[str, Any] = {}

    class _HandedOver(hazelcast.HazelcastClient):
        def _start(self) -> None:
            handed.append(self)
            super()._start()

    def build() -> None:
        try:
            outcome["client"] = _HandedOver(**settings)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=build, name="jetconnect-hazelcast-connect", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        for client in handed:
            _shutdown(client)
        thread.join(_SHUTDOWN_WAIT_S)
        if "client" in outcome:  # connected just as the deadline passed: shut down all the same
            _shutdown(outcome["client"])
        raise _Abandoned
    if "error" in outcome:
        raise outcome["error"]
    return cast(hazelcast.HazelcastClient, outcome["client"])


def diagnose(settings: Mapping[str, Any]) -> str:
    """What is at fault when a client with ``settings`` cannot connect, from what each member
    of the URL answers to the protocol's first step (:func:`.probe.probe`, all at once, a couple
    of seconds at most): nothing listening, the TLS settings, a peer that is not a Hazelcast
    member, the cluster name or credentials refused, or, when a member admits such a client, the
    client's own error is the cause."""
    members = list(settings["cluster_members"])
    step = min(_PROBE_STEP_S, max(0.5, settings["cluster_connect_timeout"] / 2))
    findings: list[Finding] = [Finding(m, Verdict.SILENT, "no answer") for m in members]

    def run(i: int) -> None:
        try:
            findings[i] = probe(members[i], settings, step)
        except Exception as exc:  # a probe that fails says so; it never hides the connect error
            findings[i] = Finding(members[i], Verdict.CLOSED, f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(members))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(3 * step + 1)
    by_verdict: dict[Verdict, list[Finding]] = {}
    for finding in findings:
        by_verdict.setdefault(finding.verdict, []).append(finding)
    secrets = config_secrets("", settings)
    return redact("; ".join(_explain(v, fs, settings, step) for v, fs in by_verdict.items()), secrets)


def _without_credentials(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in settings.items() if k not in ("creds_username", "creds_password")}


def _explain(verdict: Verdict, findings: list[Finding], settings: Mapping[str, Any], detail_step: float) -> str:
    """One sentence on the members that answered alike, naming the setting at fault."""
    where = ", ".join(f.member for f in findings)
    is_a = "is a Hazelcast member" if len(findings) == 1 else "are Hazelcast members"
    detail = findings[0].detail
    user = settings.get("creds_username")
    if verdict is Verdict.NOTHING_LISTENING:
        none = "no member reachable: " if len(findings) == len(settings["cluster_members"]) else ""
        return f"{none}nothing listens at {where} ({detail}; is the cluster up, the host and port right?)"
    if verdict is Verdict.TLS_SETTINGS:
        return f"the TLS settings in client_config cannot be used: {detail}"
    if verdict is Verdict.TLS_HANDSHAKE:
        return (
            f"the TLS handshake with {where} failed ({detail}): check the TLS settings in client_config "
            "(ssl_cafile must hold the CA that signed the members' certificates; ssl_check_hostname, "
            "ssl_protocol), and that the members have TLS on (open-source Hazelcast members have none)"
        )
    if verdict in (Verdict.SILENT, Verdict.CLOSED, Verdict.NOT_HAZELCAST):
        hint = "another service on this port?" + ("" if settings.get("ssl_enabled") else " or members that need TLS?")
        return f"{where} accepts connections but does not speak the Hazelcast client protocol: {detail} ({hint})"
    if verdict is Verdict.CREDENTIALS:
        if user is None and not settings.get("creds_password"):
            refused = f"the cluster name {settings['cluster_name']!r} refused"
        elif probe(findings[0].member, _without_credentials(settings), detail_step).verdict is Verdict.ADMITTED:
            refused = f"the credentials of user {user!r} refused (the cluster name is right: a client without them is admitted)"
        else:
            refused = (
                f"the cluster name {settings['cluster_name']!r} refused (or, if the cluster requires credentials, "
                f"those of user {user!r})"
            )
        return (
            f"{where} {is_a} that did not admit the client: {refused}; the cluster name is the store URL's "
            "path and must be the members' cluster-name"
        )
    if verdict is Verdict.NOT_ALLOWED:
        return f"{where} {is_a} that does not allow this client in the cluster (client filtering)"
    if verdict is Verdict.SERIALIZATION:
        return f"{where} {is_a} of another serialization version than this client"
    return (
        f"{where} admits a client with these settings, so the cause is the client's own error (below); "
        "a member that answered slowly under load?"
    )


def cluster_id(client: hazelcast.HazelcastClient) -> str | None:
    """The id of the cluster ``client`` is connected to (from the members' answer to its
    authentication; the client keeps it in its connection manager and switches it when it
    reconnects to a cluster that restarted), or None if this client version keeps it elsewhere."""
    found = getattr(getattr(client, "_connection_manager", None), "_cluster_id", None)
    return None if found is None else str(found)


def close_all() -> None:
    """Shut down every client this process made (tests; a cluster that was restarted)."""
    _clients.close_all()


__all__ = [
    "DEFAULT_CLUSTER_NAME",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_PORT",
    "HazelcastTarget",
    "client_for",
    "client_settings",
    "close_all",
    "cluster_id",
    "diagnose",
    "is_running",
    "parse_store_url",
    "shown_config",
]
