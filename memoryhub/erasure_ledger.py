"""The erasure ledger: an append-only file, outside the database, of every erasure.

A backup taken before an erasure still holds what was erased (the subject's wrapped data
key, the memories). Restoring it would bring back people who asked to be forgotten. So every
erasure is also written here, *before* its transaction commits, and every restore applies
again the entries newer than its backup (`manage.py restore`, `manage.py reapply_erasures`).

Each entry is one line of JSON in `<MEMORYHUB_ERASURE_LEDGER>/ledger.jsonl`, content-free:
the namespace, the scope (a whole subject, these memories, these conversation turns, a
whole namespace), the
subject's HMAC fingerprint (the receipts' own, never the external id), the time, the receipt
hash, and a chain hash over the previous entry. Appends from every process (web workers,
Celery, beat, commands) are serialised with a file lock and fsynced before they return.

An entry whose erasure then failed (its transaction rolled back) is harmless: applying it
again finds the rows gone or erases what was meant to be erased. A ledger that cannot be
written refuses the erasure (`LedgerUnavailable`): an erasure is never done without it.

No Django import here but settings: commands, services and tests share this module.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from django.conf import settings
from django.utils.translation import gettext_noop

from memoryhub.exceptions import ApplicationError
from memoryhub.json_input import json_loads

logger = logging.getLogger(__name__)

FILENAME = "ledger.jsonl"
LOCK_FILENAME = "ledger.lock"
GENESIS = "0" * 64

Scope = Literal["subject", "memories", "turns", "namespace"]


class LedgerUnavailable(ApplicationError):
    """The ledger could not be written, so the erasure is refused (and nothing changed)."""

    status_code = 503
    code = "erasure_ledger_unavailable"


class LedgerBroken(ApplicationError):
    """The ledger's file does not chain: an entry was changed, removed or reordered."""

    status_code = 500
    code = "erasure_ledger_broken"


@dataclass(frozen=True)
class Head:
    """Where the ledger stands: the number of entries and the last one's hash."""

    seq: int = 0
    hash: str = GENESIS

    def as_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "hash": self.hash}


@dataclass(frozen=True)
class Entry:
    seq: int
    at: str
    namespace_id: int
    scope: Scope
    subject: str = ""  # the subject's HMAC fingerprint, for scope "subject"
    memory_ids: list[str] = field(default_factory=list)  # for scope "memories"
    turn_ids: list[str] = field(default_factory=list)  # for scope "turns"
    receipt: str = ""  # the erasure receipt's hash, where it has one
    prev: str = GENESIS
    hash: str = ""

    def body(self) -> dict[str, Any]:
        values = asdict(self)
        values.pop("hash")
        return values

    @property
    def time(self) -> datetime:
        return datetime.fromisoformat(self.at)


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def directory() -> Path:
    return Path(settings.MEMORYHUB_ERASURE_LEDGER)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The complete lines of the file, numbered from 1. A last line without its newline
    (an append cut off by a crash, whose erasure therefore never committed) is left out."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.endswith(b"\n"):
                yield number, raw.decode()


def entries(folder: Path | None = None) -> Iterator[Entry]:
    """Every entry, in order, checked link by link (raises LedgerBroken naming the line)."""
    path = (folder or directory()) / FILENAME
    if not path.exists():
        return
    prev, seq = GENESIS, 0
    known = {f.name for f in fields(Entry)}
    for number, line in _lines(path):
        try:
            stored = json_loads(line)
            entry = Entry(**{k: v for k, v in stored.items() if k in known})
            # The hash covers the line as written: an entry of an older or newer format
            # (fields added since, or to come) checks as it was made.
            written = _digest({k: v for k, v in stored.items() if k != "hash"})
        except (ValueError, TypeError, AttributeError) as error:
            raise LedgerBroken(f"{path}, line {number}: not a ledger entry ({error})") from None
        if entry.seq != seq + 1 or entry.prev != prev or written != entry.hash:
            raise LedgerBroken(f"{path}, line {number}: the chain is broken at entry {seq + 1}")
        prev, seq = entry.hash, entry.seq
        yield entry


def head(folder: Path | None = None) -> Head:
    """The ledger's head (checking the whole chain)."""
    last = Head()
    for entry in entries(folder):
        last = Head(entry.seq, entry.hash)
    return last


def _tail(handle: Any) -> Head:
    """The last complete entry's head, read backwards from the end of the open file; a torn
    last line (a crash mid-append) is cut off first."""
    size = handle.seek(0, os.SEEK_END)
    block, data = 4096, b""
    while size and data.count(b"\n") < 2 and len(data) < size:
        start = max(0, size - len(data) - block)
        handle.seek(start)
        data = handle.read(size - len(data) - start) + data
        block *= 2
    if data and not data.endswith(b"\n"):
        complete = data.rfind(b"\n") + 1
        handle.truncate(size - (len(data) - complete))
        data = data[:complete]
    lines = data.rstrip(b"\n").split(b"\n") if data else []
    if not lines or not lines[-1]:
        return Head()
    last = json_loads(lines[-1])
    return Head(int(last["seq"]), str(last["hash"]))


def append(
    *,
    namespace_id: int,
    scope: Scope,
    subject: str = "",
    memory_ids: Sequence[uuid.UUID | str] = (),
    turn_ids: Sequence[uuid.UUID | str] = (),
    receipt: str = "",
) -> Entry:
    """Append one erasure and fsync it; call it inside the erasure's transaction, before it
    commits. Raises LedgerUnavailable (and logs an ERROR) when the ledger cannot be written."""
    folder = directory()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / LOCK_FILENAME).open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            with (folder / FILENAME).open("a+b") as handle:
                last = _tail(handle)
                entry = Entry(
                    seq=last.seq + 1,
                    at=datetime.now(UTC).isoformat(),
                    namespace_id=namespace_id,
                    scope=scope,
                    subject=subject,
                    memory_ids=sorted(str(i) for i in memory_ids),
                    turn_ids=sorted(str(i) for i in turn_ids),
                    receipt=receipt,
                    prev=last.hash,
                )
                entry = Entry(**entry.body(), hash=_digest(entry.body()))
                handle.seek(0, os.SEEK_END)
                handle.write(json.dumps(asdict(entry), sort_keys=True).encode() + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
    except (OSError, ValueError, KeyError) as error:
        logger.error(
            "The erasure ledger at %s cannot be written (%s): the erasure is refused.",
            folder,
            type(error).__name__,
        )
        raise LedgerUnavailable(
            gettext_noop(
                "The erasure ledger cannot be written, so nothing was erased. "
                "Ask the operator to check MEMORYHUB_ERASURE_LEDGER."
            )
        ) from error
    return entry


def since(after: Head, *, overlap_seconds: float = 0, folder: Path | None = None) -> list[Entry]:
    """The entries after `after` (a backup's head), and those appended up to
    `overlap_seconds` before it: an erasure in flight while a backup's snapshot was taken may
    be missing from the snapshot though its entry is older than the head."""
    every = list(entries(folder))
    if after.seq and (len(every) < after.seq or every[after.seq - 1].hash != after.hash):
        raise LedgerBroken(
            f"this ledger does not hold the backup's ledger head (entry {after.seq}, "
            f"{after.hash[:12]}…): it is not the ledger this database wrote"
        )
    newer = every[after.seq :]
    if after.seq and overlap_seconds:
        cutoff = every[after.seq - 1].time.timestamp() - overlap_seconds
        older = [e for e in every[: after.seq] if e.time.timestamp() >= cutoff]
        newer = older + newer
    return newer
