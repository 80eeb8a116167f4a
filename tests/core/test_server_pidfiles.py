"""The server scripts' pidfiles (scripts/servers/_server.sh): a pidfile left by a server that died
with its machine's session must never make another process, which has since taken its pid, pass
for that server, nor be signalled by ``stop``. CI failed once on exactly that: a stale
``member2.pid`` named a live process, so ``hazelcast.sh start`` launched only two members."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER_SH = Path(__file__).resolve().parents[2] / "scripts" / "servers" / "_server.sh"

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def sh(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in bash with _server.sh's helpers loaded."""
    return subprocess.run(
        ["bash", "-c", f'source "{SERVER_SH}"; {script}', "test", *args], capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A live process that is not the server: what a recycled pid names."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process
    process.kill()
    process.wait()


def test_a_pidfile_written_for_a_process_names_it_while_it_runs(tmp_path, bystander) -> None:
    pidfile = tmp_path / "server.pid"
    assert sh('write_pidfile "$1" "$2"', str(pidfile), str(bystander.pid)).returncode == 0
    answer = sh('pid_of "$1"', str(pidfile))
    assert answer.returncode == 0 and answer.stdout.strip() == str(bystander.pid)
    assert sh('pid_alive "$1"', str(pidfile)).returncode == 0


@pytest.mark.parametrize(
    "content",
    ["{pid}\n", "{pid} 1\n", "{pid} gone\n", "", "not-a-pid\n"],
    ids=["old format, pid only", "another start time", "exited before it was recorded", "empty", "garbage"],
)
def test_a_pidfile_naming_a_process_that_is_not_the_recorded_one_is_not_alive(tmp_path, bystander, content) -> None:
    pidfile = tmp_path / "server.pid"
    pidfile.write_text(content.format(pid=bystander.pid))
    assert sh('pid_alive "$1"', str(pidfile)).returncode == 1
    assert sh('pid_of "$1"', str(pidfile)).stdout == ""


def test_stop_pid_removes_a_stale_pidfile_and_signals_nobody(tmp_path, bystander) -> None:
    pidfile = tmp_path / "server.pid"
    pidfile.write_text(f"{bystander.pid} 1\n")
    assert sh('stop_pid "$1" 1 --group', str(pidfile)).returncode == 0
    assert not pidfile.exists()
    assert bystander.poll() is None, "stop_pid signalled a process that was not the server"


def test_stop_pid_stops_the_recorded_process(tmp_path, bystander) -> None:
    pidfile = tmp_path / "server.pid"
    sh('write_pidfile "$1" "$2"', str(pidfile), str(bystander.pid))
    assert sh('stop_pid "$1" 5', str(pidfile)).returncode == 0
    assert bystander.wait(timeout=10) != 0
    assert not pidfile.exists()


def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields(tmp_path) -> None:
    # /proc/PID/stat's second field is the command name in parentheses, which may hold both
    oddly_named = tmp_path / "a b) (c"
    oddly_named.symlink_to(sys.executable)
    process = subprocess.Popen([str(oddly_named), "-c", "import time; time.sleep(60)"])
    try:
        pidfile = tmp_path / "server.pid"
        sh('write_pidfile "$1" "$2"', str(pidfile), str(process.pid))
        recorded = pidfile.read_text().split()
        expected = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        assert recorded == [str(process.pid), expected]
        assert sh('pid_alive "$1"', str(pidfile)).returncode == 0
    finally:
        process.kill()
        process.wait()
