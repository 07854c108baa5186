"""`manage.py runserver` (staticfiles' own, which serves static files) that loads the local
embedding models before it serves, as gunicorn's workers do (gunicorn.conf.py), so /readyz
is ready from the first request.

Left to the first request, the load made the first playground assembly after `make run`
take 22.6 s with nothing on screen saying why. The model is loaded in the process that
serves: under the autoreloader that is the child, whose `inner_run` starts the server (the
parent only watches files), so each reload loads it again. `--no-warm-up` skips the load.

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

from apps.memories.model_loading import warm_up_embedding_models


class Command(StaticFilesRunserverCommand):
    help = (
        "Starts a lightweight web server for development, serves static files, and loads "
        "the local embedding models before it serves."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--no-warm-up",
            action="store_false",
            dest="warm_up",
            help="Do not load the embedding models before serving (the first request will).",
        )

    def inner_run(self, *args: Any, **options: Any) -> None:
        # An error in the project's code, kept by the autoreloader, is shown before the load.
        autoreload.raise_last_exception()
        if options["warm_up"]:
            self.load_embedding_model()
        super().inner_run(*args, **options)

    def load_embedding_model(self) -> None:
        """Loads the models, saying so; a failure is reported and the server starts anyway
        (the first request that needs the model tries again and shows its own error)."""
        self.stdout.write("Loading the embedding models before serving…")
        started = time.perf_counter()
        try:
            loaded = warm_up_embedding_models()
        except Exception as error:  # any failure: the server still serves the other pages
            self.stderr.write(f"The embedding models did not load ({error!r}); serving anyway.")
            return
        if loaded:
            self.stdout.write(f"Embedding models loaded in {time.perf_counter() - started:.1f} s.")
        else:
            self.stdout.write("No local embedding model to load (remote providers are set).")
