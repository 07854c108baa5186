"""A `redis-server` of a test's own, on 127.0.0.1, that the test may stop and start again
(the shared Redis of the other tests is never stopped)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import redis

from tests.conftest import stop_process


class RedisServer:
    """Saves nothing (no RDB, no AOF): stopped, it loses every message it held, as a broker
    without persistence does when it crashes. Its log is `redis.log` in `directory`."""

    def __init__(self, executable: str, directory: Path) -> None:
        self.executable = executable
        self.directory = directory
        self.port = 0
        self.process: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=2)

    def start(self, timeout: float = 10.0) -> None:
        """Serve on `port`: the same one again after a stop; a port the kernel just handed
        out the first time (redis-server cannot be given a listening socket)."""
        if not self.port:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self.port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            [
                self.executable, "--bind", "127.0.0.1", "--port", str(self.port),
                "--save", "", "--appendonly", "no", "--dir", str(self.directory),
                "--logfile", str(self.directory / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not self._answers():
            assert time.monotonic() < deadline, f"redis-server did not answer: {self.log()}"
            time.sleep(0.05)

    def _answers(self) -> bool:
        assert self.process is not None
        assert self.process.poll() is None, f"redis-server exited: {self.log()}"
        try:
            return bool(self.client().ping())
        except redis.ConnectionError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def log(self) -> str:
        path = self.directory / "redis.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""
