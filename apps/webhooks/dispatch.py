"""Getting deliveries sent: on a Celery worker after the commit, or, without a broker, by a
daemon thread of this process (the embedded default needs no extra process).

The thread starts on the first delivery committed in the process, sends whatever is due
(claimed the same way a worker claims it, so a worker or another process never sends the
same delivery at once), then sleeps until the next one is due or a new one is committed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

logger = logging.getLogger(__name__)
IDLE_SECONDS = 60.0  # the longest the thread sleeps without a wake-up


class Dispatcher:
    def __init__(self) -> None:
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def wake(self) -> None:
        """Send what is due soon (starting the thread if it is not running)."""
        if not settings.MEMORYHUB_WEBHOOK_DISPATCHER:
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="memoryhub-webhooks", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        from apps.webhooks.delivery import deliver_due, next_due_at

        while True:
            self._wake.clear()
            wait = IDLE_SECONDS
            if not settings.MEMORYHUB_WEBHOOK_DISPATCHER:  # switched off meanwhile (tests)
                self._wake.wait(wait)
                continue
            try:
                close_old_connections()
                while deliver_due():
                    pass
                due = next_due_at()
                if due is not None:
                    wait = min(max((due - timezone.now()).total_seconds(), 0.05), IDLE_SECONDS)
            except Exception:
                logger.exception("The webhook dispatcher failed; it tries again.")
                wait = 5.0
            finally:
                connection.close()
            self._wake.wait(wait)


dispatcher = Dispatcher()


def deliveries_send_after_commit(delivery_ids: Sequence[object]) -> None:
    """Once the enclosing transaction commits: a `webhooks.deliver` task per delivery, or,
    without a broker, a wake-up of this process's dispatcher. If the broker refuses, the
    deliveries stay pending in their table for beat's sweep (the table is the outbox)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(dispatcher.wake)
        return
    from apps.webhooks.tasks import deliver
    from memoryhub.tasks import after_commit

    for delivery_id in delivery_ids:
        after_commit(
            deliver,
            str(delivery_id),
            inline=dispatcher.wake,
            what=f"webhook delivery {delivery_id} (it stays pending for the sweep)",
        )
