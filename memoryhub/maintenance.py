"""The restore marker: while `manage.py restore` runs, the web answers 503 and the workers
take no work.

The marker is a file in the data directory holding the restoring process's id. Every other
process (gunicorn workers, Celery workers and beat) sees it and stands aside; the restoring
process itself goes on. It is removed only when the restore's last step (the erasure
ledger's replay) is done, so nothing serves the restored database before the erased are
erased again.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

FILENAME = "restore-in-progress"


def marker() -> Path:
    return Path(settings.DATA_DIR) / FILENAME


def restoring() -> bool:
    """Whether a restore is under way in another process."""
    try:
        owner = marker().read_text().strip()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return owner != str(os.getpid())


@contextmanager
def restore_marker() -> Iterator[Path]:
    """Hold the marker for the block. It goes when the block ends well; a block that fails
    leaves it (with this process gone, every process sees it): a database restored but not
    yet replayed must not serve. Run the restore again, which takes it over."""
    path = marker()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{os.getpid()}\n")
    yield path
    path.unlink(missing_ok=True)
