from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.pipeline.llm_server import DEFAULT_MODEL, LlmServer, LlmServerUnavailable


class Command(BaseCommand):
    help = (
        "Serve a GGUF model on 127.0.0.1 as an OpenAI-compatible endpoint (llama.cpp; "
        "`make llm` installs it and the default model) and print the settings that point "
        "the LLM extractor at it. Runs until Ctrl-C."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8091)
        parser.add_argument(
            "--model", type=Path, default=DEFAULT_MODEL, help="a GGUF file (default: SmolLM2-135M)"
        )
        parser.add_argument(
            "--threads", type=int, default=1, help="generation threads (1 on a shared machine)"
        )
        parser.add_argument("--ctx", type=int, default=2048, help="context length in tokens")

    def handle(
        self, *args: Any, port: int, model: Path, threads: int, ctx: int, **options: Any
    ) -> None:
        server = LlmServer(model=model.resolve(), port=port, threads=threads, context=ctx)
        try:
            server.start()
        except LlmServerUnavailable as error:
            raise CommandError(f"The LLM server did not start: {error}") from None
        self.stdout.write(
            f"Serving {server.model} at {server.url} (llama.cpp's log: {server.log}).\n"
            "Point MemoryHub at it with:\n"
            "  export MEMORYHUB_EXTRACTOR=llm\n"
            f"  export MEMORYHUB_LLM_URL={server.url}\n"
            f"  export MEMORYHUB_LLM_MODEL={server.model_name}\n"
            "Ctrl-C stops it."
        )
        # `kill` (SIGTERM) stops the server as Ctrl-C does.
        previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            assert server.process is not None
            server.process.wait()
            raise CommandError(
                f"The LLM server exited with status {server.process.returncode}:\n"
                f"{server.log_tail()}"
            )
        except KeyboardInterrupt:
            self.stdout.write("Stopping the LLM server.")
        finally:
            signal.signal(signal.SIGTERM, previous)
            server.stop()
