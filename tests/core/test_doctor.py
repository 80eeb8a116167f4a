"""``jetconnect doctor`` without a server or a Spark session: its flags, the settings report, the
comparison of the workers' answer with the driver, and that no spelling of a secret it is given
shows in anything it prints. The runs against Spark and PostgreSQL are in
integration/examples/test_doctor.py."""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

import pytest

from jetconnect import cli
from jetconnect._connector import BatchSource, Sink
from jetconnect._doctor import DIFFERS, FAIL, OK, conf_report, parse_option, worker_report
from jetconnect._registry import ConnectorSpec, get_registry

CANARY = "c@n#a/r%y'\\x"
SPELLINGS = [CANARY, quote(CANARY, safe=""), quote_plus(CANARY), repr(CANARY)[1:-1], json.dumps(CANARY)[1:-1]]


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = cli.main(["doctor", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_an_option_is_split_at_its_first_equals_sign() -> None:
    assert parse_option("table=orders") == ("table", "orders")
    assert parse_option(" query =select 1 where a = b") == ("query", "select 1 where a = b")
    assert parse_option("password=") == ("password", "")


@pytest.mark.parametrize(
    "args",
    [
        ["--option", "no-equals-sign"],
        ["--option", "=value"],
        ["--source", "jdbc", "--sink", "jdbc"],
        ["--master", "local[1]", "--remote", "sc://127.0.0.1:15002"],
        ["--conf", "spark.python.worker.reuse"],
    ],
)
def test_malformed_arguments_are_refused_by_the_parser(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["doctor", *args])
    assert exit_.value.code == 2
    assert "usage: jetconnect doctor" in capsys.readouterr().err


def test_an_error_on_a_malformed_option_does_not_quote_its_value(capsys: pytest.CaptureFixture[str]) -> None:
    # "password" + a value with no '=': argparse quotes what it refuses, so it must not be the value
    with pytest.raises(SystemExit):
        cli.main(["doctor", "--option", f"password:{CANARY}"])
    assert not any(s in capsys.readouterr().err for s in SPELLINGS)


def test_options_without_a_connector_fail(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = doctor(capsys, "--skip-spark", "--option", "table=t")
    assert code == 1 and "[FAIL] options: --option needs --source NAME or --sink NAME" in out


def test_an_unknown_connector_fails_naming_the_installed_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = doctor(capsys, "--skip-spark", "--source", "no_such_source")
    assert code == 1
    assert "[FAIL] source no_such_source: not installed; sources:" in out and "items" in out


def test_the_settings_report_compares_with_the_recommended_values_and_sparks_defaults() -> None:
    recommended = {"spark.python.worker.reuse": "true", "spark.python.unix.domain.socket.enabled": "true"}
    both = conf_report(
        {"spark.python.worker.reuse": "true", "spark.python.unix.domain.socket.enabled": "TRUE"}, recommended
    )
    assert [c.status for c in both] == [OK, OK]
    unset = conf_report({}, recommended)
    # worker reuse is Spark's default; Unix sockets are not
    assert [c.status for c in unset] == [OK, DIFFERS]
    assert unset[1].line() == (
        "[differs] spark.python.unix.domain.socket.enabled: unset, Spark's default false; "
        "recommended true (set it when the session is built)"
    )
    off = conf_report({"spark.python.worker.reuse": "false"}, recommended)[0]
    assert off.status == DIFFERS and off.detail.startswith("false; recommended true")


def test_the_settings_report_covers_every_recommended_setting() -> None:
    from jetconnect.spark import RECOMMENDED_SPARK_CONF

    assert [c.what for c in conf_report({})] == list(RECOMMENDED_SPARK_CONF)
    assert all(c.status == OK for c in conf_report(dict(RECOMMENDED_SPARK_CONF)))


def test_the_workers_report_fails_on_a_missing_module_or_another_version() -> None:
    from jetconnect import __version__

    wanted = {
        "jetconnect": ("jetconnect", "jetconnect"),
        "plugin kafka": ("jetconnect_kafka.plugin", "jetconnect-kafka"),
        "pyarrow": ("pyarrow", "pyarrow"),
    }
    answer = (
        "/usr/bin/python3",
        [None, "ModuleNotFoundError: No module named 'jetconnect_kafka'", None],
        [__version__, None, "0.0.1"],
    )
    checks = worker_report(wanted, answer)
    lines = [c.line() for c in checks]
    assert checks[0].status == OK and "/usr/bin/python3" in lines[0]
    assert checks[1].status == OK
    assert lines[2] == "[FAIL] plugin kafka on the workers: ModuleNotFoundError: No module named 'jetconnect_kafka'"
    assert checks[3].status == FAIL and "pyarrow 0.0.1 there" in lines[3]
    assert checks[4].status == FAIL and "PYSPARK_PYTHON=" in lines[4]


class _Leaky(BatchSource):
    """A source whose driver quotes the password back, as careless drivers do."""

    name = "leaky"

    def __init__(self, password: str, fail_in: str = "schema") -> None:
        self.password, self.fail_in = password, fail_in

    def _fail(self) -> None:
        raise ConnectionError(
            f"login refused: password={self.password!r}, url=db://u:{quote(self.password, safe='')}@h, "
            f"json {json.dumps(self.password)}, plus {quote_plus(self.password)}"
        )

    def schema(self):  # type: ignore[no-untyped-def]
        if self.fail_in == "schema":
            self._fail()
        from pyspark.sql.types import LongType, StructField, StructType

        return StructType([StructField("n", LongType())])

    def splits(self) -> list[int]:
        self._fail()
        return []

    def read_split(self, split):  # type: ignore[no-untyped-def]
        return iter(())


def _fails_to_build(password: str) -> _Leaky:
    raise PermissionError(f"cannot log in with {password} ({password!r})")


@pytest.mark.parametrize("factory, fail_in", [(_Leaky, "schema"), (_Leaky, "splits"), (_fails_to_build, "build")])
def test_no_spelling_of_a_password_shows_in_the_output(
    factory,
    fail_in: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    spec = ConnectorSpec("source", "leaky", factory, "test", "0")
    monkeypatch.setitem(get_registry().sources, "leaky", spec)
    args = ["--skip-spark", "--source", "leaky", "--option", f"password={CANARY}"]
    if fail_in != "build":
        args += ["--option", f"fail_in={fail_in}"]
    code, out = doctor(capsys, *args)
    assert code == 1
    failed = next(line for line in out.splitlines() if line.startswith("[FAIL]"))
    assert ("PermissionError" if fail_in == "build" else "ConnectionError: login refused") in failed
    assert "***" in failed
    if fail_in != "build":
        assert '"password": "***"' in out  # the options echoed after the build
    leaked = [s for s in SPELLINGS if s in out]
    assert not leaked, out


def test_a_password_in_a_url_option_is_masked_too(capsys: pytest.CaptureFixture[str]) -> None:
    # nothing listens on port 1: the jdbc source fails to connect (after its retry_deadline: a server
    # restarting looks the same), and its URL is shown without the password
    url = f"postgresql+psycopg://someone:{quote_plus(CANARY)}@127.0.0.1:1/db"
    options = ["--option", f"url={url}", "--option", "table=t", "--option", "retry_deadline=1"]
    code, out = doctor(capsys, "--skip-spark", "--source", "jdbc", *options)
    assert code == 1
    assert "[FAIL] source jdbc: schema():" in out and "someone:***@127.0.0.1:1" in out
    assert not [s for s in SPELLINGS if s in out], out


def test_a_sink_is_built_and_said_not_to_be_contacted(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, out = doctor(capsys, "--skip-spark", "--sink", "files", "--option", f"directory={tmp_path}")
    assert code == 0
    assert "[ok] sink files: build from the options" in out and "[ok] sink files: not contacted" in out
    assert out.rstrip().endswith("jetconnect doctor: all checks passed")


class _CheckedSink(Sink):
    """A sink whose server check succeeds or fails as its options say, quoting the password."""

    name = "checked"

    def __init__(self, password: str = "", refuse: bool = False) -> None:
        self.password, self.refuse = password, refuse

    def check_connection(self) -> str | None:
        if self.refuse:
            raise PermissionError(f"authentication refused for password {self.password!r}")
        return "reachable, authenticated"

    def write_partition(self, data, ctx):  # type: ignore[no-untyped-def]
        return None


@pytest.mark.parametrize("refuse", [False, True])
def test_a_sink_with_a_connection_check_is_contacted(
    refuse: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(get_registry().sinks, "checked", ConnectorSpec("sink", "checked", _CheckedSink, "test", "0"))
    args = ["--skip-spark", "--sink", "checked", "--option", f"password={CANARY}"]
    code, out = doctor(capsys, *args, *(["--option", "refuse=true"] if refuse else []))
    if refuse:
        assert code == 1 and "[FAIL] sink checked: check_connection(): PermissionError: authentication refused" in out
    else:
        assert code == 0 and "[ok] sink checked: check_connection(): reachable, authenticated" in out
    assert not [s for s in SPELLINGS if s in out], out
