"""URLs and driver messages never carry the password."""

from jetconnect._redaction import redact, url_secrets
from jetconnect_jdbc.engines import safe_url


def scrub(text: str, url: str) -> str:
    """What every jdbc error does with a driver's message."""
    return redact(text, url_secrets(url))


def test_safe_url_hides_the_password():
    assert safe_url("postgresql+psycopg://app:s3cr%40t@db:5432/shop") == "postgresql+psycopg://app:***@db:5432/shop"
    assert safe_url("sqlite:///tmp/x.db") == "sqlite:///tmp/x.db"


def test_scrub_removes_the_plain_and_the_url_encoded_password():
    url = "postgresql+psycopg://app:s3cr@t@db/shop"
    text = "failed for app with password s3cr@t (s3cr%40t)"
    cleaned = scrub(text, "postgresql+psycopg://app:s3cr%40t@db/shop")
    assert "s3cr" not in cleaned and cleaned.count("***") == 2
    assert scrub("nothing secret", url) == "nothing secret"


CANARY = "p'a\\s@s#w/o%rd"


def test_scrub_removes_every_spelling_a_driver_or_duckdb_may_quote():
    from urllib.parse import quote, quote_plus

    url = f"postgresql+psycopg://app:{quote_plus(CANARY)}@db/shop"
    libpq = CANARY.replace("\\", "\\\\").replace("'", "\\'")
    spellings = [
        CANARY,
        quote_plus(CANARY),
        quote(CANARY),
        libpq,
        libpq.replace("'", "''"),
        repr(CANARY),
        f"password={CANARY}",
    ]
    for text in spellings:
        cleaned = scrub(f"connect to host=db {text} failed", url)
        assert "o%rd" not in cleaned and "o%25rd" not in cleaned and "s#w" not in cleaned, (text, cleaned)
    # DuckDB quotes the whole libpq connection string: any password=... in it is masked.
    assert scrub("user='app' password='x\\'y' dbname='shop'", "sqlite://") == "user='app' password=*** dbname='shop'"
    assert safe_url(url) == "postgresql+psycopg://app:***@db/shop"


def test_a_password_with_an_unencoded_at_sign_is_refused_without_showing_it():
    from jetconnect import sinks, sources
    from jetconnect.errors import OptionError

    url = f"postgresql+psycopg://app:{CANARY}@db/shop"
    for make in (lambda: sources.jdbc(url, table="t"), lambda: sinks.jdbc(url, table="t")):
        try:
            make()
        except OptionError as exc:
            assert "unencoded '@'" in str(exc) and "'url'" in str(exc)
            assert "s#w" not in str(exc) and "p'a" not in str(exc), str(exc)
        else:
            raise AssertionError("accepted a URL SQLAlchemy would cut at the '@' inside the password")


def test_a_failed_connection_names_no_password_and_chains_no_driver_error():
    from urllib.parse import quote_plus

    from jetconnect import sources
    from jetconnect.errors import SourceError

    url = f"postgresql+psycopg://app:{quote_plus(CANARY)}@127.0.0.1:1/shop"  # nothing listens on port 1
    for use_copy in (True, False):
        # retried for retry_deadline (nothing answers: a server restarting looks the same), then refused
        source = sources.jdbc(url, table="t", schema="id long", use_copy=use_copy, retry_deadline=1)
        try:
            list(source.read_split(source.splits()[0]))
        except SourceError as exc:
            error = exc
        else:
            raise AssertionError("read from a closed port")
        assert "cannot connect" in str(error) and error.__cause__ is None and error.__context__ is None
        assert not any(part in str(error) + repr(error) for part in ("p'a", "s#w", "o%rd", "o%25rd")), str(error)
