"""jetconnect's own Hazelcast wire pieces against the real 3-member cluster of
scripts/servers/hazelcast.sh: the entry processors the members know (hz_processors), and the
codecs the Python client lacks (hz_protocol). The official client writes, ours reads (and the
reverse); every partition is covered and sequences are exact."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from hazelcast import HazelcastClient
from hazelcast.config import IntType
from hazelcast.core import HazelcastJsonValue
from hazelcast.errors import HazelcastError

from jetconnect_imap.hz_client import (
    DEFAULT_CONNECT_TIMEOUT,
    HazelcastConnectError,
    HazelcastUrlError,
    client_settings,
    connect,
    parse_store_url,
    shown_config,
)
from jetconnect_imap.hz_processors import AddDelta, SetValue

MEMBERS = ["127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703"]


@pytest.fixture(scope="module")
def client(server) -> Iterator[HazelcastClient]:
    """The official client, as any other user of the cluster would configure it."""
    server("hazelcast")
    c = HazelcastClient(
        cluster_name="jetconnect", cluster_members=MEMBERS, default_int_type=IntType.LONG, cluster_connect_timeout=30
    )
    yield c
    c.shutdown()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_add_delta_runs_on_the_member_and_loses_no_increment(client) -> None:
    counters = client.get_map(unique("ep-add")).blocking()
    assert counters.execute_on_key("fresh", AddDelta(5)) == 5  # a missing entry counts as 0
    assert counters.execute_on_key("fresh", AddDelta(-7)) == -2
    counters.put("big", 2**40)
    assert counters.execute_on_key("big", AddDelta(2**32)) == 2**40 + 2**32  # 64-bit on both sides

    def bump() -> None:
        for _ in range(100):
            counters.execute_on_key("shared", AddDelta(1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counters.get("shared") == 400  # a client-side read-modify-write would lose some

    counters.put("text", "not a number")
    with pytest.raises(HazelcastError, match="is a java.lang.String, not an integer"):
        counters.execute_on_key("text", AddDelta(1))
    assert counters.get("text") == "not a number"
    with pytest.raises(ValueError, match="64-bit"):
        AddDelta(2**63)


def test_set_value_replaces_and_removes(client) -> None:
    m = client.get_map(unique("ep-set")).blocking()
    doc = HazelcastJsonValue('{"qty": 2}')
    assert m.execute_on_key("k", SetValue(doc)) is None
    assert m.get("k").loads() == {"qty": 2}  # stored as HazelcastJsonValue, not a pickle
    assert m.execute_on_key("k", SetValue("two")).loads() == {"qty": 2}  # the value it replaced
    m.execute_on_key("k", SetValue("two"))  # applied twice: the same state
    assert m.get("k") == "two"
    assert m.execute_on_key("k", SetValue(None)) == "two"
    assert not m.contains_key("k") and m.size() == 0
    assert "two" not in repr(SetValue("two"))  # a value (maybe a secret) never shows in a repr


# --- hz_client: the store URL, client_config, one bounded connect -------------------------------

URL = "hazelcast://127.0.0.1:5701,127.0.0.1:5702,127.0.0.1:5703/jetconnect"
CANARY = "s3c@r#e/t%25'\"q"  # every character that broke URL handling somewhere


def test_store_urls_parse_or_fail_naming_the_part() -> None:
    target = parse_store_url(URL)
    assert target.members == ("127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703")
    assert target.cluster_name == "jetconnect" and target.username is None
    odd = parse_store_url(f"hazelcast://us%40er:{CANARY}@[::1],localhost:5702/my%20%27cluster%27")
    assert odd.members == ("[::1]:5701", "localhost:5702") and odd.cluster_name == "my 'cluster'"
    assert (odd.username, odd.password) == ("us@er", "s3c@r#e/t%'\"q")
    assert CANARY not in repr(odd) and odd.password not in repr(odd)
    assert parse_store_url("hazelcast://127.0.0.1").cluster_name == "dev"  # Hazelcast's default
    for bad, part in [
        ("hazelcast://'127.0.0.1':5701/x", "is not a host name"),
        ("hazelcast://127..0.1/x", "is not a host name"),
        ("hazelcast://h:70000/x", "port '70000'"),
        ("hazelcast://h/a/b", "more than one segment"),
        ("hazelcast://h/..", "not a usable name"),
        ("hazelcast://h/50%", "not a %XX escape"),
        ("hazelcast://h,,g/x", "empty member"),
        ("hazelcast:///x", "no member"),
        (f"hazelcast://u:{CANARY}@h/x?token=1", "query"),
        ("redis://127.0.0.1:6379/0", "scheme"),
    ]:
        with pytest.raises(HazelcastUrlError, match=part) as info:
            parse_store_url(bad)
        assert "store " in str(info.value) and CANARY not in str(info.value)


def test_client_config_is_checked_before_connecting_and_never_shows_a_secret() -> None:
    secret = {"creds_password": CANARY}
    for config, part in [
        ({"no_such_option": 1, **secret}, "Unrecognized config option: no_such_option"),
        ({"cluster_name": "other", **secret}, r"client_config\['cluster_name'\]='other' contradicts"),
        ({"cluster_connect_timeout": float("inf"), **secret}, "positive number of seconds"),
        ({"default_int_type": IntType.INT, **secret}, "must be IntType.LONG"),
        ({"smart_routing": "yes", **secret}, "smart_routing"),
    ]:
        with pytest.raises(HazelcastUrlError, match=part) as info:
            client_settings(URL, config)
        assert CANARY not in str(info.value)
    with pytest.raises(HazelcastUrlError, match=r"creds_password.*\*\*\*") as info:
        client_settings(f"hazelcast://u:{CANARY}@127.0.0.1/jetconnect", {"creds_password": "other"})
    assert CANARY not in str(info.value) and "other" not in str(info.value)
    assert shown_config({"creds_password": CANARY, "cluster_connect_timeout": 3}) == {
        "creds_password": "***",
        "cluster_connect_timeout": 3,
    }
    settings = client_settings(URL)
    assert settings["default_int_type"] == IntType.LONG and settings["smart_routing"] is True
    assert settings["cluster_connect_timeout"] == DEFAULT_CONNECT_TIMEOUT


def test_connect_shares_one_client_that_writes_64_bit_integers(client) -> None:
    ours = connect(URL)
    assert connect(URL) is ours and connect(URL, {"cluster_connect_timeout": 5}) is not ours
    assert len(ours.cluster_service.get_members()) == 3
    assert {m.address.host for m in ours.cluster_service.get_members()} == {"127.0.0.1"}  # loopback only
    name = unique("long")
    ours.get_map(name).blocking().put("big", 2**40 + 1)
    assert client.get_map(name).blocking().get("big") == 2**40 + 1


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("hazelcast://127.0.0.1:5701/not-jetconnect", "did not admit the client: is the cluster name right"),
        ("hazelcast://127.0.0.1:5799/jetconnect", "no member reachable at 127.0.0.1:5799"),
        (f"hazelcast://bob:{CANARY}@127.0.0.1:5701/jetconnect", "did not admit the client"),
    ],
)
def test_a_cluster_that_refuses_or_is_absent_fails_in_bounded_time(client, url, says, caplog) -> None:
    started = time.monotonic()
    with pytest.raises(HazelcastConnectError, match=says) as info:
        connect(url, {"cluster_connect_timeout": 2})
    assert time.monotonic() - started < 8  # the timeout plus a 1 s probe per member, never a hang
    shown = [str(info.value), repr(info.value), *(r.getMessage() for r in caplog.records)]
    assert all(CANARY not in text and "s3c@r" not in text for text in shown)
    assert info.value.__cause__ is None and info.value.__context__ is None
