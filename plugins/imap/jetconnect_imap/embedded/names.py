"""Names on the embedded store, and where it lives when no ``store`` is given."""

from __future__ import annotations

import os
import re

from jetconnect_imap.errors import StructureNameError

#: Where maps live when no store URL is given (an env variable lets a whole job agree on one).
STORE_ENV = "JETCONNECT_IMAP_STORE"
#: A cache is kept as the map ``cache/<name>``: no map name may hold a '/', so ``map("x")`` and
#: ``cache("x")`` never share entries, journal or progress records.
CACHE_PREFIX = "cache/"

_NAME = re.compile(r"[A-Za-z0-9_.:\-]+")


def check_name(kind: str, name: str) -> str:
    """Map, cache and list names are plain words (the embedded store's keys stay simple and safe)."""
    # fullmatch: match(r"...$") also takes "x\n", another name than "x" that a later read misses
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise StructureNameError(f"{kind} name {name!r} must be letters, digits, '_', '.', ':' or '-'")
    return name


def cache_store_name(name: str) -> str:
    """The name under which the store keeps cache ``name`` (checked as a plain word first)."""
    return CACHE_PREFIX + check_name("cache", name)


def check_stored_name(name: str) -> str:
    """A map's name or a cache's stored name (``cache/<name>``): what the store accepts."""
    if isinstance(name, str) and name.startswith(CACHE_PREFIX):
        check_name("cache", name[len(CACHE_PREFIX) :])
        return name
    return check_name("map", name)


def default_url() -> str:
    """``$JETCONNECT_IMAP_STORE``, or the SQLite file ``~/.jetconnect/imap.db``.

    Not the working directory: a connector built from Spark's options resolves this default in
    every process that builds it, the driver's and each executor's, and they do not share a working
    directory; the user's home is the same for all of them on one machine.
    """
    return os.environ.get(STORE_ENV) or "sqlite:///" + os.path.join(os.path.expanduser("~"), ".jetconnect", "imap.db")


__all__ = ["CACHE_PREFIX", "STORE_ENV", "cache_store_name", "check_name", "check_stored_name", "default_url"]
