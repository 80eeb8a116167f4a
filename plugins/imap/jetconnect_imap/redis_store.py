"""The networked store: Redis or a Redis Cluster, through redis-py.

Layout, per map partition, all under one hash tag ``{imap:<name>:<p>}`` so that they share a
cluster slot (Lua scripts may only touch keys of one slot):

* ``jc:{imap:<name>:<p>}:entries`` a hash, serialised key -> serialised value;
* ``...:journal`` a sorted set, score = sequence, member = the JSON-encoded event;
* ``...:seq`` the next sequence number; ``...:progress`` a hash, writer -> last batch.

One Lua script applies a partition's changes, journal events and progress record atomically.
Read-modify-writes (merging and updating sinks) are optimistic: the script first checks that
every key still has the value the client read and otherwise changes nothing, and the client
reads again and retries. That needs no WATCH, so it works the same on a cluster.

Every command goes through :func:`jetconnect.api.retry_call`: a Redis restart, a dropped
connection or a cluster briefly down is retried with backoff for ``retry_deadline`` seconds
(30 by default; ``redis://host:port/0?retry_deadline=60``), then a :class:`StoreError` names the
store (never its password). A write retried after Redis applied it but before the reply arrived
must not apply twice: a write with a progress record finds its record; any other write carries a
one-shot marker key in the same slot, set by the script that applies it and checked first.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from operator import methodcaller
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    ClusterDownError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.retry import Retry

from jetconnect.api import Backoff, RetriesExhausted, redact, retry_call
from jetconnect_imap.events import Change, EventType
from jetconnect_imap.store import (
    Compute,
    MapConfig,
    Progress,
    RawEvent,
    Store,
    StoreError,
    check_name,
    split_credentials,
    url_secrets,
)

T = TypeVar("T")
log = logging.getLogger(__name__)

#: Seconds a command is retried through a restart or a lost connection before the store gives up.
DEFAULT_RETRY_DEADLINE = 30.0
#: Errors that a restart, a failover or a network blip cause, and that go away by themselves.
_TRANSIENT = (redis.ConnectionError, redis.TimeoutError, ClusterDownError, TryAgainError, SlotNotCoveredError)
#: ...except these subclasses of ConnectionError, which no retry cures.
_PERMANENT = (AuthenticationError, AuthorizationError)
# Defaults for redis-py's socket timeouts (the URL's query may set others): without them a
# server that stops answering would hang a task for good, whatever the retry deadline says.
_SOCKET_DEFAULTS = {"socket_connect_timeout": 10.0, "socket_timeout": 120.0}

# KEYS: entries, journal, seq, progress, and for a write without progress record its one-shot
# marker (set when applied, so a retry of the same call finds it).
# ARGV: capacity, ttl_ms, now_ms, writer ('' = none), batch, marker_ttl_ms, then the changes as
#   one JSON array of quads [key, op, value, expect] (one argument: encoding and parsing tens of
#   thousands of arguments cost more than the script): op 'P' put, 'R' remove, 'E' evict, 'C'
#   clear the partition, 'K' only check `expect`; expect '*' anything, '-' absent, '=<value>'
#   exactly that value.
# Returns the number of changes applied, -1 if the writer's batch was already applied, -2 if an
# expected value did not match, -3 if this very call was applied before (nothing applied).
# The entries' old values are read with one HMGET, and the new values, removals and journal
# events written with one HSET, HDEL and ZADD per 500, whatever the number of changes.
_APPLY = """
local cap, ttl, now = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local writer, batch = ARGV[4], tonumber(ARGV[5])
if writer ~= '' then
  local done = redis.call('HGET', KEYS[4], writer)
  if done and tonumber(done) >= batch then return -1 end
