"""`manage.py runserver` (staticfiles' own, which serves static files) that warms up before
it serves (memoryhub/warm_up.py: the embedding models loaded and run, the token counters,
the templates, the URLs and translations), as gunicorn's workers do (gunicorn.conf.py), so
/readyz is ready from the first request and that request is about as fast as the tenth.

Left to the first request, the model load made the first playground assembly after `make
run` take 22.6 s with nothing on screen saying why. The warm-up runs in the process that
serves: under the autoreloader that is the child, whose `inner_run` starts the server (the
parent only watches files), so each reload runs it again. `--no-warm-up` skips it.

This app comes before django.contrib.staticfiles in INSTALLED_APPS: of two commands of one
name, Django runs the one of the app listed first.
"""

from __future__ import annotations

import time
from typing import Any

from django.contrib.staticfiles.management.commands.runserver import (
    Command as StaticFilesRunserverCommand,
)
from django.core.management.base import CommandParser
from django.utils import autoreload

from memoryhub.warm_up import warm_up, warm_up_steps


class Command(StaticFilesRunserverCommand):
    help = (
        "Starts a lightweight web server for development, serves static files, and loads "
        "the local embedding models (and the rest a first request would load) before it serves."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--no-warm-up",
            action="store_false",
            dest="warm_up",
            help="Do not warm up before serving (the first request loads what it needs).",
        )

    def inner_run(self, *args: Any, **options: Any) -> None:
        # An error in the project's code, kept by the autoreloader, is shown before the load.
        autoreload.raise_last_exception()
        if options["warm_up"]:
            self.warm_up()
        super().inner_run(*args, **options)

    def warm_up(self) -> None:
        """Runs the warm-up, saying so; a step that fails is reported and the server starts
        anyway (the first request that needs it tries again and shows its own error)."""
        self.stdout.write(f"Warming up before serving ({', '.join(warm_up_steps())})…")
        started = time.perf_counter()
        report = warm_up()
        if report.failed:
            self.stderr.write("A warm-up step failed; serving anyway.")
        self.stdout.write(f"Warmed up in {time.perf_counter() - started:.1f} s: {report.summary()}")
