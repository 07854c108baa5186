"""The demo namespace as `demo_load` leaves it: loaded once for a module (in a transaction
rolled back at its end, so nothing is committed), each test in a savepoint of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import transaction
from pytest_django import DjangoDbBlocker

from apps.demo.services import DemoReport, demo_actor, demo_load
from apps.memories.embeddings import set_provider
from apps.namespaces.models import Namespace
from tests.embedder import DeterministicEmbedder


@pytest.fixture(scope="module")
def loaded(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[DemoReport]:
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        set_provider(DeterministicEmbedder())
        try:
            report = demo_load(actor=demo_actor(name="tests"))
        except BaseException:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)
            raise
        finally:
            set_provider(None)
    yield report
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        outer.__exit__(None, None, None)


@pytest.fixture
def demo(loaded: DemoReport, db: None) -> Namespace:
    return Namespace.objects.get(slug="demo")
