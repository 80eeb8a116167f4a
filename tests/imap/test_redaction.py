"""Store URLs: a password never shows, whatever characters it holds, raw or percent-encoded.

Property-based (Hypothesis, bounded); a Hazelcast cluster's URL and ``client_config`` secrets
against the real cluster are in integration/imap/test_hazelcast_faults.py.
"""

from __future__ import annotations

import datetime as dt
from urllib.parse import quote, unquote

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jetconnect.api import redact_url, split_credentials, url_secrets
from jetconnect_imap import StoreError
from jetconnect_imap.embedded.sqlite_store import open_store
from jetconnect_imap.factories import list_sink, list_source, map_journal, map_sink, map_source, map_with_updating

BOUNDED = settings(max_examples=300, deadline=dt.timedelta(seconds=2))
# the characters that broke redaction somewhere, and then anything
NASTY = "@#/%'\\:?&;=[]{} \t\u00e9\U0001f600"
PASSWORDS = st.text(alphabet=st.sampled_from(NASTY) | st.characters(exclude_categories=["Cs"]), min_size=1, max_size=30)
USERS = st.text(alphabet="abcdefgh-_.0123456789", max_size=8)
HOSTS = st.sampled_from(["127.0.0.1:5701/jetconnect", "hz.example:5701,hz2:5702/c", "h/c?smart=0", "[::1]:5701/dev"])


@BOUNDED
@given(USERS, PASSWORDS, HOSTS, st.sampled_from(["hazelcast", "sqlite"]))
@example("", "p@ss#w/rd%2F'\\x", "127.0.0.1:5701/jetconnect", "hazelcast")
@example("u", "a:b@c?d=e#f", "h/c?smart=0", "hazelcast")
def test_a_password_is_masked_raw_or_encoded(user: str, password: str, host: str, scheme: str) -> None:
    for written in (password, quote(password, safe="")):
        url = f"{scheme}://{user}:{written}@{host}"
        shown = redact_url(url)
        # exactly the URL with the password masked; a password that reads like a secret query
        # value ('...password=...') may also mask what follows it, never less
        assert shown == f"{scheme}://{user}:***@{host}" or (
            "=" in written and shown.startswith(f"{scheme}://{user}:***")
        )
        assert written in url_secrets(url) and unquote(written) in url_secrets(url)
        bare, got_user, got_password = split_credentials(url)
        assert bare == f"{scheme}://{host}" and got_user == (user or None)
        # encoded, the password comes back exactly; raw, only a literal '%' needs writing '%25'
        assert got_password == unquote(written)


@BOUNDED
@given(PASSWORDS)
def test_password_like_query_values_are_masked(password: str) -> None:
    url = f"hazelcast://127.0.0.1:5701/c?client_name=x&password={quote(password, safe='')}&db=1"
    assert redact_url(url) == "hazelcast://127.0.0.1:5701/c?client_name=x&password=***&db=1"


def test_urls_without_secrets_are_shown_as_they_are() -> None:
    for url in [
        "sqlite:///tmp/a@b:c.db",
        "hazelcast://user@h:1/c",
        "hazelcast://h:1/c?client_name=me",
        "sqlite:////x.db",
    ]:
        assert redact_url(url) == url and url_secrets(url) == ()
    # an '@' in a query value makes two readings: both are hidden rather than one shown
    assert redact_url("hazelcast://h:1/c?password=a@b&x=1") == "hazelcast://h:***&x=1"
    # a password no encoding can carry is still masked
    assert redact_url("hazelcast://:a\ud800b@h/c") == "hazelcast://:***@h/c" and "a\ud800b" in url_secrets(
        "hazelcast://:a\ud800b@h/c"
    )


@settings(max_examples=50, deadline=dt.timedelta(seconds=2))
@given(PASSWORDS)
def test_no_repr_or_store_error_shows_the_store_password(password: str) -> None:
    # building a connector connects to nothing: its repr and errors are all that could show it
    url = f"hazelcast://:{quote(password, safe='')}@127.0.0.1:1/jetconnect"
    things = [
        map_sink("m", store=url),
        map_source("m", store=url),
        map_journal("m", store=url),
        map_with_updating("m", key_fn=len, update_fn=max, store=url),
        list_sink("m", store=url),
        list_source("m", store=url),
    ]
    for thing in things:
        assert repr(thing) == f"{type(thing).__name__}('m', store='hazelcast://:***@127.0.0.1:1/jetconnect')"
    for bad in (url.replace("hazelcast", "mongodb", 1), f"sqlite://u:{quote(password, safe='')}@/", "sqlite:"):
        with pytest.raises(StoreError) as info:
            open_store(bad)
        assert str(info.value).startswith(f"store URL {redact_url(bad)!r}")
        assert "***" in str(info.value) or bad == "sqlite:"


def test_a_token_providers_token_is_masked_wherever_the_settings_show() -> None:
    from hazelcast.security import BasicTokenProvider

    from jetconnect_imap.hazelcast.clients import config_secrets

    token = "t0k3n-s3cret"
    url = "hazelcast://jet:pa55@127.0.0.1:5701/c"
    found = config_secrets(url, {"token_provider": BasicTokenProvider(token), "ssl_password": "k3y"})
    assert {token, "pa55", "k3y"} <= set(found)
