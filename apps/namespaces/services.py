"""Writes for namespaces and memberships. Each runs in one transaction with its audit event."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.namespaces.models import Membership, MembershipRole, Namespace, PiiPolicy
from memoryhub.exceptions import ApplicationError

_UPDATABLE = (
    "name",
    "description",
    "pii_policy",
    "retention_days",
    "max_memories_per_subject",
    "recency_half_life_days",
    "keep_turns_when_paused",
    "summarize_after_days",
)


def namespace_create(
    *,
    actor: Actor,
    slug: str,
    name: str = "",
    description: str = "",
    owner: User | None = None,
) -> Namespace:
    """Create a namespace; `owner` (default: the acting user) owns it. Its shared data key is
    made by the store on first use."""
    try:
        with transaction.atomic():
            namespace = Namespace.objects.create(
                slug=slug, name=name or slug, description=description
            )
            # Actor.user is typed AbstractBaseUser; the user model is Django's User.
            owner = owner or cast("User | None", actor.user)
            if owner is not None:
                Membership.objects.create(
                    user=owner, namespace=namespace, role=MembershipRole.OWNER
                )
            audit_record(
                actor=actor,
                action="namespace.create",
                namespace=namespace,
                object_type="namespace",
                object_id=str(namespace.pk),
                details={"owner_id": owner.pk if owner else None},
            )
    except IntegrityError:
        raise ApplicationError(
            f"A namespace with the slug {slug!r} exists already.", code="conflict", status_code=409
        ) from None
    return namespace


def namespace_update(*, actor: Actor, namespace: Namespace, **changes: Any) -> Namespace:
    unknown = set(changes) - set(_UPDATABLE)
    if unknown:
        raise ApplicationError("Unknown namespace fields.", details={"fields": sorted(unknown)})
    if "pii_policy" in changes and changes["pii_policy"] not in PiiPolicy.values:
        raise ApplicationError("Unknown PII policy.", details={"pii_policy": changes["pii_policy"]})
    with transaction.atomic():
        namespace = Namespace.objects.select_for_update().get(pk=namespace.pk)
        for name, value in changes.items():
            setattr(namespace, name, value)
        namespace.save()
        audit_record(
            actor=actor,
            action="namespace.update",
            namespace=namespace,
            object_type="namespace",
            object_id=str(namespace.pk),
            details={"fields": sorted(changes)},
        )
    return namespace


def membership_set(*, actor: Actor, namespace: Namespace, user: User, role: str) -> Membership:
    if role not in MembershipRole.values:
        raise ApplicationError("Unknown role.", details={"role": role})
    with transaction.atomic():
        membership, created = Membership.objects.update_or_create(
            user=user, namespace=namespace, defaults={"role": role}
        )
        audit_record(
            actor=actor,
            action="membership.set",
            namespace=namespace,
            object_type="user",
            object_id=str(user.pk),
            details={"role": role, "created": created},
        )
    return membership


def membership_remove(*, actor: Actor, namespace: Namespace, user: User) -> None:
    with transaction.atomic():
        removed, _ = Membership.objects.filter(user=user, namespace=namespace).delete()
        audit_record(
            actor=actor,
            action="membership.remove",
            namespace=namespace,
            object_type="user",
            object_id=str(user.pk),
            details={"removed": bool(removed)},
        )


def namespace_delete(*, actor: Actor, namespace: Namespace) -> dict[str, int]:
    """Delete a namespace with everything in it (keys first: crypto-shredded). Audited.

    The apps above reach the namespace's rows through their foreign keys (cascading)."""
    with transaction.atomic():
        counts = {
            "memories": namespace.memories.count(),
            "subjects": namespace.subjects.count(),
        }
        namespace.data_keys.all().delete()
        namespace_id, slug = namespace.pk, namespace.slug
        Namespace.objects.filter(pk=namespace_id).delete()
        audit_record(
            actor=actor,
            action="namespace.delete",
            namespace=namespace,
            object_type="namespace",
            object_id=str(namespace_id),
            details={**counts, "slug": slug},
        )
    return counts
