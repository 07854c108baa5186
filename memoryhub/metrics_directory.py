"""Where the processes of one machine share their Prometheus figures (multiprocess mode).

prometheus_client picks its storage when its first metric is made, from the environment
variable PROMETHEUS_MULTIPROC_DIR: with it, every process writes its figures into files
there (one per process and kind) and `/metrics` adds them up; without it, figures live in
the process, which is right for `runserver` and tests but not for gunicorn's workers (each
would answer with its own). So gunicorn (gunicorn.conf.py) and a Celery worker
(memoryhub/celery.py) call `use_shared_directory` before anything imports
prometheus_client. This module imports none of it at import time.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from pathlib import Path

import psutil

logger = logging.getLogger(__name__)

VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
_PER_PROCESS_FILE = re.compile(r"^[a-z_]+_(\d+)\.db$")


def default_directory() -> Path:
    """`<data directory>/prometheus-multiproc`: the data directory as settings.py finds it
    (MEMORYHUB_DATA_DIR, else `var/` in the project folder), without loading the settings."""
    project = Path(__file__).resolve().parent.parent
    return Path(os.environ.get("MEMORYHUB_DATA_DIR") or project / "var") / "prometheus-multiproc"


def use_shared_directory() -> Path:
    """Set PROMETHEUS_MULTIPROC_DIR (when the environment does not) to the default directory,
    create it, and return it. Too late once prometheus_client has made a metric in this
    process: that is logged."""
    directory = Path(os.environ.setdefault(VARIABLE, str(default_directory())))
    directory.mkdir(parents=True, exist_ok=True)
    if "prometheus_client.values" in sys.modules:
        logger.warning("prometheus_client was imported before %s was set", VARIABLE)
    return directory


def remove_dead_processes_files(directory: Path) -> int:
    """Delete the files of processes that are no longer running, at a server's start, so
    that figures of a former run are not added to this one's. Files of live processes (a
    Celery worker started before gunicorn, on the same machine) are kept. Returns how many
    files went."""
    removed = 0
    for path in directory.glob("*.db"):
        match = _PER_PROCESS_FILE.match(path.name)
        if match is None or not psutil.pid_exists(int(match.group(1))):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def process_exited(pid: int) -> None:
    """A worker process has exited: its live gauges no longer count (prometheus_client's
    `mark_process_dead`). Its counters and histograms stay in the sums."""
    if os.environ.get(VARIABLE):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
