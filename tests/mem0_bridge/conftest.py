"""Mem0's own package drives these tests: its telemetry is off and its home is a temporary
folder, set before anything imports it (Mem0 reads both at import)."""

from __future__ import annotations

import os
import tempfile

os.environ["MEM0_TELEMETRY"] = "false"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-home-"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
