"""Errors of the Hazelcast backend (all :class:`~jetconnect_imap.errors.StoreError`)."""

from __future__ import annotations

from jetconnect_imap.errors import StoreError


class HazelcastUrlError(StoreError):
    """A ``store`` URL or ``client_config`` that cannot name a Hazelcast cluster (says which part)."""


class HazelcastConnectError(StoreError):
    """No connection to the cluster within the connect timeout: members down or unreachable,
    wrong cluster name, or credentials the cluster refused (the message says which it can tell)."""


class ClusterLostError(StoreError):
    """The client lost its cluster: no member answered for longer than its reconnect window, and
    it shut down (the message says what the query does on restart; the next use makes a new client)."""


class HazelcastProtocolError(StoreError):
    """A request the cluster refused or answered unexpectedly."""


class CacheNotConfiguredError(HazelcastProtocolError):
    """No cache configuration of the members matches the name."""


__all__ = [
    "CacheNotConfiguredError",
    "ClusterLostError",
    "HazelcastConnectError",
    "HazelcastProtocolError",
    "HazelcastUrlError",
]
