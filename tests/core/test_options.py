"""Options: typed getters whose errors name the option, and secrets kept out of messages."""

import pytest

from jetconnect import OptionError, Options


def test_case_insensitive_typed_getters():
    opts = Options({"maxRecords": "10", "Enabled": "true", "topics": '["a", "b"]', "hosts": "x, y"}, owner="source 'k'")
    assert opts.get_int("maxrecords") == 10
    assert opts.get_bool("ENABLED") is True
    assert opts.get_list("topics") == ["a", "b"]
    assert opts.get_list("hosts") == ["x", "y"]
    assert opts.get_int("missing", 5) == 5


def test_errors_name_owner_option_and_value():
    opts = Options({"port": "eighty"}, owner="sink 'socket'")
    with pytest.raises(OptionError, match=r"sink 'socket': option 'port' must be a whole number, got 'eighty'"):
        opts.get_int("port")
    with pytest.raises(OptionError, match=r"option 'host' is required"):
        opts.get_str("host")
    with pytest.raises(OptionError, match=r"must be at least 1, got 0"):
        Options({"n": "0"}).get_int("n", minimum=1)


def test_secret_values_never_shown():
    opts = Options({"sasl.password": "hunter2", "password": "x"})
    with pytest.raises(OptionError) as info:
        opts.get_int("sasl.password")
    assert "hunter2" not in str(info.value)
    assert "hunter2" not in repr(opts)


def test_non_string_values_become_option_strings():
    opts = Options({"flag": True, "n": 3, "items": [1, 2]})
    assert opts["flag"] == "true" and opts["n"] == "3" and opts.get_json("items") == [1, 2]
