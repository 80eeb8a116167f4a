"""The one redaction module: no password leaves it raw, percent-encoded or repr-escaped.

Property-based (Hypothesis, bounded) over passwords made of the characters that broke redaction
somewhere; every plugin's ``repr`` and the retry layer are checked with the same passwords. The
real servers are in integration/test_canary_secret.py.
"""

from __future__ import annotations

import datetime as dt
import json
import traceback
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jetconnect import sinks, sources
from jetconnect._options import Options
from jetconnect._redaction import (
    is_secret_name,
    quotes_secret,
    raise_unchained,
    redact,
    redact_url,
    scrubbed,
    secrets_in,
    secrets_of,
    split_credentials,
    url_secrets,
)
from jetconnect._retry import Backoff, RetriesExhausted, retry_call
from jetconnect.errors import OptionError

BOUNDED = settings(max_examples=150, deadline=dt.timedelta(seconds=2))
CANARY = "c@n#a/r%y'\\x"
# '*' is left out: it is what the mask is made of
NASTY = "'\\@#/%: \"?&=;+\t\u00e9"
PASSWORDS = st.text(
    alphabet=st.sampled_from(NASTY) | st.characters(exclude_categories=["Cs"], exclude_characters="*"),
    min_size=1,
    max_size=24,
).map(lambda s: f"S3{s}cR")  # marked: "0" shows anywhere


def spellings(password: str) -> list[str]:
    """How a password leaks: raw, percent-encoded (three ways), repr- and JSON-escaped."""
    return [
        password,
        quote(password, safe=""),
        quote(password),
        quote_plus(password),
        repr(password)[1:-1],
        json.dumps(password)[1:-1],
    ]


def assert_hidden(password: str, *texts: str) -> None:
    for text in texts:
        for spelled in spellings(password):
            assert spelled not in text, f"{password!r} spelled {spelled!r} shows in {text!r}"


@BOUNDED
@given(PASSWORDS, st.sampled_from(range(6)))
@example(CANARY, 0)
@example("p'a\\s", 4)
def test_redact_hides_every_spelling_of_a_secret(password: str, spelled: int) -> None:
    text = f"connect to db failed: {spellings(password)[spelled]} was refused (user 'app')"
    assert_hidden(password, redact(text, [password]))


@BOUNDED
@given(PASSWORDS, st.sampled_from(["postgresql+psycopg", "redis", "http", "stomp"]), st.booleans())
@example(CANARY, "postgresql+psycopg", True)
@example("a:b@c?d=e#f", "redis", False)
def test_a_url_password_never_shows_whatever_it_holds(password: str, scheme: str, encoded: bool) -> None:
    written = quote(password, safe="") if encoded else password
    url = f"{scheme}://app:{written}@db.example:5432/shop?sslmode=disable"
    shown = redact_url(url)
    assert shown.startswith(f"{scheme}://app:***") and password not in shown.replace(f"{scheme}://app:", "")
    if encoded:  # a written '%' is an escape: only an encoded URL reads back exactly
        assert shown == f"{scheme}://app:***@db.example:5432/shop?sslmode=disable"
        assert split_credentials(url) == (f"{scheme}://db.example:5432/shop?sslmode=disable", "app", password)
    # and a message quoting the password any way it was found is clean
    assert_hidden(password, redact(f"FATAL: {password} / {written} / {password!r}", url_secrets(url)))


@BOUNDED
@given(PASSWORDS)
@example(CANARY)
def test_options_show_no_secret_in_repr_or_errors(password: str) -> None:
    encoded = quote(password, safe="")
    raw = {
        "url": f"postgresql+psycopg://app:{encoded}@db/shop",
        "store": f"redis://:{encoded}@127.0.0.1:6379/0",
        "passcode": password,
        "api_key": password,
        "sasl.password": password,
        "ssl.key.password": password,
        "token": password,
        "Password": password,
        "client_secret": password,
        "table": "t",
    }
    options = Options(raw, owner="test")
    texts = [repr(options), str(options), repr(secrets_of(options)) and ""]
    for key in ("passcode", "api_key", "token", "url"):
        for get in (options.get_int, options.get_float, options.get_bool, lambda k: options.get_choice(k, ("a", "b"))):
            try:
                get(key)
            except OptionError as exc:
                texts += [str(exc), "".join(traceback.format_exception(exc))]
    assert_hidden(password, *texts)
    assert "'table': 't'" in repr(options) and "'passcode': '***'" in repr(options)
    assert set(secrets_of(options)) >= {password, encoded}


