"""The contrib http_poll source refuses a bad option with the OptionError its docs promise."""

from __future__ import annotations

import pytest

from jetconnect import sources
from jetconnect.errors import JetconnectError, OptionError
from jetconnect_http_poll import http_poll


@pytest.mark.parametrize("interval_ms", [0, -5, True, 2.5])
def test_a_bad_interval_is_an_option_error_naming_it(interval_ms: object) -> None:
    with pytest.raises(OptionError, match=r"http_poll: option 'interval_ms' must be") as caught:
        http_poll("http://127.0.0.1:1/", interval_ms=interval_ms)  # type: ignore[arg-type]
    assert caught.value.option == "interval_ms"
    assert isinstance(caught.value, JetconnectError)


def test_the_registered_source_refuses_it_the_same_way() -> None:
    with pytest.raises(OptionError, match=r"option 'interval_ms'"):
        sources.http_poll("http://127.0.0.1:1/", interval_ms=0)


def test_a_good_interval_builds_the_source() -> None:
    source = http_poll("http://127.0.0.1:1/", interval_ms=1)
    assert source.name == "http_poll"


@pytest.mark.parametrize("timeout_s", [0, -1.0, float("nan")])
def test_a_bad_timeout_is_an_option_error_naming_it(timeout_s: float) -> None:
    with pytest.raises(OptionError, match=r"option 'timeout_s'"):
        sources.http_poll("http://127.0.0.1:1/", timeout_s=timeout_s)
