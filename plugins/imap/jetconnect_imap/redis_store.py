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
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.cluster import RedisCluster

from jetconnect_imap.events import Change, EventType
from jetconnect_imap.store import (
    Compute,
    MapConfig,
    Progress,
    RawEvent,
    Store,
    StoreError,
    check_name,
)

# KEYS: entries, journal, seq, progress.
# ARGV: capacity, ttl_ms, now_ms, writer ('' = none), batch, then quads (key, op, value, expect):
#   op 'P' put, 'R' remove, 'E' evict, 'C' clear the partition, 'K' only check `expect`;
#   expect '*' anything, '-' absent, '=<value>' exactly that value.
# Returns the number of changes applied, -1 if the writer's batch was already applied, -2 if an
# expected value did not match (nothing applied).
_APPLY = """
local cap, ttl, now = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local writer, batch = ARGV[4], tonumber(ARGV[5])
if writer ~= '' then
  local done = redis.call('HGET', KEYS[4], writer)
  if done and tonumber(done) >= batch then return -1 end
end
for i = 6, #ARGV, 4 do
  local expect = ARGV[i + 3]
  if expect ~= '*' then
    local cur = redis.call('HGET', KEYS[1], ARGV[i])
    if expect == '-' then
      if cur then return -2 end
    elseif cur ~= string.sub(expect, 2) then
      return -2
    end
  end
end
local n = 0
for i = 6, #ARGV, 4 do
  local key, op, value = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local old, kind = false, nil
  if op == 'K' then
    n = n - 1
  elseif op == 'C' then
    redis.call('DEL', KEYS[1])
    key, value, kind = false, false, 'CLEARED'
  else
    old = redis.call('HGET', KEYS[1], key)
    if op == 'P' then
      redis.call('HSET', KEYS[1], key, value)
      if old then kind = 'UPDATED' else kind = 'ADDED' end
    elseif old then
      redis.call('HDEL', KEYS[1], key)
      if op == 'E' then kind = 'EVICTED' else kind = 'REMOVED' end
      value = false
    end
  end
  if kind and cap > 0 then
    local seq = redis.call('INCR', KEYS[3]) - 1
    redis.call('ZADD', KEYS[2], seq, cjson.encode({tostring(seq), kind, key, old, value, now}))
  end
  n = n + 1
end
if cap > 0 then
  local nxt = tonumber(redis.call('GET', KEYS[3]) or '0')
  if nxt > cap then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. (nxt - cap)) end
  if ttl > 0 then
    local cutoff = tonumber(now) - ttl
    while true do
      local first = redis.call('ZRANGE', KEYS[2], 0, 0)
      if #first == 0 or tonumber(cjson.decode(first[1])[6]) >= cutoff then break end
      redis.call('ZREMRANGEBYRANK', KEYS[2], 0, 0)
    end
  end
end
if writer ~= '' then redis.call('HSET', KEYS[4], writer, batch) end
return n
"""

# KEYS: items, progress. ARGV: writer ('' = none), batch, values...
_LIST_APPEND = """
local writer, batch = ARGV[1], tonumber(ARGV[2])
if writer ~= '' then
  local done = redis.call('HGET', KEYS[2], writer)
  if done and tonumber(done) >= batch then return -1 end
  redis.call('HSET', KEYS[2], writer, batch)
end
for i = 3, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return #ARGV - 2
"""

_MAX_RETRIES = 100  # optimistic read-modify-write attempts before giving up on a hot partition