def test_which_option_names_are_secret() -> None:
    for name in (
        "password",
        "passcode",
        "token",
        "secret",
        "api_key",
        "apiKey",
        "API-KEY",
        "sasl.password",
        "ssl.key.password",
        "ssl_key_password",
        "sasl.jaas.config",
        "delegation_token",
        "PASSWD",
    ):
        assert is_secret_name(name), name
    for name in ("url", "store", "table", "user", "topic", "sasl.mechanism", "ssl.key.location", "key_column"):
        assert not is_secret_name(name), name


def test_a_driver_quoting_its_connection_string_is_masked_whatever_the_spelling() -> None:
    # libpq and DuckDB quote the DSN; a spelling nobody predicted is masked by the setting's name
    assert redact("user='app' password='x\\'y' dbname='shop'") == "user='app' password=*** dbname='shop'"
    assert redact("CONNECT\nlogin:jet\npasscode:a\\cb\n") == "CONNECT\nlogin:jet\npasscode:***\n"
    assert redact('password authentication failed for user "app"') == 'password authentication failed for user "app"'


def test_a_client_keys_passphrase_in_a_url_or_a_connection_string_is_masked() -> None:
    # libpq's sslpassword decrypts the client key: a URL query option, quoted back in DuckDB's DSN
    url = "postgresql://app:pw@localhost/db?sslmode=verify-full&sslpassword=k%27ey%40&sslkey=/c.key"
    assert redact_url(url) == "postgresql://app:***@localhost/db?sslmode=verify-full&sslpassword=***&sslkey=/c.key"
    assert "k'ey@" in url_secrets(url)
    assert redact("host='h' sslpassword='k\\'ey' sslkey='/c.key'") == "host='h' sslpassword=*** sslkey='/c.key'"


def test_a_webhdfs_delegation_token_in_a_redirect_url_is_masked() -> None:
    # a kerberized NameNode redirects reads and writes to a DataNode with the token in the URL
    url = "https://dn:9865/webhdfs/v1/f?op=CREATE&delegation=HAAEcm9vdAByb290&namenoderpcaddress=nn:8021"
    assert redact_url(url) == "https://dn:9865/webhdfs/v1/f?op=CREATE&delegation=***&namenoderpcaddress=nn:8021"
    error = f"HTTPSConnectionPool(host='dn', port=9865): Max retries exceeded with url: {url[15:]} (Caused by ...)"
    assert "HAAEcm9vdAByb290" not in redact(error) and "delegation=***&namenoderpcaddress" in redact(error)


def test_urls_and_texts_without_secrets_are_left_alone() -> None:
    for url in ("sqlite:///tmp/a@b:c.db", "http://namenode:9870", "redis://user@h:1/0", "postgresql://h/db"):
        assert redact_url(url) == url and url_secrets(url) == ()
    assert redact("nothing secret here", ["", None]) == "nothing secret here"


# --- errors: scrubbed text in, the raw exception not chained -------------------------------------


FAST = Backoff(initial=0.001, maximum=0.002, deadline=0.03)


@settings(max_examples=40, deadline=dt.timedelta(seconds=2))
@given(PASSWORDS)
@example(CANARY)
def test_retries_exhausted_quotes_the_scrubbed_cause_and_chains_nothing(password: str) -> None:
    def refused() -> None:
        raise ConnectionError(f"login refused for password {password!r} ({quote(password)})")

    with pytest.raises(RetriesExhausted) as info:
        retry_call(refused, retry_on=(ConnectionError,), what="connecting", backoff=FAST, secrets=[password])
    error = info.value
    assert "ConnectionError: login refused" in str(error)
    assert error.__cause__ is None and error.__context__ is None
    assert_hidden(password, str(error), repr(error), "".join(traceback.format_exception(error)))


