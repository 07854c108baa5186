"""Writes for namespaces and memberships. Each runs in one transaction with its audit event."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.namespaces.models import (
    EveryNamespaceRole,
    Extractor,
    Membership,
    MembershipRole,
    Namespace,
    PiiPolicy,
)
from apps.namespaces.origins import normalize_origin
from memoryhub import erasure_ledger, metrics
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
    "review_below",
    "portal_return_origins",
    "portal_frame_origins",
    "erasure_grace_days",
    "extractor",
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
            _grant_every_namespace_roles(actor=actor, namespace=namespace, owner=owner)
    except IntegrityError:
        raise ApplicationError(
            gettext_noop("A namespace with the slug %(slug)s exists already."),
            params={"slug": repr(slug)},
            code="conflict",
            status_code=409,
        ) from None
    return namespace


def _grant_every_namespace_roles(*, actor: Actor, namespace: Namespace, owner: User | None) -> None:
    """Give each user whom single sign-on grants a role in every namespace ("*") that role
    in the new one, as an SSO membership (the owner keeps ownership)."""
    standing = EveryNamespaceRole.objects.exclude(user=owner).select_related("user")
    for every in standing:
        Membership.objects.create(
            user=every.user, namespace=namespace, role=every.role, granted_by_sso=True
        )
        _audit_membership(actor, namespace, every.user, "membership.set", role=every.role)


def _audit_membership(
    actor: Actor, namespace: Namespace, user: User, action: str, **details: Any
) -> None:
    """A membership change single sign-on made (`via: sso` tells it from one by hand)."""
    audit_record(
        actor=actor,
        action=action,
        namespace=namespace,
        object_type="user",
        object_id=str(user.pk),
        details={**details, "via": "sso"},
    )


def namespace_update(*, actor: Actor, namespace: Namespace, **changes: Any) -> Namespace:
    """Change the namespace's settings (the fields of `_UPDATABLE`), checked, under its row
    lock; audited with the names of the fields changed, never their values."""
    unknown = set(changes) - set(_UPDATABLE)
    if unknown:
        raise ApplicationError(
            gettext_noop("Unknown namespace fields."), details={"fields": sorted(unknown)}
        )
    if "pii_policy" in changes and changes["pii_policy"] not in PiiPolicy.values:
        raise ApplicationError(
            gettext_noop("Unknown PII policy."), details={"pii_policy": changes["pii_policy"]}
        )
    for name in ("portal_return_origins", "portal_frame_origins"):
        if name in changes:  # they reach a CSP header and a redirect check: origins only
            try:
                changes[name] = list(dict.fromkeys(normalize_origin(o) for o in changes[name]))
            except (ValueError, TypeError):
                raise ApplicationError(
                    gettext_noop("Not a list of origins like https://app.example.com."),
                    details={name: ["origins only"]},
                ) from None
    if "erasure_grace_days" in changes and not 0 <= int(changes["erasure_grace_days"]) <= 30:
        raise ApplicationError(
            gettext_noop("The erasure grace period is 0 to 30 days."),
            details={"erasure_grace_days": ["0-30"]},
        )
    if "extractor" in changes:
        _check_extractor(changes["extractor"])
    with transaction.atomic():
        # NO KEY: writes in the namespace check their foreign key to it at commit, while
        # this transaction waits for the audit chain's head they hold (a deadlock otherwise).
        namespace = Namespace.objects.select_for_update(no_key=True).get(pk=namespace.pk)
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


def _check_extractor(extractor: object) -> None:
    """A known extractor or blank (the server's default); the LLM only where the server has
    an endpoint to call."""
    if extractor != "" and extractor not in Extractor.values:
        raise ApplicationError(
            gettext_noop("Unknown extractor."), details={"extractor": ["unknown"]}
        )
    if extractor in (Extractor.LLM, Extractor.BOTH) and not settings.MEMORYHUB_LLM_URL:
        raise ApplicationError(
            gettext_noop(
                "The LLM extractor needs an LLM endpoint: this server has no MEMORYHUB_LLM_URL."
            ),
            details={"extractor": ["no LLM endpoint"]},
        )


def _refuse_losing_the_last_owner(namespace: Namespace, user: User) -> None:
    """A namespace keeps at least one owner who can sign in: its last one can be neither
    removed nor made an editor or viewer. An invitation not yet accepted (no password set,
    never signed in) counts for nothing. Called under the namespace's row lock."""
    owners = Membership.objects.filter(
        Q(user__last_login__isnull=False) | ~Q(user__password__startswith=UNUSABLE_PASSWORD_PREFIX),
        namespace=namespace,
        role=MembershipRole.OWNER,
        user__is_active=True,
    )
    if owners.filter(user=user).exists() and owners.count() == 1:
        raise ApplicationError(
            gettext_noop("A namespace keeps at least one owner: make another member owner first."),
            code="conflict",
            status_code=409,
            details={"user": ["last owner"]},
        )


def membership_set(*, actor: Actor, namespace: Namespace, user: User, role: str) -> Membership:
    """Add `user` to the namespace with `role`, or change their role. The last owner cannot
    be demoted."""
    if role not in MembershipRole.values:
        raise ApplicationError(gettext_noop("Unknown role."), details={"role": role})
    with transaction.atomic():
        Namespace.objects.select_for_update(no_key=True).filter(pk=namespace.pk).first()
        if role != MembershipRole.OWNER:
            _refuse_losing_the_last_owner(namespace, user)
        # Set by hand, a role is the members page's from now on: sign-ins leave it alone.
        membership, created = Membership.objects.update_or_create(
            user=user, namespace=namespace, defaults={"role": role, "granted_by_sso": False}
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
    """Take `user` out of the namespace. The last owner cannot be removed."""
    with transaction.atomic():
        Namespace.objects.select_for_update(no_key=True).filter(pk=namespace.pk).first()
        _refuse_losing_the_last_owner(namespace, user)
        removed, _ = Membership.objects.filter(user=user, namespace=namespace).delete()
        audit_record(
            actor=actor,
            action="membership.remove",
            namespace=namespace,
            object_type="user",
            object_id=str(user.pk),
            details={"removed": bool(removed)},
        )


def memberships_sync_sso(
    *,
    actor: Actor,
    user: User,
    role_in: Callable[[str], str | None],
    every_namespace: str | None,
) -> dict[str, int]:
    """Match `user`'s SSO memberships to the roles their groups grant at sign-in:
    `role_in(slug)` is the role wanted in each namespace (None: none), `every_namespace` the
    one wanted in every namespace, those created later included. A role granted by hand is
    left alone. Each change is audited in its namespace's chain. Returns the counts."""
    counts = {"added": 0, "changed": 0, "removed": 0}
    with transaction.atomic():
        held = {m.namespace_id: m for m in Membership.objects.filter(user=user)}
        for namespace in Namespace.objects.order_by("pk"):
            change = _sync_one(actor, user, namespace, held.get(namespace.pk), role_in)
            if change:
                counts[change] += 1
        _set_every_namespace_role(actor, user, every_namespace)
    return counts


def _sync_one(
    actor: Actor,
    user: User,
    namespace: Namespace,
    membership: Membership | None,
    role_in: Callable[[str], str | None],
) -> str:
    """Bring one namespace's membership in line; the kind of change made, or ""."""
    wanted = role_in(namespace.slug)
    if membership is not None and not membership.granted_by_sso:
        return ""
    if membership is None:
        if wanted is None:
            return ""
        Membership.objects.create(user=user, namespace=namespace, role=wanted, granted_by_sso=True)
        _audit_membership(actor, namespace, user, "membership.set", role=wanted, created=True)
        return "added"
    if wanted is None:
        membership.delete()
        _audit_membership(actor, namespace, user, "membership.remove", removed=True)
        return "removed"
    if membership.role == wanted:
        return ""
    Membership.objects.filter(pk=membership.pk).update(role=wanted)
    _audit_membership(actor, namespace, user, "membership.set", role=wanted, created=False)
    return "changed"


def _set_every_namespace_role(actor: Actor, user: User, role: str | None) -> None:
    current = EveryNamespaceRole.objects.filter(user=user).first()
    if (current.role if current else None) == role:
        return
    if role is None:
        EveryNamespaceRole.objects.filter(user=user).delete()
    else:
        EveryNamespaceRole.objects.update_or_create(user=user, defaults={"role": role})
    audit_record(
        actor=actor,
        action="membership.every_namespace",
        object_type="user",
        object_id=str(user.pk),
        details={"role": role, "via": "sso"},
    )


def namespace_delete(*, actor: Actor, namespace: Namespace) -> dict[str, int]:
    """Delete a namespace with everything in it (keys first: crypto-shredded). Audited.

    The apps above reach the namespace's rows through their foreign keys (cascading). Its
    memories are counted after the commit (`memoryhub_purged_memories_total{via="namespace"}`)."""
    with transaction.atomic():
        counts = {
            "memories": namespace.memories.count(),
            "subjects": namespace.subjects.count(),
        }
        # In the ledger before the commit: a restore of an older backup deletes it again.
        erasure_ledger.append(namespace_id=namespace.pk, scope="namespace")
        namespace.data_keys.all().delete()
        namespace_id, slug = namespace.pk, namespace.slug
        Namespace.objects.filter(pk=namespace_id).delete()
        metrics.count_purged_memories(via="namespace", memories=counts["memories"])
        audit_record(
            actor=actor,
            action="namespace.delete",
            namespace=namespace,
            object_type="namespace",
            object_id=str(namespace_id),
            details={**counts, "slug": slug},
        )
    return counts


def user_invite(
    *, actor: Actor, namespace: Namespace, username: str, email: str, role: str
) -> User:
    """Create a dashboard user without a password and make them a member with `role`; they
    set their password through a one-time link (the caller makes it: Django's password-reset
    token, which stops working once the password is set). Audited without the link."""
    if role not in MembershipRole.values:
        raise ApplicationError(gettext_noop("Unknown role."), details={"role": role})
    username = username.strip()
    if not username:
        raise ApplicationError(
            gettext_noop("Give a user name."), details={"username": ["required"]}
        )
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError as error:
        raise ApplicationError(
            gettext_noop("A user name is letters, digits and @ . + - _ only."),
            details={"username": ["invalid"]},
        ) from error
    with transaction.atomic():
        if User.objects.filter(username__iexact=username).exists():
            raise ApplicationError(
                gettext_noop("A user with that name exists already: add them instead."),
                code="conflict",
                status_code=409,
                details={"username": ["taken"]},
            )
        user = User.objects.create_user(username=username, email=email.strip(), password=None)
        Membership.objects.create(user=user, namespace=namespace, role=role)
        audit_record(
            actor=actor,
            action="user.invite",
            namespace=namespace,
            object_type="user",
            object_id=str(user.pk),
            details={"role": role},
        )
    return user
