"""The load test's processes: started in their own process groups, watched, stopped; the CPU
each part of the stack uses; the exceptions they logged. No Django import (run.py's helper)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import psutil

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "var" / "loadtest"
LOGS = OUT / "logs"


class HarnessError(Exception):
    """The load test itself failed (not a goal): exit non-zero."""


# --- Processes -----------------------------------------------------------------------------


@dataclass
class Stack:
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    logs: list[TextIO] = field(default_factory=list)

    def start(self, name: str, command: list[str], env: dict[str, str]) -> None:
        output = open(LOGS / f"{name}.log", "w")  # noqa: SIM115  (closed in stop())
        self.logs.append(output)
        self.processes[name] = subprocess.Popen(  # noqa: S603  (our own commands)
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def check_alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise HarnessError(
                    f"{name} exited with {process.returncode}; see {LOGS / (name + '.log')}"
                )

    def stop(self) -> None:
        """SIGTERM to each process group, SIGKILL after 20 s; only the groups we started."""
        for process in self.processes.values():
            if process.poll() is None:
                with suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for output in self.logs:
            output.close()
        self.processes.clear()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_health(url: str, stack: Stack, timeout: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        stack.check_alive()
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310  (loopback)
                if response.status == 200:
                    return json.loads(response.read())
                last = str(response.status)
        except urllib.error.HTTPError as error:
            last = str(error.code)
        except OSError as error:
            last = type(error).__name__
        time.sleep(1)
    raise HarnessError(f"{url} did not answer 200 within {timeout:.0f} s (last: {last})")


def run_step(command: list[str], env: dict[str, str], name: str, timeout: float) -> None:
    with open(LOGS / f"{name}.log", "w") as output:
        done = subprocess.run(  # noqa: S603  (our own commands)
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
            timeout=timeout, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise HarnessError(f"{name} failed ({done.returncode}); see {LOGS / (name + '.log')}")


# --- CPU per part of the stack ---------------------------------------------------------------


class CpuMeter:
    """CPU of each part of the stack (process trees) over a phase, sampled every second so
    that processes which exit during it (a PostgreSQL backend, a restarted worker) count."""

    def __init__(self, roots: dict[str, int]) -> None:
        self.roots = roots
        self.seen: dict[str, dict[int, float]] = {}
        self.first: dict[str, dict[int, float]] = {}
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def _read(self) -> dict[str, dict[int, float]]:
        parts: dict[str, dict[int, float]] = {}
        for name, pid in self.roots.items():
            parts[name] = {}
            with suppress(psutil.Error):
                root = psutil.Process(pid)
                for process in [root, *root.children(recursive=True)]:
                    with suppress(psutil.Error):
                        times = process.cpu_times()
                        parts[name][process.pid] = times.user + times.system
        return parts

    def _machine(self) -> float:
        machine = psutil.cpu_times()
        return sum(machine) - machine.idle - getattr(machine, "iowait", 0.0)

    def _sample(self) -> None:
        while not self.stopping.wait(1.0):
            for name, pids in self._read().items():
                self.seen[name].update(pids)

    def start(self) -> None:
        self.first = self._read()
        self.seen = {name: dict(pids) for name, pids in self.first.items()}
        self.started = time.monotonic(), self._machine()
        self.stopping.clear()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def stop(self, locust_seconds: float) -> str:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join()
        for name, pids in self._read().items():
            self.seen[name].update(pids)
        seconds = max(time.monotonic() - self.started[0], 1e-9)
        machine = (self._machine() - self.started[1]) / seconds
        used = {
            name: sum(cpu - self.first[name].get(pid, 0.0) for pid, cpu in pids.items()) / seconds
            for name, pids in self.seen.items()
        }
        used["locust"] = locust_seconds / seconds
        other = max(0.0, machine - sum(used.values()))
        shown = ", ".join(f"{name} {cores:.2f}" for name, cores in used.items())
        return (
            f"CPU in cores: {shown}, other processes {other:.2f}; "
            f"machine {machine:.2f} of {os.cpu_count()}"
        )


_JOB_FAILED = re.compile(r"Ingest job \S+ failed: (\w+)")
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Detected|Timeout)): ")


def logged_exceptions() -> Counter[str]:
    """Final lines of the tracebacks in the web and worker logs, by exception class."""
    found: Counter[str] = Counter()
    for name in ("gunicorn", "celery-worker", "celery-beat"):
        with suppress(OSError), open(LOGS / f"{name}.log", errors="replace") as handle:
            for line in handle:
                match = _EXCEPTION_LINE.match(line)
                if match:
                    found[f"{name}: {match.group(1)}"] += 1
                job = _JOB_FAILED.search(line)
                if job:
                    found[f"{name}: ingest job failed with {job.group(1)}"] += 1
        with suppress(OSError), open(LOGS / f"{name}.log", errors="replace") as handle:
            timeouts = sum("WORKER TIMEOUT" in line for line in handle)
            if timeouts:
                found[f"{name}: WORKER TIMEOUT"] += timeouts
    return found
