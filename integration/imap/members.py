"""A Hazelcast member a test starts, kills and restarts itself, apart from the shared cluster of
scripts/servers/hazelcast.sh: one member on its own port and cluster name, configured as a
test needs it (a journal or none, defaults as a user's cluster has them), loopback only.

``Member.start()`` waits until a client is admitted; ``kill()`` is a SIGKILL (the member comes
back *empty* on the next ``start()``: no persistence); ``stop()`` ends it for good.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from hazelcast import HazelcastClient

_JDK_FLAGS = [  # those of Hazelcast's own start script for Java 9+
    "--add-modules",
    "java.se",
    "--add-exports",
    "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang=ALL-UNNAMED",
    "--add-opens",
    "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens",
    "java.management/sun.management=ALL-UNNAMED",
    "--add-opens",
    "jdk.management/com.sun.management.internal=ALL-UNNAMED",
]


def member_yaml(
    port: int,
    cluster: str,
    journal: bool,
    factories: dict[int, str] | None = None,
    peers: tuple[int, ...] = (),
) -> str:
    """A member's configuration: Hazelcast's defaults but for what keeps it on loopback and quick
    (no multicast, no auto-detection, no phone-home, small thread pools), with every map's and
    cache's event journal on or, like a cluster nobody configured for jetconnect, none. ``peers``:
    the ports of the other members it joins (none: a cluster of one)."""
    journals = (
        """
  map:
    default:
      event-journal:
        enabled: true
        capacity: 271000
  cache:
    "*":
      event-journal:
        enabled: true
        capacity: 271000
"""
        if journal
        else ""
    )
    serialization = "".join(
        f"\n      - factory-id: {factory}\n        class-name: {name}" for factory, name in (factories or {}).items()
    )
    if serialization:
        serialization = f"\n  serialization:\n    data-serializable-factories:{serialization}\n"
    members = "\n".join(f"          - 127.0.0.1:{member}" for member in (port, *peers))
    return f"""hazelcast:
  cluster-name: {cluster}
  properties:
    hazelcast.phone.home.enabled: false
    hazelcast.socket.bind.any: false
    hazelcast.logging.type: jdk
    hazelcast.wait.seconds.before.join: 0
    hazelcast.partition.operation.thread.count: 2
    hazelcast.operation.generic.thread.count: 2
    hazelcast.io.thread.count: 1
  network:
    port:
      port: {port}
      auto-increment: false
    interfaces:
      enabled: true
      interfaces:
        - 127.0.0.1
    join:
      auto-detection:
        enabled: false
      multicast:
        enabled: false
      tcp-ip:
        enabled: true
        member-list:
{members}
{journals}{serialization}"""


@dataclass
class Member:
    """One member on 127.0.0.1:``port``, of a cluster of one or with its ``peers``' ports."""

    classpath: str
    workdir: Path
    port: int
    cluster: str = "solo"
    journal: bool = True
    heap: str = "256m"
    #: Jars of the user's own classes for the member's classpath, and their factories to register.
    extra_classpath: tuple[str, ...] = ()
    factories: dict[int, str] = field(default_factory=dict)
    peers: tuple[int, ...] = ()
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"hazelcast://127.0.0.1:{self.port}/{self.cluster}"

    def start(self, timeout: float = 120) -> Member:
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "member.yaml"
        config.write_text(member_yaml(self.port, self.cluster, self.journal, self.factories, self.peers))
        logging_file = self.workdir / "logging.properties"
        logging_file.write_text("handlers=java.util.logging.ConsoleHandler\n.level=WARNING\n")
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
        log = open(self.workdir / "member.log", "ab")  # noqa: SIM115 - the member writes it while it runs
        self.process = subprocess.Popen(
            [
                java,
                "-Xms32m",
                f"-Xmx{self.heap}",
                *_JDK_FLAGS,
                f"-Dhazelcast.config={config}",
                "-Dhazelcast.phone.home.enabled=false",
                f"-Djava.util.logging.config.file={logging_file}",
                "-cp",
                os.pathsep.join([self.classpath, *self.extra_classpath]),
                "com.hazelcast.core.server.HazelcastMemberStarter",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"member on {self.port} exited: {(self.workdir / 'member.log').read_text()[-3000:]}")
            if self.admits():
                return self
            time.sleep(0.2)
        raise RuntimeError(f"member on {self.port} did not admit a client within {timeout} s")

    def admits(self) -> bool:
        """Whether a client of the member's cluster is admitted now (as a user's would be)."""
        logging.disable(logging.WARNING)  # every failed attempt logs a warning
        try:
            client = HazelcastClient(
                cluster_name=self.cluster,
                cluster_members=[f"127.0.0.1:{self.port}"],
                cluster_connect_timeout=1,
            )
        except Exception:
            return False
        finally:
            logging.disable(logging.NOTSET)
        client.shutdown()
        return True

    def kill(self) -> None:
        """SIGKILL: no goodbye; what the member held is gone."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)
        self.process = None

    stop = kill
