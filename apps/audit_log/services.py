"""The audit viewer's writes: an export's own audit event, and "verify now"."""

from __future__ import annotations

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, ChainVerification
from apps.audit.services import audit_record, chain_verification_start
from apps.audit.tasks import chain_verification_enqueue
from apps.namespaces.models import Namespace


def audit_export_record(
    *, actor: Actor, filters: list[str], through_id: int, namespace: Namespace | None = None
) -> AuditEvent:
    """Audit an export of the log: who, which filters (names only: their values may name
    people), up to which event. `namespace` when the export is of one namespace, so its
    owner sees the export too."""
    return audit_record(
        actor=actor,
        action="audit.export",
        namespace=namespace,
        object_type="audit_export",
        details={"filters": filters, "through_event_id": through_id},
    )


def chain_verification_request(*, actor: Actor, full: bool) -> ChainVerification:
    """ "Verify now": a running verification, walked after the commit (on a worker, or in
    this process without a broker). Audited as `audit.chain_verify`."""
    verification = chain_verification_start(
        requested_by=f"user:{actor.name}", actor=actor, full=full
    )
    chain_verification_enqueue(verification.pk)
    return verification
