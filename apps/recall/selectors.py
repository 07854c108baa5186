"""Reads of the recall log for others: a subject's part of its export."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch

from apps.memories.models import Subject
from apps.memories.row_encryption import KeyCache, open_row
from apps.recall.models import RecallFeedback, RecallLog


def subject_recalls_export(keys: KeyCache, subject: Subject) -> list[dict[str, Any]]:
    """The recalls and context assemblies made for the subject (registered as the export's
    "recalls" part): when, what for, which memories were served, the query while it is
    still kept (MEMORYHUB_RECALL_QUERY_DAYS), and the feedback given on what was served,
    notes decrypted. Two queries, however many recalls."""
    logs = (
        RecallLog.objects.filter(subject=subject)
        .order_by("created_at", "id")
        .prefetch_related(
            Prefetch("feedback", queryset=RecallFeedback.objects.order_by("created_at", "id"))
        )
    )
    return [
        {
            "recall_id": str(log.pk),
            "created_at": log.created_at.isoformat(),
            "purpose": log.purpose,
            "served_memory_ids": [str(memory_id) for memory_id in log.memory_ids],
            "query": None
            if log.content_encrypted is None
            else open_row(keys, log, subject.namespace_id, subject.pk),
            "feedback": [
                {
                    "memory_id": str(feedback.memory_id),
                    "relevant": feedback.relevant,
                    "note": open_row(keys, feedback, subject.namespace_id, subject.pk),
                    "created_at": feedback.created_at.isoformat(),
                }
                for feedback in log.feedback.all()
            ],
        }
        for log in logs
    ]
