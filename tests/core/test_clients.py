"""The per-process client cache: one client per key, none shared with a forked child."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from jetconnect._clients import ClientCache


class EchoServer:
    """A TCP server on loopback answering each line with ``<pid of the sender's client>:<line>``."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn, conn.makefile("rwb") as stream:
            for line in stream:
                stream.write(b"echo " + line)
                stream.flush()

    def close(self) -> None:
        self.listener.close()


class Client:
    """A real socket client that remembers which process made it."""

    def __init__(self, port: int) -> None:
        self.pid = os.getpid()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.stream = self.sock.makefile("rwb")
        self.closed = False

    def ask(self, text: str) -> str:
        self.stream.write(text.encode() + b"\n")
        self.stream.flush()
        return self.stream.readline().decode().strip()

    def close(self) -> None:
        self.closed = True
        self.stream.close()
        self.sock.close()


@pytest.fixture()
def server():
    s = EchoServer()
    yield s
    s.close()


def _in_child(body) -> int:
    """Run ``body()`` in a forked child; its exit status (0: it returned True) within 20 s."""
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 1
        try:
            import signal

            signal.alarm(20)  # a deadlock in the child must fail the test, not hang it
            code = 0 if body() else 3
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_one_client_per_key_made_once():
    made = []
    cache: ClientCache[str, object] = ClientCache("test", on_close=made.remove)

    def factory():
        made.append(object())
        return made[-1]

    a = cache.get("a", factory)
    assert cache.get("a", factory) is a and len(made) == 1
    b = cache.get("b", factory)
    assert b is not a and len(cache) == 2 and "b" in cache
    assert cache.pop("b") is b and "b" not in cache
    cache.close_all()
    assert made == [b] and len(cache) == 0  # close_all closed a; b had been popped


def test_a_cached_client_no_longer_alive_is_closed_and_made_again():
    closed: list[dict] = []
    cache: ClientCache[str, dict] = ClientCache("test", on_close=closed.append, alive=lambda c: c["up"])
    first = cache.get("a", lambda: {"up": True, "n": 1})
    assert cache.get("a", lambda: {"up": True, "n": 2}) is first  # alive: the same one
    first["up"] = False  # it gave up on its server (an outage longer than its reconnect window)
    second = cache.get("a", lambda: {"up": True, "n": 2})
    assert second["n"] == 2 and closed == [first] and cache.get("a", lambda: {"n": 3}) is second

    def failing_close(client: dict) -> None:
        raise RuntimeError("already shut down")

    quiet: ClientCache[str, dict] = ClientCache("test", on_close=failing_close, alive=lambda c: c["up"])
    quiet.get("a", lambda: {"up": False})
    assert quiet.get("a", lambda: {"up": True})["up"]  # a close that fails does not stop the new one


def test_concurrent_tasks_get_one_client():
    calls = []
    cache: ClientCache[str, object] = ClientCache("test")
    start = threading.Barrier(8)

    def factory():
        calls.append(1)
        time.sleep(0.05)  # widen the window in which a second builder would slip in
        return object()

    got = []

    def task():
        start.wait()
        got.append(cache.get("url", factory))

    threads = [threading.Thread(target=task) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(g) for g in got}) == 1


def test_the_factory_may_use_the_cache_for_another_key():
    cache: ClientCache[str, str] = ClientCache("test")
    assert cache.get("outer", lambda: cache.get("inner", lambda: "i") + "o") == "io"


def test_a_forked_child_gets_a_fresh_client_and_leaves_the_parents_alone(server):
    closed_in_child = []
    cache: ClientCache[str, Client] = ClientCache("test", on_close=lambda c: (closed_in_child.append(c), c.close()))
    parent = cache.get("server", lambda: Client(server.port))
    assert parent.ask("one") == "echo one"

    def child() -> bool:
        mine = cache.get("server", lambda: Client(server.port))
        fresh = mine is not parent and mine.pid == os.getpid() and mine.sock.fileno() != parent.sock.fileno()
        answered = mine.ask("from child") == "echo from child"
        cache.close_all()  # closes the child's client only
        return fresh and answered and closed_in_child == [mine] and not parent.closed

    assert _in_child(child) == 0
    # the child's connection was its own: the parent's socket still talks, in step
    assert server.accepted == 2
    assert parent.ask("two") == "echo two"
    assert cache.get("server", lambda: Client(server.port)) is parent
    cache.close_all()
    assert parent.closed


def test_a_fork_while_another_thread_builds_a_client_does_not_deadlock_the_child():
    cache: ClientCache[str, str] = ClientCache("test")
    building, release = threading.Event(), threading.Event()

    def slow_factory() -> str:
        building.set()
        release.wait(10)
        return "parent's"

    holder = threading.Thread(target=lambda: cache.get("k", slow_factory))
    holder.start()
    assert building.wait(10)  # the parent's lock is held by `holder` now
    try:
        # In the child `holder` does not exist: with the parent's lock the child would wait forever.
        assert _in_child(lambda: cache.get("k", lambda: "child's") == "child's") == 0
    finally:
        release.set()
        holder.join()
    assert cache.get("k", lambda: "again") == "parent's"
