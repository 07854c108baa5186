"""Background work of the privacy portal: erasures whose grace period is over."""

from __future__ import annotations

from celery import shared_task

from apps.privacy.services import erasures_run_due


@shared_task(name="privacy.erase_due")
def erase_due() -> int:
    """Run the scheduled erasures that are due (beat: every minute). Safe to run on several
    workers at once: each erasure is taken by one of them."""
    return erasures_run_due()
