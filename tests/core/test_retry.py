"""Retries with backoff: what is retried, what is not, and what the final error says."""

import pytest

from jetconnect._retry import Backoff, RetriesExhausted, retry_call

FAST = Backoff(initial=0.001, maximum=0.002, deadline=0.05)


def test_retries_transient_errors_until_success():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("refused")
        return "ok"

    assert retry_call(flaky, retry_on=(ConnectionError,), what="connect", backoff=FAST) == "ok"
    assert len(calls) == 3


def test_gives_up_with_what_and_last_error_and_masks_secrets():
    def always():
        raise ConnectionError("refused by user:s3cret@db")

    with pytest.raises(
        RetriesExhausted,
        match=r"connecting to db failed \d+ time\(s\) over .* last error: ConnectionError: refused by user:\*\*\*@db",
    ) as info:
        retry_call(always, retry_on=(ConnectionError,), what="connecting to db", backoff=FAST, secrets=["s3cret"])
    # the caller said errors may quote a secret: the raw one is not chained (tracebacks show chains)
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_other_errors_and_rejected_ones_are_raised_at_once():
    with pytest.raises(KeyError):
        retry_call(lambda: {}["x"], retry_on=(ConnectionError,), what="x", backoff=FAST)
    calls = []

    def permanent():
        calls.append(1)
        raise ConnectionError("permanent")

    with pytest.raises(ConnectionError):
        retry_call(
            permanent, retry_on=(ConnectionError,), retry_if=lambda e: "transient" in str(e), what="x", backoff=FAST
        )
    assert len(calls) == 1
