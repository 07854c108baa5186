"""Gunicorn's settings for MemoryHub, read from the folder gunicorn starts in (the project's):
`gunicorn memoryhub.wsgi:application --workers 4 --bind …`, or `-c /path/to/gunicorn.conf.py`
from elsewhere. Options on the command line still apply over these.

Each worker warms up once it has loaded the app, before it takes a request
(memoryhub/warm_up.py): it loads and runs the local embedding models (and exports the
primary one to ONNX), builds the token counters' tables and compiles the templates. Left to
the first request, the models alone took 4 s on an idle 2-core machine and 12 s under load,
while the request waited and gunicorn's timeout could kill the worker (`make loadtest` saw
both).

Probes: `GET /healthz` is liveness (200 while the worker serves, nothing else checked);
`GET /readyz` is readiness (503 until the database, the broker when one is set and the
embedding models are ready). A worker answers only once its models are loaded, so /readyz
does not wait on them here. docs/production.md has a Kubernetes example.

The workers share their Prometheus figures through files in PROMETHEUS_MULTIPROC_DIR (default
`var/prometheus-multiproc`, memoryhub/metrics_directory.py): set here, before any worker imports
prometheus_client; emptied of a former run's files at start; a dead worker's live figures
dropped when it exits.

Traces (memoryhub/tracing.py, when OTEL_EXPORTER_OTLP_ENDPOINT is set) are set up in each
worker after the fork, before it loads the app: the batch processor's export thread would not
survive a fork.
"""

from __future__ import annotations

from typing import Any

from memoryhub import metrics_directory, tracing

metrics_directory.use_shared_directory()


def on_starting(server: Any) -> None:
    metrics_directory.remove_dead_processes_files(metrics_directory.use_shared_directory())


def child_exit(server: Any, worker: Any) -> None:
    metrics_directory.process_exited(worker.pid)


def post_fork(server: Any, worker: Any) -> None:
    tracing.set_up()


def post_worker_init(worker: Any) -> None:
    from memoryhub.warm_up import warm_up

    # A step that fails is logged and skipped: the worker still serves (/readyz says "error"
    # and loads the models again when they failed).
    report = warm_up()
    for name, error in report.failed.items():
        worker.log.warning("Warm-up step %r failed (%s)", name, error)
    worker.notify()  # alive: the warm-up counts against no request's timeout
