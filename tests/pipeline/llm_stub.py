"""A small OpenAI-compatible chat-completions server on loopback, for tests (never a real
endpoint). `mode` decides each answer: ok (the JSON in `reply`), garbage, down (503), refuse (401),
slow, llama (a 500 to the OpenAI schema form, as llama.cpp's server answers), cut (the
answer cut short by max_tokens)."""

from __future__ import annotations

import time
from typing import Any

from tests.loopback import LoopbackStub


class StubLlm(LoopbackStub):
    def __init__(self) -> None:
        super().__init__()
        self.mode = "ok"
        self.reply: str = '{"memories": []}'

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | bytes]:
        if path != "/v1/chat/completions":
            return 404, {"error": "not found"}
        if self.mode == "down":
            return 503, {"error": "overloaded"}
        if self.mode == "refuse":
            return 401, {"error": "bad key"}
        if self.mode == "slow":
            time.sleep(1.5)
        if self.mode == "llama" and body.get("response_format", {}).get("type") == "json_schema":
            return 500, {"error": "llama.cpp's server takes its own schema form"}
        content = "certainly! here are the memories: ..." if self.mode == "garbage" else self.reply
        finished = "length" if self.mode == "cut" else "stop"
        message = {"role": "assistant", "content": content}
        return 200, {"choices": [{"message": message, "finish_reason": finished}]}
