"""Quickstart secrets: generated once, kept with 0600 permissions in the data directory.

Only used when DEBUG is on and the secret is not given in the environment. Production
(DEBUG off) must pass its secrets explicitly; settings refuse to start otherwise.
"""

from __future__ import annotations

import base64
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path


def read_or_create(path: Path, generate: Callable[[], str], *, announce: bool = True) -> str:
    """Return the secret stored at `path`, creating it (0600, atomically) if it is missing."""
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    value = generate()
    # Written to a private temporary file first, then linked into place: a concurrent
    # reader sees either no file or the whole secret, and only one writer wins.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value + "\n")
    try:
        os.link(temporary, path)
    except FileExistsError:  # another process won the race; use its value
        return path.read_text().strip()
    finally:
        temporary.unlink()
    if announce:
        sys.stderr.write(
            f"WARNING: MemoryHub generated a new secret in {path} (mode 0600) for this "
            "development setup. Production must set it in the environment.\n"
        )
    return value


def new_secret_key() -> str:
    return secrets.token_urlsafe(50)


def new_kek() -> str:
    """A keyring entry in the `MEMORYHUB_KEK` format: `<version>:<base64 of 32 random bytes>`."""
    return "1:" + base64.b64encode(secrets.token_bytes(32)).decode()


def parse_keyring(value: str) -> dict[int, bytes]:
    """Parse `MEMORYHUB_KEK`: comma-separated `<version>:<base64 32-byte key>` entries.

    The highest version encrypts; the others only unwrap data keys until `rotate_keys`
    has re-wrapped them. Raises ValueError with a message that never includes key material.
    """
    ring: dict[int, bytes] = {}
    for position, entry in enumerate(value.split(","), start=1):
        entry = entry.strip()
        if not entry:
            continue
        version_text, sep, encoded = entry.partition(":")
        if not sep or not version_text.isdigit() or int(version_text) < 1:
            raise ValueError(
                f"entry {position} must look like '<version>:<base64 key>' with a version >= 1"
            )
        try:
            key = base64.b64decode(encoded, validate=True)
        except ValueError:
            raise ValueError(
                f"entry {position} (version {version_text}) is not valid base64"
            ) from None
        if len(key) != 32:
            raise ValueError(f"entry {position} (version {version_text}) must decode to 32 bytes")
        version = int(version_text)
        if version in ring:
            raise ValueError(f"version {version} appears twice")
        ring[version] = key
    if not ring:
        raise ValueError("no key given")
    return ring
