"""URLs and driver messages never carry the password."""

from jetconnect_jdbc.engines import safe_url, scrub


def test_safe_url_hides_the_password():
    assert safe_url("postgresql+psycopg://app:s3cr%40t@db:5432/shop") == "postgresql+psycopg://app:***@db:5432/shop"
    assert safe_url("sqlite:///tmp/x.db") == "sqlite:///tmp/x.db"


def test_scrub_removes_the_plain_and_the_url_encoded_password():
    url = "postgresql+psycopg://app:s3cr@t@db/shop"
    text = "failed for app with password s3cr@t (s3cr%40t)"
    cleaned = scrub(text, "postgresql+psycopg://app:s3cr%40t@db/shop")
    assert "s3cr" not in cleaned and cleaned.count("***") == 2
    assert scrub("nothing secret", url) == "nothing secret"
