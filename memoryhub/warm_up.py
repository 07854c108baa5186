"""What a server process prepares before it takes its first request, so that request is about
as fast as the tenth (bench/first_request_bench.py measures both).

Left to the first request, each of these was paid by whoever came first: the embedding
models (seconds), OpenAI's BPE tables for counting tokens (0.2 s), the compiled templates
(tens of ms a page), the URL resolver and the translation catalog of each language (30-60 ms
each). `warm_up()` runs the steps in order: this package's own (the URL resolver and the
catalog of every language, the project's templates), then those the apps register from
their `ready()` (apps.memories: the embedding models and the token counters; apps.recall:
the query embedding on the recall's own thread). `manage.py runserver` runs it before it
serves and each gunicorn worker before its first request (gunicorn.conf.py).

A step that fails is logged (its name and the error's class) and the others still run: the
server serves anyway, and the first request that needs what failed tries again.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.template import engines
from django.template.autoreload import get_template_directories
from django.urls import get_resolver
from django.utils import translation

logger = logging.getLogger(__name__)

WarmUpStep = Callable[[], object]


def _urls_and_translations() -> None:
    """The URL resolver's reverse table and the translation catalog, in every language (the
    resolver builds one table a language, on the first `reverse` in it)."""
    resolver = get_resolver()
    for code, _ in settings.LANGUAGES:
        with translation.override(code):
            resolver.reverse_dict  # noqa: B018  # built on first access, for this language


def _templates() -> None:
    """Every template of the project's own folders, compiled into the cached loader (the
    installed packages' templates, the admin's, stay lazy)."""
    engine = engines["django"]
    installed = Path(sys.prefix)  # a virtualenv may sit inside the project (.venv)
    for folder in get_template_directories():
        if not folder.is_relative_to(settings.BASE_DIR) or folder.is_relative_to(installed):
            continue
        for path in sorted(Path(folder).rglob("*.html")):
            engine.get_template(str(path.relative_to(folder)))


_steps: dict[str, WarmUpStep] = {
    "URLs and translations": _urls_and_translations,
    "templates": _templates,
}


def register_warm_up(name: str, step: WarmUpStep) -> None:
    """Adds `step` to the warm-up under `name`, after those registered before it: an app
    above this package prepares what it alone knows. Registering a name again replaces it."""
    _steps[name] = step


def warm_up_steps() -> list[str]:
    """The steps' names, in the order `warm_up` runs them."""
    return list(_steps)


@dataclass
class WarmUpReport:
    seconds: dict[str, float] = field(default_factory=dict)  # each step that finished
    failed: dict[str, str] = field(default_factory=dict)  # each that raised: its error's class

    def summary(self) -> str:
        """One line: each step's time, and the failures."""
        done = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.seconds.items())
        failed = ", ".join(f"{name} ({error})" for name, error in self.failed.items())
        return done + (f"; failed: {failed}" if failed else "")


def warm_up() -> WarmUpReport:
    """Runs every step, in order, timing each. Never raises for a step's failure: it is
    logged by name and error class (never a message, which could carry a path or a
    secret) and left out of `seconds`."""
    report = WarmUpReport()
    for name, step in list(_steps.items()):
        started = time.perf_counter()
        try:
            step()
        except Exception as error:  # any failure: the server still serves
            report.failed[name] = type(error).__name__
            logger.warning("Warm-up step %r failed (%s)", name, type(error).__name__)
        else:
            report.seconds[name] = time.perf_counter() - started
    return report
