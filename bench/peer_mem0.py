"""Mem0's side of `bench/peer_bench.py`: run by the Python of the Mem0 virtualenv that the
driver creates (var/peer/mem0-venv), never by MemoryHub's.

    var/peer/mem0-venv/bin/python bench/peer_mem0.py < spec.json > result.json

The driver sends the work as JSON on stdin: where the embedded PostgreSQL listens, the local
all-MiniLM-L6-v2 folder, the history database's path, k, and the conversations (each turn's
content, speaker, dia_id and session; the questions). For each conversation, a
`mem0.Memory` over its own pgvector collection (the counterpart of the namespace per
conversation on MemoryHub's side) stores every turn with one `add(..., infer=False)` (the
speaker as the message's `name`, dia_id and session in `metadata`), each call timed, then
asks every question with `search(question, top_k=k, filters={"user_id": ...})`, each call
timed. Prints one JSON object on stdout: the timings, each question's returned dia_ids best
first (the driver scores them with the project's scorer), the indexes of the collections and
the versions. Nothing here prints or logs memory content.

Nothing phones home: telemetry is off (`MEM0_TELEMETRY=False`, checked by Mem0 before it
makes its PostHog client or fetches its notices), Hugging Face is offline, and every network
connection other than to this machine is refused (counted in the output). The LLM Mem0
requires in its configuration is an OpenAI-compatible endpoint on 127.0.0.1 with a dummy key:
`infer=False` never calls it, and a call would stop the run.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

LOOPBACK = {"127.0.0.1", "::1", "localhost"}
blocked: list[str] = []


def refuse_outside_connections() -> None:
    """Every TCP/UDP connection or name lookup outside this machine raises (and is counted);
    Unix sockets (the embedded PostgreSQL) and loopback pass. libpq connects in C, unaffected."""
    connect = socket.socket.connect
    connect_ex = socket.socket.connect_ex
    getaddrinfo = socket.getaddrinfo

    def allowed(address: Any) -> bool:
        return not isinstance(address, tuple) or str(address[0]) in LOOPBACK

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if not allowed(address):
            blocked.append(f"connect {address[0]}")
            raise ConnectionRefusedError(f"peer_mem0: no network here ({address[0]})")
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if not allowed(address):
            blocked.append(f"connect {address[0]}")
            raise ConnectionRefusedError(f"peer_mem0: no network here ({address[0]})")
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and str(name) not in LOOPBACK:
            blocked.append(f"lookup {name}")
            raise socket.gaierror(f"peer_mem0: no network here ({name})")
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign, assignment]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign, assignment]
    socket.getaddrinfo = guarded_getaddrinfo


def conninfo(server: dict[str, Any]) -> str:
    """A libpq keyword string for the Unix socket (a URL cannot carry a path as host)."""
    return " ".join(f"{key}={server[key]}" for key in ("host", "port", "user", "dbname"))


def memory_for(spec: dict[str, Any], collection: str) -> Any:
    from mem0 import Memory  # type: ignore[import-not-found]  # Mem0's venv only

    config = {
        "vector_store": {
            "provider": "pgvector",
            "config": {
                "connection_string": conninfo(spec["server"]),
                "collection_name": collection,
                "embedding_model_dims": spec["dimensions"],
                "hnsw": True,
                "diskann": False,
                "minconn": 1,
                "maxconn": 2,
            },
        },
        "embedder": {
            "provider": "huggingface",
            "config": {
                "model": spec["model_path"],
                "embedding_dims": spec["dimensions"],
                "model_kwargs": {"device": "cpu"},
            },
        },
        "llm": {
            "provider": "openai",
            "config": {
                "model": "gpt-4o-mini",
                "api_key": "sk-peer-bench-dummy",
                "openai_base_url": "http://127.0.0.1:9/v1",
            },
        },
        "history_db_path": spec["history_db"],
    }
    memory = Memory.from_config(config)

    def no_llm(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("peer_mem0: Mem0 called its LLM, which infer=False must not do")

    memory.llm.generate_response = no_llm
    return memory


def collection_indexes(memory: Any, collection: str) -> tuple[list[str], str | None]:
    """The collection's indexes, and the HNSW search depth its connections use."""
    with memory.vector_store._get_cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = %s ORDER BY indexname", [collection]
        )
        indexes = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT current_setting('hnsw.ef_search', true)")
        row = cursor.fetchone()
    return indexes, row[0] if row else None


def run(spec: dict[str, Any]) -> dict[str, Any]:
    k = int(spec["k"])
    add_ms: list[float] = []
    search_ms: list[float] = []
    ranked: dict[str, list[list[str]]] = {}
    indexes: dict[str, list[str]] = {}
    ingest_seconds = 0.0
    ef_search: str | None = None
    for conversation in spec["conversations"]:
        collection = f"peer_{conversation['name']}"
        memory = memory_for(spec, collection)
        user = conversation["subject"]
        try:
            # Outside the clock: the model's first call, and the table and its indexes
            # (made by Mem0 on the collection's first use).
            memory.embedding_model.embed("warm up the model", "search")
            memory.search("warm up", top_k=k, filters={"user_id": user})
            for turn in conversation["turns"]:
                started = time.perf_counter()
                memory.add(
                    [{"role": "user", "content": turn["content"], "name": turn["speaker"]}],
                    user_id=user,
                    metadata={"dia_id": turn["dia_id"], "session": turn["session"]},
                    infer=False,
                )
                elapsed = time.perf_counter() - started
                add_ms.append(elapsed * 1000)
                ingest_seconds += elapsed
            answers = []
            for question in conversation["questions"]:
                started = time.perf_counter()
                found = memory.search(question, top_k=k, filters={"user_id": user})
                search_ms.append((time.perf_counter() - started) * 1000)
                answers.append(
                    [
                        str((result.get("metadata") or {}).get("dia_id", ""))
                        for result in found["results"]
                    ]
                )
            ranked[conversation["name"]] = answers
            indexes[collection], ef_search = collection_indexes(memory, collection)
            print(
                f"peer_mem0: {conversation['name']}: {len(conversation['turns'])} adds, "
                f"{len(answers)} searches",
                file=sys.stderr,
                flush=True,
            )
        finally:
            memory.close()  # its history database; the pool is Mem0's vector store's
            memory.vector_store.connection_pool.close()
    return {
        "versions": {
            name: metadata.version(name)
            for name in ("mem0ai", "sentence-transformers", "torch", "psycopg")
        },
        "telemetry": os.environ.get("MEM0_TELEMETRY"),
        "add_ms": add_ms,
        "ingest_seconds": ingest_seconds,
        "search_ms": search_ms,
        "ranked": ranked,
        "indexes": indexes,
        "ef_search": ef_search,
        "spacy": _has("spacy"),
        "blocked_connections": blocked,
    }


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def main() -> None:
    spec = json.load(sys.stdin)
    home = Path(spec["mem0_dir"])
    home.mkdir(parents=True, exist_ok=True)
    # Before mem0 is imported: it reads these at import time.
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = str(home)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    refuse_outside_connections()
    import logging

    # Mem0 logs each insert at INFO, and a malformed message (content included) at WARNING.
    logging.basicConfig(level=logging.ERROR)
    from mem0.memory import telemetry  # type: ignore[import-not-found]

    if telemetry.MEM0_TELEMETRY:
        raise SystemExit("peer_mem0: Mem0's telemetry is on; it must be off")
    # Whatever a library prints goes to stderr: stdout carries the one JSON object.
    out, sys.stdout = sys.stdout, sys.stderr
    result = run(spec)
    json.dump(result, out)
    out.flush()


if __name__ == "__main__":
    main()