end
if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then return -3 end
local ops = cjson.decode(ARGV[7])
local STEP = 500
local fields = {}
for i = 1, #ops do
  if ops[i][2] ~= 'C' then fields[#fields + 1] = ops[i][1] end
end
local stored = {}
for i = 1, #fields, STEP do
  local last = math.min(i + STEP - 1, #fields)
  local values = redis.call('HMGET', KEYS[1], unpack(fields, i, last))
  for j = i, last do stored[fields[j]] = values[j - i + 1] end
end
for i = 1, #ops do
  local expect = ops[i][4]
  if expect ~= '*' then
    local cur = stored[ops[i][1]]
    if expect == '-' then
      if cur then return -2 end
    elseif cur ~= string.sub(expect, 2) then
      return -2
    end
  end
end
-- final[key]: the value a key ends with (false: removed); order: keys in first-change order
local final, order, cleared = {}, {}, false
local function current(key)
  local v = final[key]
  if v ~= nil then return v end
  if cleared then return false end
  return stored[key] or false
end
local seq = tonumber(redis.call('GET', KEYS[3]) or '0')
local events = {}
local function flush_entries()
  local sets, dels = {}, {}
  for _, key in ipairs(order) do
    local v = final[key]
    if v then sets[#sets + 1] = key; sets[#sets + 1] = v else dels[#dels + 1] = key end
  end
  for i = 1, #sets, 2 * STEP do redis.call('HSET', KEYS[1], unpack(sets, i, math.min(i + 2 * STEP - 1, #sets))) end
  for i = 1, #dels, STEP do redis.call('HDEL', KEYS[1], unpack(dels, i, math.min(i + STEP - 1, #dels))) end
end
local n = 0
for i = 1, #ops do
  local key, op, value = ops[i][1], ops[i][2], ops[i][3]
  local old, kind = false, nil
  if op == 'K' then
    n = n - 1
  elseif op == 'C' then
    flush_entries()
    redis.call('DEL', KEYS[1])
    final, order, cleared = {}, {}, true
    key, value, kind = false, false, 'CLEARED'
  else
    old = current(key)
    if final[key] == nil then order[#order + 1] = key end
    if op == 'P' then
      final[key] = value
      if old then kind = 'UPDATED' else kind = 'ADDED' end
    else
      final[key] = false
      if old then
        if op == 'E' then kind = 'EVICTED' else kind = 'REMOVED' end
      end
      value = false
    end
  end
  if kind and cap > 0 then
    events[#events + 1] = {seq, kind, key, old, value}
    seq = seq + 1
  end
  n = n + 1
end
flush_entries()
if cap > 0 and #events > 0 then
  -- only the last `cap` events can survive: older ones of this call are not written
  local first = math.max(1, #events - cap + 1)
  local members = {}
  for i = first, #events do
    local e = events[i]
    members[#members + 1] = e[1]
    members[#members + 1] = cjson.encode({tostring(e[1]), e[2], e[3], e[4], e[5], now})
  end
  for i = 1, #members, 2 * STEP do
    redis.call('ZADD', KEYS[2], unpack(members, i, math.min(i + 2 * STEP - 1, #members)))
  end
  redis.call('SET', KEYS[3], seq)
  if seq > cap then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. (seq - cap)) end
end
if cap > 0 and ttl > 0 then
  local cutoff = tonumber(now) - ttl
  while true do
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
    if #oldest == 0 or tonumber(cjson.decode(oldest[1])[6]) >= cutoff then break end
    redis.call('ZREMRANGEBYRANK', KEYS[2], 0, 0)
  end
end
if writer ~= '' then redis.call('HSET', KEYS[4], writer, batch) end
if KEYS[5] then redis.call('SET', KEYS[5], '1', 'PX', ARGV[6]) end
return n
"""

# KEYS: journal. ARGV: first and last sequence. The events' JSON texts joined by ','.
_JOURNAL_RANGE = """
return table.concat(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[2]), ',')
"""

# KEYS: items, progress[, marker]. ARGV: writer ('' = none), batch, marker_ttl_ms, values...
# Returns the number of values appended, -1 (batch already appended) or -3 (this call was).
_LIST_APPEND = """
local writer, batch = ARGV[1], tonumber(ARGV[2])
if writer ~= '' then
  local done = redis.call('HGET', KEYS[2], writer)
  if done and tonumber(done) >= batch then return -1 end
  redis.call('HSET', KEYS[2], writer, batch)
end
if KEYS[3] then
  if redis.call('EXISTS', KEYS[3]) == 1 then return -3 end
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
end
for i = 4, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return #ARGV - 3
"""

# Script results (-3, "this very call was applied before", counts as applied).
_ALREADY_APPLIED, _CONFLICT = -1, -2
# Optimistic read-modify-writes that keep losing races back off like this, then give up.
_CONFLICT_BACKOFF = Backoff(initial=0.002, maximum=0.05, deadline=60.0)


class _Conflict(Exception):
    """Some partitions changed between the read and the write of a read-modify-write."""


class _RoundTrip:
    """Commands sent in as few round trips as possible: one pipeline, or one per cluster node.

    redis-py's cluster pipeline refuses EVALSHA, so on a cluster the commands are grouped by
    the node that owns each command's slot and sent through that node's own pipeline.
    """

    def __init__(self, client: Any, cluster: bool) -> None:
        self._client, self._cluster = client, cluster
        self._calls: list[tuple[str, Callable[[Any], None]]] = []

    def add(self, slot_key: str, call: Callable[[Any], None]) -> None:
        """Queue ``call(pipeline)``; ``slot_key`` is any key the command touches.

        ``call`` runs later, in :meth:`execute`: queued in a loop, it takes the loop's values bound
        now (``methodcaller("hlen", key)``, or a lambda in a method of its own), never a closure.
        """
        self._calls.append((slot_key, call))

    def execute(self) -> list[Any]:
        if not self._cluster:
            pipe = self._client.pipeline(transaction=False)
            for _key, call in self._calls:
                call(pipe)
            return pipe.execute()
        by_node: dict[str, tuple[Any, list[int]]] = {}
        for i, (key, call) in enumerate(self._calls):
            node = self._client.get_node_from_key(key)
            if node.name not in by_node:
                by_node[node.name] = (self._client.get_redis_connection(node).pipeline(transaction=False), [])
            pipe, positions = by_node[node.name]
            call(pipe)
            positions.append(i)
        results: list[Any] = [None] * len(self._calls)
        for pipe, positions in by_node.values():
            for i, result in zip(positions, pipe.execute()):
                results[i] = result
        return results


class RedisStore(Store):
    """Maps, journals and lists in Redis (``redis://``) or a Redis Cluster (``redis+cluster://``).

    ``backoff`` bounds the retries of every command (default: the URL's ``retry_deadline``).
    """

    def __init__(self, url: str, backoff: Backoff | None = None) -> None:
        super().__init__(url)
        bare, username, password = split_credentials(url)
        parts = urlsplit(bare)
        self.cluster = parts.scheme.endswith("+cluster")
        query = parse_qsl(parts.query, keep_blank_values=True)
        deadline = [v for k, v in query if k == "retry_deadline"]
        try:
            self._backoff = backoff or Backoff(
                initial=0.05, maximum=2.0, deadline=float(deadline[-1]) if deadline else DEFAULT_RETRY_DEADLINE
            )
        except ValueError:
            raise StoreError(f"store {self.display_url}: retry_deadline must be a number of seconds") from None
        self._secrets = url_secrets(url)
        # A marker must outlive every retry of the write it guards.
        self._marker_ttl_ms = int(max(600.0, 4 * self._backoff.deadline) * 1000)
        plain = urlunsplit(
            (
                parts.scheme.replace("+cluster", ""),
                parts.netloc,
                parts.path,
                urlencode([(k, v) for k, v in query if k != "retry_deadline"]),
                parts.fragment,
            )
        )
        # retry_call is the one retry layer (redis-py's own would resend scripts behind our back
        # and blur the deadline); the URL's query may still override the socket timeouts.
        kwargs = {**_SOCKET_DEFAULTS, "username": username, "password": password, "retry": Retry(NoBackoff(), 0)}
        factory = RedisCluster.from_url if self.cluster else redis.Redis.from_url
        # A cluster client asks a node for the slot map as it is built: that is retried too.
        self._redis: Any = self._retrying("connecting", lambda: factory(plain, **kwargs), catch=(ValueError, TypeError))
        self._apply_script = self._redis.register_script(_APPLY)
        self._list_script = self._redis.register_script(_LIST_APPEND)
        self._range_script = self._redis.register_script(_JOURNAL_RANGE)

    def close(self) -> None:
        self._redis.close()

    # --- retries -----------------------------------------------------------------------------

    def _retrying(self, what: str, call: Callable[[], T], catch: tuple[type[Exception], ...] = ()) -> T:
        """``call()``, retried through transient failures; any failure becomes a StoreError.

        The error is raised outside the ``except`` block and with the password masked: neither
        its message nor a chained exception can carry the secret.
        """
        where = f"{what} in {self.display_url}"
        failures: tuple[type[Exception], ...] = (redis.RedisError, *catch)
        try:
            return retry_call(
                call,
                retry_on=_TRANSIENT,
                retry_if=lambda e: not isinstance(e, _PERMANENT),
                what=where,
                backoff=self._backoff,
                on_retry=self._on_retry,
                secrets=self._secrets,
            )
        except RetriesExhausted as exc:
            message = f"store unavailable: {exc}"
        except failures as exc:
            message = f"{where} failed: {type(exc).__name__}: {exc}"
        raise StoreError(redact(message, self._secrets))

    def _on_retry(self, exc: BaseException, delay: float) -> None:
        log.warning(
            "store %s: %s; retrying in %.2f s",
            self.display_url,
            redact(f"{type(exc).__name__}: {exc}", self._secrets),
            delay,
        )
        if self.cluster and "_redis" in vars(self):
            try:  # a restarted or failed-over node may own other slots now
                self._redis.nodes_manager.initialize()
            except redis.RedisError:
                pass  # still down: the next attempt fails and backs off again

    def _execute(self, what: str, rt: _RoundTrip) -> list[Any]:
        """Run a round trip, retried whole: every command in it is idempotent or guarded."""
        return self._retrying(what, rt.execute)

    def _round_trip(self) -> _RoundTrip:
        return _RoundTrip(self._redis, self.cluster)

    def _marker(self, progress: Progress | None) -> str | None:
        """A one-shot token for a write that has no progress record to make its retry harmless."""
        return None if progress is not None else uuid.uuid4().hex

    def _script(self, rt: _RoundTrip, keys: list[str], args: list[Any], marker: str | None) -> None:
        if marker is not None:
            keys = [*keys, keys[0].rpartition(":")[0] + f":once:{marker}"]
        rt.add(keys[0], lambda pipe: self._apply_script(keys=keys, args=args, client=pipe))

    def _journal_range(self, rt: _RoundTrip, journal: str, start: int, end: int) -> None:
        """Queue reading sequences ``[start, end)`` of ``journal`` (its events joined into one string)."""
        rt.add(journal, lambda pipe: self._range_script(keys=[journal], args=[start, end - 1], client=pipe))

    @staticmethod
    def _keys(name: str, partition: int) -> list[str]:
        tag = f"jc:{{imap:{name}:{partition}}}"
        return [f"{tag}:entries", f"{tag}:journal", f"{tag}:seq", f"{tag}:progress"]

    # --- config ------------------------------------------------------------------------------

    def _load_config(self, name: str) -> MapConfig | None:
        raw = self._retrying(
            f"reading the config of map '{name}'", lambda: self._redis.get(f"jc:{{imap:{name}}}:config")
        )
        return MapConfig(**json.loads(raw)) if raw else None

    def _create_config(self, name: str, config: MapConfig) -> MapConfig:
        wanted = json.dumps(
            {
                "partitions": config.partitions,
                "journal_capacity": config.journal_capacity,
                "journal_ttl": config.journal_ttl,
            }
        )
        key = f"jc:{{imap:{name}}}:config"
        self._retrying(
            f"creating map '{name}'", lambda: self._redis.set(key, wanted, nx=True)
        )  # the first creator wins
        return self._load_config(name) or config

    # --- entries -----------------------------------------------------------------------------

    def _script_args(self, config: MapConfig, progress: Progress | None, now: int) -> list[Any]:
        writer, batch = (progress.writer, progress.batch) if progress else ("", 0)
        return [config.partition_capacity, int(config.journal_ttl * 1000), now, writer, batch, self._marker_ttl_ms]

    def apply(
        self, name: str, config: MapConfig, changes: Mapping[int, Sequence[Change]], progress: Progress | None = None
    ) -> bool:
        now = int(time.time() * 1000)
        head = self._script_args(config, progress, now)
        marker = self._marker(progress)
        # One round trip for all partitions; each script call is atomic on its own slot.
        rt = self._round_trip()
        for partition, partition_changes in changes.items():
            ops = [[c.key, _op(c), c.value or "", "*"] for c in partition_changes]
            self._script(rt, self._keys(name, partition), [*head, _pack(ops)], marker)
        results = self._execute(f"writing map '{name}'", rt)
        # Each partition has its own progress record: a replay may find some already applied.
        return not results or any(r != _ALREADY_APPLIED for r in results)

    def update(
        self,
        name: str,
        config: MapConfig,
        keys: Mapping[int, Sequence[str]],
        compute: Compute,
        progress: Progress | None = None,
    ) -> bool:
        pending = {p: list(dict.fromkeys(ks)) for p, ks in keys.items()}
        outcomes: list[int] = []
        marker = self._marker(progress)  # one per call: a partition's marker is set only when applied

        def attempt() -> None:
            now = int(time.time() * 1000)
            head = self._script_args(config, progress, now)
            read = self._round_trip()
            order = list(pending)
            for p in order:
                entries, fields = self._keys(name, p)[0], pending[p]
                read.add(entries, methodcaller("hmget", entries, fields))
            values = self._execute(f"reading map '{name}'", read)
            currents = {p: dict(zip(pending[p], _texts(vals))) for p, vals in zip(order, values)}
            write = self._round_trip()
            for p in order:
                # Every key read is checked first, so the changes are computed from what is
                # really there; then the changes, already checked, with expect '*'.
                ops = [[key, "K", "", "-" if value is None else "=" + value] for key, value in currents[p].items()]
                ops += [[c.key, _op(c), c.value or "", "*"] for c in compute(p, currents[p])]
                self._script(write, self._keys(name, p), [*head, _pack(ops)], marker)
            # Retrying this round trip resends the very same scripts: a partition that was
            # applied finds its progress record or marker instead of failing its check.
            for p, result in zip(order, self._execute(f"writing map '{name}'", write)):
                if result != _CONFLICT:
                    outcomes.append(result)
                    del pending[p]
            if pending:
                raise _Conflict(sorted(pending))

        try:  # lost a race: let the other writer finish (jittered, growing, < 50 ms apart)
            retry_call(
                attempt,
                retry_on=(_Conflict,),
                what=f"read-modify-write of map '{name}'",
                backoff=_CONFLICT_BACKOFF,
                on_retry=lambda _exc, _delay: None,
            )
        except RetriesExhausted:
            message = (
                f"map '{name}' in {self.display_url}: partitions {sorted(pending)} kept changing under a "
                f"read-modify-write; gave up after {_CONFLICT_BACKOFF.deadline:g} s"
            )
        else:
            return not outcomes or any(r != _ALREADY_APPLIED for r in outcomes)
        raise StoreError(message)

    def get(self, name: str, partition: int, keys: Sequence[str]) -> dict[str, str]:
        entries = self._keys(name, partition)[0]
        values = self._retrying(f"reading map '{name}'", lambda: self._redis.hmget(entries, list(keys)))
        return {k: v for k, v in zip(keys, _texts(values)) if v is not None}

    def scan(self, name: str, partition: int) -> Iterator[tuple[str, str]]:
        entries = self._keys(name, partition)[0]
        # HSCAN may return a key twice (when the hash is resized between pages, or its cursor
        # is resumed on a restarted server): each key is yielded once.
        seen: set[bytes] = set()
        cursor = 0
        while True:
            cursor, page = self._retrying(
                f"reading map '{name}' partition {partition}",
                partial(self._redis.hscan, entries, cursor, count=1000),
            )
            for key, value in page.items():
                if key not in seen:
                    seen.add(key)
                    yield key.decode(), value.decode()
            if not cursor:
                return

    def size(self, name: str) -> int:
        config = self.map_config(name)
        rt = self._round_trip()
        for p in range(config.partitions):
            entries = self._keys(name, p)[0]
            rt.add(entries, methodcaller("hlen", entries))
        return sum(self._execute(f"counting map '{name}'", rt))

    def clear(self, name: str, config: MapConfig) -> None:
        head = self._script_args(config, None, int(time.time() * 1000))
        marker = self._marker(None)
        rt = self._round_trip()
        for p in range(config.partitions):
            self._script(rt, self._keys(name, p), [*head, _pack([["", "C", "", "*"]])], marker)
        self._execute(f"clearing map '{name}'", rt)

    # --- journal -----------------------------------------------------------------------------

    def journal_bounds(self, name: str, config: MapConfig) -> list[tuple[int, int]]:
        rt = self._round_trip()
        for p in range(config.partitions):
            _entries, journal, seq, _progress = self._keys(name, p)
            rt.add(seq, methodcaller("get", seq))
            rt.add(journal, methodcaller("zrange", journal, 0, 0, withscores=True))
        raw = self._execute(f"reading the journal bounds of map '{name}'", rt)
        out = []
        for i in range(config.partitions):
            nxt = int(raw[2 * i] or 0)
            first = raw[2 * i + 1]
            out.append((int(first[0][1]) if first else nxt, nxt))
        return out

    def read_journal(self, name: str, partition: int, start: int, end: int) -> list[RawEvent]:
        return self.read_journals(name, {partition: (start, end)}).get(partition, [])

    def read_journals(self, name: str, spans: Mapping[int, tuple[int, int]]) -> dict[int, list[RawEvent]]:
        # One round trip for all the partitions; each answers with its events joined into one
        # string, a JSON array once bracketed: one reply to parse instead of one per event.
        wanted = [(p, start, end) for p, (start, end) in spans.items() if end > start]
        rt = self._round_trip()
        for p, start, end in wanted:
            self._journal_range(rt, self._keys(name, p)[1], start, end)
        replies = self._execute(f"reading the journal of map '{name}'", rt) if wanted else []
        out: dict[int, list[RawEvent]] = {p: [] for p in spans}
        kinds = _EVENT_TYPES
        for (p, _start, _end), joined in zip(wanted, replies):
            if joined:
                out[p] = [
                    (int(seq), kinds[kind], key or None, old or None, new or None, int(ts))
                    for seq, kind, key, old, new, ts in json.loads(b"[" + joined + b"]")
                ]
        return out

    # --- lists -------------------------------------------------------------------------------

    @staticmethod
    def _list_keys(name: str) -> list[str]:
        return [f"jc:{{ilist:{name}}}:items", f"jc:{{ilist:{name}}}:progress"]

    def list_append(self, name: str, values: Sequence[str], progress: Progress | None = None) -> bool:
        check_name("list", name)
        writer, batch = (progress.writer, progress.batch) if progress else ("", 0)
        keys = self._list_keys(name)
        marker = self._marker(progress)
        if marker is not None:
            keys.append(f"jc:{{ilist:{name}}}:once:{marker}")
        args: list[str | int] = [writer, batch, self._marker_ttl_ms, *values]
        result = self._retrying(f"appending to list '{name}'", lambda: self._list_script(keys=keys, args=args))
        return result != _ALREADY_APPLIED

    def list_read(self, name: str) -> list[str]:
        items = self._list_keys(name)[0]
        return [v.decode() for v in self._retrying(f"reading list '{name}'", lambda: self._redis.lrange(items, 0, -1))]

    def list_clear(self, name: str) -> None:
        keys = self._list_keys(name)  # one hash tag, so one slot: a single DEL on a cluster too
        self._retrying(f"clearing list '{name}'", lambda: self._redis.delete(*keys))


_EVENT_TYPES = {kind.value: kind for kind in EventType}


def _pack(ops: list[list[str]]) -> str:
    """The script's changes argument: the quads as one JSON array (decoded by cjson)."""
    return _ENCODE_OPS(ops)


_ENCODE_OPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def _op(change: Change) -> str:
    if change.value is not None:
        return "P"
    return "E" if change.evict else "R"


def _texts(values: Sequence[bytes | None]) -> list[str | None]:
    return [None if v is None else v.decode() for v in values]