class _RoundTrip:
    """Commands sent in as few round trips as possible: one pipeline, or one per cluster node.

    redis-py's cluster pipeline refuses EVALSHA, so on a cluster the commands are grouped by
    the node that owns each command's slot and sent through that node's own pipeline.
    """

    def __init__(self, client: Any, cluster: bool) -> None:
        self._client, self._cluster = client, cluster
        self._calls: list[tuple[str, Callable[[Any], None]]] = []

    def add(self, slot_key: str, call: Callable[[Any], None]) -> None:
        """Queue ``call(pipeline)``; ``slot_key`` is any key the command touches."""
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
    """Maps, journals and lists in Redis (``redis://``) or a Redis Cluster (``redis+cluster://``)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        parts = urlsplit(url)
        self.cluster = parts.scheme.endswith("+cluster")
        plain = urlunsplit((parts.scheme.replace("+cluster", ""), *parts[1:]))
        try:
            client: Any = RedisCluster.from_url(plain) if self.cluster else redis.Redis.from_url(plain)
        except redis.RedisError as exc:
            raise StoreError(f"cannot connect to {self.display_url}: {type(exc).__name__}: {exc}") from None
        self._redis = client
        self._apply_script = client.register_script(_APPLY)
        self._list_script = client.register_script(_LIST_APPEND)

    def close(self) -> None:
        self._redis.close()

    def _round_trip(self) -> _RoundTrip:
        return _RoundTrip(self._redis, self.cluster)

    def _script(self, rt: _RoundTrip, keys: list[str], args: list[Any]) -> None:
        rt.add(keys[0], lambda pipe: self._apply_script(keys=keys, args=args, client=pipe))

    @staticmethod
    def _keys(name: str, partition: int) -> list[str]:
        tag = f"jc:{{imap:{name}:{partition}}}"
        return [f"{tag}:entries", f"{tag}:journal", f"{tag}:seq", f"{tag}:progress"]

    # --- config ------------------------------------------------------------------------------

    def _load_config(self, name: str) -> MapConfig | None:
        raw = self._redis.get(f"jc:{{imap:{name}}}:config")
        return MapConfig(**json.loads(raw)) if raw else None

    def _create_config(self, name: str, config: MapConfig) -> MapConfig:
        wanted = json.dumps({"partitions": config.partitions, "journal_capacity": config.journal_capacity,
                             "journal_ttl": config.journal_ttl})
        self._redis.set(f"jc:{{imap:{name}}}:config", wanted, nx=True)  # the first creator wins
        return self._load_config(name) or config

    # --- entries -----------------------------------------------------------------------------

    def _script_args(self, config: MapConfig, progress: Progress | None, now: int) -> list[Any]:
        writer, batch = (progress.writer, progress.batch) if progress else ("", 0)
        return [config.partition_capacity, int(config.journal_ttl * 1000), now, writer, batch]

    def apply(self, name: str, config: MapConfig, changes: Mapping[int, Sequence[Change]],
              progress: Progress | None = None) -> bool:
        now = int(time.time() * 1000)
        head = self._script_args(config, progress, now)
        # One round trip for all partitions; each script call is atomic on its own slot.
        rt = self._round_trip()
        for partition, partition_changes in changes.items():
            args = list(head)
            for c in partition_changes:
                args += [c.key, _op(c), c.value or "", "*"]
            self._script(rt, self._keys(name, partition), args)
        results = rt.execute()
        # Each partition has its own progress record: a replay may find some already applied.
        return not results or any(r != -1 for r in results)

    def update(self, name: str, config: MapConfig, keys: Mapping[int, Sequence[str]], compute: Compute,
               progress: Progress | None = None) -> bool:
        pending = {p: list(dict.fromkeys(ks)) for p, ks in keys.items()}
        outcomes: list[int] = []
        for attempt in range(_MAX_RETRIES):
            if not pending:
                return not outcomes or any(r != -1 for r in outcomes)
            if attempt:  # lost a race: let the other writer finish (jittered, growing, < 50 ms)
                time.sleep(random.uniform(0, min(0.05, 0.002 * 2 ** attempt)))
            now = int(time.time() * 1000)
            head = self._script_args(config, progress, now)
            read = self._round_trip()
            order = list(pending)
            for p in order:
                entries, fields = self._keys(name, p)[0], pending[p]
                read.add(entries, lambda pipe, entries=entries, fields=fields: pipe.hmget(entries, fields))
            currents = {p: dict(zip(pending[p], _texts(vals))) for p, vals in zip(order, read.execute())}
            write = self._round_trip()
            for p in order:
                # Every key read is checked first, so the changes are computed from what is
                # really there; then the changes, already checked, with expect '*'.
                args = list(head)
                for key, value in currents[p].items():
                    args += [key, "K", "", "-" if value is None else "=" + value]
                for c in compute(p, currents[p]):
                    args += [c.key, _op(c), c.value or "", "*"]
                self._script(write, self._keys(name, p), args)
            results = write.execute()
            done = {p for p, result in zip(order, results) if result != -2}
            outcomes += [r for r in results if r != -2]
            pending = {p: ks for p, ks in pending.items() if p not in done}
        raise StoreError(
            f"map '{name}' in {self.display_url}: partitions {sorted(pending)} kept changing under a "
            f"read-modify-write; gave up after {_MAX_RETRIES} attempts"
        )

    def get(self, name: str, partition: int, keys: Sequence[str]) -> dict[str, str]:
        values = self._redis.hmget(self._keys(name, partition)[0], list(keys))
        return {k: v for k, v in zip(keys, _texts(values)) if v is not None}

    def scan(self, name: str, partition: int) -> Iterator[tuple[str, str]]:
        entries = self._keys(name, partition)[0]
        for key, value in self._redis.hscan_iter(entries, count=1000):
            yield key.decode(), value.decode()

    def size(self, name: str) -> int:
        config = self.map_config(name)
        rt = self._round_trip()
        for p in range(config.partitions):
            entries = self._keys(name, p)[0]
            rt.add(entries, lambda pipe, entries=entries: pipe.hlen(entries))
        return sum(rt.execute())

    def clear(self, name: str, config: MapConfig) -> None:
        head = self._script_args(config, None, int(time.time() * 1000))
        rt = self._round_trip()
        for p in range(config.partitions):
            self._script(rt, self._keys(name, p), head + ["", "C", "", "*"])
        rt.execute()

    # --- journal -----------------------------------------------------------------------------

    def journal_bounds(self, name: str, config: MapConfig) -> list[tuple[int, int]]:
        rt = self._round_trip()
        for p in range(config.partitions):
            _entries, journal, seq, _progress = self._keys(name, p)
            rt.add(seq, lambda pipe, seq=seq: pipe.get(seq))
            rt.add(journal, lambda pipe, journal=journal: pipe.zrange(journal, 0, 0, withscores=True))
        raw = rt.execute()
        out = []
        for i in range(config.partitions):
            nxt = int(raw[2 * i] or 0)
            first = raw[2 * i + 1]
            out.append((int(first[0][1]) if first else nxt, nxt))
        return out

    def read_journal(self, name: str, partition: int, start: int, end: int) -> list[RawEvent]:
        if end <= start:
            return []
        members = self._redis.zrangebyscore(self._keys(name, partition)[1], start, end - 1)
        out: list[RawEvent] = []
        for member in members:
            seq, kind, key, old, new, ts = json.loads(member)
            out.append((int(seq), EventType(kind), key or None, old or None, new or None, int(ts)))
        return out

    # --- lists -------------------------------------------------------------------------------

    @staticmethod
    def _list_keys(name: str) -> list[str]:
        return [f"jc:{{ilist:{name}}}:items", f"jc:{{ilist:{name}}}:progress"]

    def list_append(self, name: str, values: Sequence[str], progress: Progress | None = None) -> bool:
        check_name("list", name)
        writer, batch = (progress.writer, progress.batch) if progress else ("", 0)
        return self._list_script(keys=self._list_keys(name), args=[writer, batch, *values]) != -1

    def list_read(self, name: str) -> list[str]:
        return [v.decode() for v in self._redis.lrange(self._list_keys(name)[0], 0, -1)]

    def list_clear(self, name: str) -> None:
        for key in self._list_keys(name):
            self._redis.delete(key)


def _op(change: Change) -> str:
    if change.value is not None:
        return "P"
    return "E" if change.evict else "R"


def _texts(values: Sequence[bytes | None]) -> list[str | None]:
    return [None if v is None else v.decode() for v in values]
