"""Reads of namespaces, scoped by the caller. Outside the caller's scope is NotFound (404)."""

from __future__ import annotations

from collections.abc import Collection

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils.translation import gettext_noop

from apps.audit.selectors import AuditScope
from apps.namespaces.models import ROLE_RANK, Membership, MembershipRole, Namespace
from memoryhub.exceptions import NotFound


def namespaces_for_user(
    user: User, *, min_role: str = MembershipRole.VIEWER
) -> QuerySet[Namespace]:
    if user.is_superuser:
        return Namespace.objects.all()
    roles = [
        role for role, rank in ROLE_RANK.items() if rank >= ROLE_RANK[MembershipRole(min_role)]
    ]
    return Namespace.objects.filter(memberships__user=user, memberships__role__in=roles)


def namespace_for_user(
    user: User, slug: str, *, min_role: str = MembershipRole.VIEWER
) -> Namespace:
    namespace = namespaces_for_user(user, min_role=min_role).filter(slug=slug).first()
    if namespace is None:
        raise NotFound(gettext_noop("Namespace not found."))
    return namespace


def user_role(user: User, namespace: Namespace) -> str | None:
    if user.is_superuser:
        return MembershipRole.OWNER
    return (
        Membership.objects.filter(user=user, namespace=namespace)
        .values_list("role", flat=True)
        .first()
    )


def namespace_with_role(user: User, slug: str) -> tuple[Namespace, str]:
    """The namespace the user may see, with the user's role in it (owner for superusers), in
    one query; NotFound outside the user's namespaces."""
    if user.is_superuser:
        namespace = Namespace.objects.filter(slug=slug).first()
        if namespace is None:
            raise NotFound(gettext_noop("Namespace not found."))
        return namespace, MembershipRole.OWNER
    membership = (
        Membership.objects.filter(user=user, namespace__slug=slug)
        .select_related("namespace")
        .first()
    )
    if membership is None:
        raise NotFound(gettext_noop("Namespace not found."))
    return membership.namespace, membership.role


def namespace_names(ids: Collection[int]) -> dict[int, str]:
    """The names of the namespaces with these ids (the caller has scoped the ids)."""
    return dict(Namespace.objects.filter(pk__in=list(ids)).values_list("pk", "name"))


def audit_scope_for(user: User) -> AuditScope:
    """What `user` may read of the audit log: a superuser every event; a member the events of
    their namespaces, with the subjects' external ids where they own or edit (a viewer sees
    the labels without them); anyone else none (one query)."""
    if user.is_superuser:
        every = dict(Namespace.objects.values_list("slug", "pk"))
        return AuditScope(everything=True, namespaces=every, identifying=frozenset(every.values()))
    identifying = {MembershipRole.OWNER, MembershipRole.EDITOR}
    rows = list(
        Membership.objects.filter(user=user).values_list("namespace__slug", "namespace_id", "role")
    )
    return AuditScope(
        everything=False,
        namespaces={slug: pk for slug, pk, _role in rows},
        identifying=frozenset(pk for _slug, pk, role in rows if role in identifying),
    )


def audit_scope_namespace(scope: AuditScope, slug: str) -> Namespace | None:
    """A namespace of the audit scope by slug (None outside it)."""
    if slug not in scope.namespaces:
        return None
    return Namespace.objects.filter(pk=scope.namespaces[slug]).first()