def test_without_secrets_the_last_error_is_chained_as_the_cause() -> None:
    def refused() -> None:
        raise ConnectionError("refused")

    with pytest.raises(RetriesExhausted) as info:
        retry_call(refused, retry_on=(ConnectionError,), what="connecting", backoff=FAST)
    assert isinstance(info.value.__cause__, ConnectionError)


def test_raise_unchained_leaves_no_context_even_inside_an_except_block() -> None:
    with pytest.raises(ValueError) as info:
        try:
            raise KeyError(CANARY)
        except KeyError:
            raise_unchained(ValueError("clean"))
    assert info.value.__context__ is None and info.value.__cause__ is None
    assert CANARY not in "".join(traceback.format_exception(info.value))


# --- every plugin's repr -------------------------------------------------------------------------


@settings(max_examples=25, deadline=dt.timedelta(seconds=5))
@given(PASSWORDS)
@example(CANARY)
def test_no_connector_repr_shows_its_secret(password: str) -> None:
    encoded = quote_plus(password)
    things = [
        sources.jdbc(f"postgresql+psycopg://app:{encoded}@db/shop", table="t"),
        sinks.jdbc(f"postgresql+psycopg://app:{encoded}@db/shop", table="t"),
        sources.kafka("h:9092", topics=["t"], sasl_password=password, ssl_key_password=password),
        sinks.kafka("h:9092", topic="t", **{"sasl.password": password}),
        sources.hdfs("http://nn:9870", "/x", token=password),
        sinks.hdfs("http://nn:9870", "/x", token=password),
        sources.jms_queue("q", user="jet", password=password),
        sinks.jms_queue("q", user="jet", password=password),
        sources.map("m", store=f"hazelcast://jet:{quote(password, safe='')}@127.0.0.1:5701/c"),
        sinks.map("m", store=f"hazelcast://jet:{quote(password, safe='')}@127.0.0.1:5701/c"),
        sources.map("m", store="hazelcast://127.0.0.1:5701/c", client_config={"creds_password": password}),
        sinks.cache("m", store="hazelcast://127.0.0.1:5701/c", client_config={"ssl_password": password}),
    ]
    shown = [repr(thing) for thing in things] + [repr(vars(thing).get("settings")) for thing in things]
    shown += [repr(thing.backend) for thing in things if hasattr(thing, "backend")]
    assert_hidden(password, *shown)


@dataclass
class _Client:
    config: dict


@dataclass
class _Connector:
    url: str
    password: str | None = None
    client: _Client | None = None


def test_secrets_in_finds_named_url_and_nested_config_secrets() -> None:
    connector = _Connector(
        "postgresql://u:p%40ss@db/x", password="pw1", client=_Client({"sasl.password": "pw2", "acks": "all"})
    )
    found = set(secrets_in(connector))
    assert {"pw1", "pw2", "p@ss"} <= found
    assert "all" not in found and "u" not in found
    assert secrets_in(Options({"token": "t0k"})) == ("t0k",)


def test_scrubbed_masks_the_whole_chain_and_keeps_the_type_where_it_can() -> None:
    try:
        try:
            raise KeyError(f"inner {quote(CANARY, safe='')}")
        except KeyError as inner:
            raise RuntimeError(f"outer {CANARY!r}") from inner
    except RuntimeError as outer:
        assert quotes_secret(outer, [CANARY])
        copy = scrubbed(outer, [CANARY])
    assert type(copy) is RuntimeError and copy.__cause__ is None and copy.__context__ is None
    text = "".join(traceback.format_exception(copy))
    assert CANARY not in text and quote(CANARY, safe="") not in text and "***" in text
    assert "KeyError" in text  # the cause is described, masked
    assert not quotes_secret(ValueError("nothing here"), [CANARY])


def test_a_dict_of_client_settings_keeps_its_secrets_hidden_as_a_dict_and_as_json() -> None:
    # schema_registry_config: a Python dict, or its JSON text as a Spark option
    settings = {"basic.auth.user.info": "reader:c@n#a/r%y", "timeout": 5}
    for value in (settings, json.dumps(settings)):
        shown = repr(Options({"schema_registry_config": value}, owner="kafka"))
        assert "c@n#a/r%y" not in shown and "timeout" in shown
        assert "reader:c@n#a/r%y" in secrets_of({"schema_registry_config": value})
    assert is_secret_name("schema_registry.basic.auth.user.info")
