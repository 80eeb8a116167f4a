"""Stores for the IMap integration tests: SQLite (embedded), Redis and a Redis Cluster, and
private redis-servers that a test may kill and restart without disturbing the shared ones."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import redis

STORES = {
    "sqlite": None,
    "redis": ("redis", "redis://127.0.0.1:6379/0"),
    "cluster": ("redis-cluster", "redis+cluster://127.0.0.1:7001"),
}


@pytest.fixture
def store_url(request, server, tmp_path_factory) -> str:
    """A store URL for the store named by the test's ``store`` parameter (servers started once)."""
    kind = request.param
    if STORES[kind] is None:
        return f"sqlite:///{tmp_path_factory.mktemp('imap')}/imap.db"
    server_name, url = STORES[kind]
    server(server_name)
    return url


@pytest.fixture
def name() -> Callable[[str], str]:
    """Unique map names, so tests sharing a Redis never see each other's entries."""
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:8]}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisProcess:
    """A redis-server of the test's own on a free loopback port, started with the flags of
    scripts/servers/redis.sh (plus ``extra``), that the test may SIGKILL and start again."""

    def __init__(self, directory: Path, extra: list[str], password: str | None = None, port: int | None = None) -> None:
        self.port = port or free_port()
        self.password = password
        directory.mkdir(parents=True, exist_ok=True)
        self.args = [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
            "--logfile",
            str(directory / "redis.log"),
            *extra,
        ]  # later flags win: extra may turn the append-only file on
        if password is not None:
            self.args += ["--requirepass", password]
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, password: str | None = None, query: str = "") -> str:
        """The URL of this server, its password percent-encoded (or ``password`` as given)."""
        secret = password if password is not None else (quote(self.password, safe="") if self.password else None)
        auth = f":{secret}@" if secret is not None else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0" + (f"?{query}" if query else "")

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(host="127.0.0.1", port=self.port, password=self.password, socket_connect_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"redis-server on port {self.port} did not start: {self.args}") from None
                time.sleep(0.05)
            finally:
                client.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last write, as a crash."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@pytest.fixture
def own_redis(server, tmp_path) -> Iterator[Callable[..., RedisProcess]]:
    """``own_redis(extra_flags, password=None)``: a started private redis-server, killed at the end."""
    server("redis")  # installs redis-server if it is missing
    started: list[RedisProcess] = []

    def start(extra: list[str] | None = None, password: str | None = None) -> RedisProcess:
        process = RedisProcess(tmp_path / f"redis-{len(started)}", extra or [], password)
        process.start()
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()


def _free_cluster_ports(count: int) -> list[int]:
    """Ports p with p and its cluster bus port p + 10000 both free."""
    ports: list[int] = []
    for candidate in range(21000 + os.getpid() % 4000, 30000):
        with socket.socket() as a, socket.socket() as b:
            try:
                a.bind(("127.0.0.1", candidate))
                b.bind(("127.0.0.1", candidate + 10000))
            except OSError:
                continue
        ports.append(candidate)
        if len(ports) == count:
            return ports
    raise RuntimeError("no free ports for a Redis Cluster")


@pytest.fixture
def own_cluster(server, tmp_path) -> Iterator[Callable[[list[str]], list[RedisProcess]]]:
    """``own_cluster(extra_flags)``: three private cluster nodes with the flags of
    scripts/servers/redis-cluster.sh (plus ``extra``), all slots assigned; killed at the end."""
    server("redis")
    nodes: list[RedisProcess] = []

    def start(extra: list[str]) -> list[RedisProcess]:
        for port in _free_cluster_ports(3):
            directory = tmp_path / f"cluster-{port}"
            node = RedisProcess(
                directory,
                [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    str(directory / "nodes.conf"),
                    "--cluster-node-timeout",
                    "5000",
                    *extra,
                ],
                port=port,
            )
            node.start()
            nodes.append(node)
        subprocess.run(
            [
                "redis-cli",
                "--cluster",
                "create",
                *[f"127.0.0.1:{n.port}" for n in nodes],
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        client = redis.Redis(host="127.0.0.1", port=nodes[0].port)
        deadline = time.monotonic() + 30
        while client.cluster("info").get("cluster_state") != "ok":
            if time.monotonic() > deadline:
                raise RuntimeError("the test's Redis Cluster did not reach cluster_state:ok")
            time.sleep(0.1)
        client.close()
        return nodes

    yield start
    for node in nodes:
        node.kill()
