"""One charset check for every connector that finds lines by their byte ``\\n`` (issue #21)."""

from __future__ import annotations

import pytest

from jetconnect._charsets import check_charset
from jetconnect.errors import OptionError


def test_names_are_normalised_and_ascii_compatible_charsets_pass():
    assert check_charset("UTF8") == "utf-8"
    assert check_charset("Latin-1") == "iso8859-1"
    assert check_charset("cp1252") == "cp1252"


@pytest.mark.parametrize(
    "charset, why",
    [
        ("utf-16", "does not encode newline as one byte"),
        ("utf-32-le", "does not encode newline"),
        ("no-such-charset", "unknown charset"),
        (16, "a charset is a name"),
    ],
)
def test_a_charset_lines_cannot_be_found_in_is_an_option_error_naming_owner_and_option(charset, why):
    with pytest.raises(OptionError, match=rf"^hdfs: option 'charset': .*{why}"):
        check_charset(charset, owner="hdfs")


def test_every_connector_of_lines_uses_it():
    """The files source, stream and sink, the HDFS source and sink and the socket source and sink all
    refuse UTF-16 with the same words (the socket plugin once took any known codec)."""
    from jetconnect import sinks, sources

    url = "http://127.0.0.1:1"  # never contacted: options are checked when the connector is built
    builds = {
        "files source": lambda: sources.files(directory="/tmp", charset="utf-16"),
        "file_watcher": lambda: sources.file_watcher(directory="/tmp", charset="utf-16"),
        "files sink": lambda: sinks.files(directory="/tmp", charset="utf-16"),
        "hdfs source": lambda: sources.hdfs(url, "/in", charset="utf-16"),
        "hdfs sink": lambda: sinks.hdfs(url, "/out", charset="utf-16"),
        "socket source": lambda: sources.socket("127.0.0.1", 1, charset="utf-16"),
        "socket sink": lambda: sinks.socket("127.0.0.1", 1, charset="utf-16"),
    }
    for what, build in builds.items():
        with pytest.raises(OptionError, match="option 'charset': charset 'utf-16' does not encode newline as one byte"):
            build()
            pytest.fail(f"{what} took utf-16")
