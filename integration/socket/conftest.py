"""A real TCP line server on 127.0.0.1, run by the test process on an asyncio loop in a thread."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest


class LineServer:
    """Sends lines to every connected client and records the lines clients send."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.writers: list[asyncio.StreamWriter] = []
        self.received: list[str] = []
        self.connections = 0
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._server = self._run(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port: int = self._server.sockets[0].getsockname()[1]

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        self.connections += 1
        try:
            while line := await reader.readline():
                self.received.append(line.decode("utf-8").rstrip("\n"))
        except ConnectionError:
            pass
        finally:
            if writer in self.writers:
                self.writers.remove(writer)

    def send(self, data: bytes) -> int:
        """Write ``data`` to every connected client; return how many got it."""

        async def broadcast() -> int:
            sent = 0
            for writer in list(self.writers):
                try:
                    writer.write(data)
                    await writer.drain()
                    sent += 1
                except ConnectionError:
                    self.writers.remove(writer)
            return sent

        return self._run(broadcast())

    def send_lines(self, lines: list[str]) -> int:
        return self.send("".join(f"{line}\n" for line in lines).encode("utf-8"))

    def wait_for_clients(self, count: int = 1, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(self.writers) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {count} client(s) connected to the line server within {timeout} s")
            time.sleep(0.05)

    def drop_clients(self) -> None:
        async def drop() -> None:
            for writer in list(self.writers):
                writer.close()
            self.writers.clear()

        self._run(drop())

    def close(self) -> None:
        self.drop_clients()
        self._server.close()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)


@pytest.fixture
def line_server() -> Iterator[LineServer]:
    server = LineServer()
    yield server
    server.close()
