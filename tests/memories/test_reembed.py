import io

import numpy as np
import pytest
from django.core.management import call_command

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories.embeddings import set_provider
from apps.memories.models import Memory
from apps.memories.services import NewMemory, memory_create
from tests.conftest import Tenant
from tests.embedder import DeterministicEmbedder


class OtherModel(DeterministicEmbedder):
    name = "test:other-model"

    def _vector(self, text: str) -> np.ndarray:
        return super()._vector(text + " zeppelin blimp")


@pytest.fixture
def memories(acme: Tenant) -> list[Memory]:
    return [
        memory_create(
            actor=Actor.system("tests"),
            namespace=acme.namespace,
            item=NewMemory(
                subject_external_id="u1",
                content=f"fact number {n} about sailing",
                session_key="s",
                position=n,
            ),
        )
        for n in range(5)
    ]


def reembed(*args: str) -> str:
    out = io.StringIO()
    call_command("reembed", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_it_embeds_everything_from_another_model_and_then_nothing(memories: list[Memory]) -> None:
    before = {m.pk: np.asarray(m.embedding) for m in Memory.objects.all()}
    set_provider(OtherModel())
    assert "Embedded 5 vectors with test:other-model; recall: primary." in reembed()
    after = Memory.objects.all()
    assert {m.embedding_model for m in after} == {"test:other-model"}
    assert all(not np.allclose(before[m.pk], np.asarray(m.embedding)) for m in after)
    assert AuditEvent.objects.filter(action="memory.reembed").count() == 1
    assert "Embedded 0 vectors" in reembed()


@pytest.mark.django_db
def test_an_interrupted_run_resumes_where_it_stopped(memories: list[Memory]) -> None:
    set_provider(OtherModel())
    assert "Embedded 2 vectors" in reembed("--limit", "2", "--batch-size", "1")
    assert Memory.objects.filter(embedding_model="test:other-model").count() == 2
    assert "Embedded 3 vectors" in reembed()
    assert Memory.objects.exclude(embedding_model="test:other-model").count() == 0


@pytest.mark.django_db
def test_it_fills_in_missing_embeddings_and_neighbour_context(memories: list[Memory]) -> None:
    Memory.objects.update(embedding=None, embedding_model="", context_embedding=None)
    reembed()
    assert Memory.objects.filter(embedding__isnull=True).count() == 0
    assert Memory.objects.filter(context_embedding__isnull=True).count() == 0
