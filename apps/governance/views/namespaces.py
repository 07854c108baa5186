"""Namespaces: the list (and creating one, for superusers), a namespace's policies (each
change previewed as a dry run before it is saved), and its members (add, invite with a
one-time set-password link, change role, remove; the last owner stays)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_http_methods, require_POST

from apps.governance.forms import (
    SETTINGS_FIELDS,
    MemberAddForm,
    MemberInviteForm,
    NamespaceCreateForm,
    NamespaceSettingsForm,
)
from apps.governance.policies import policy_preview
from apps.governance.views.access import (
    OWNER,
    DashboardRequest,
    actor_of,
    namespace_for_request,
    page_context,
)
from apps.namespaces.models import Membership, MembershipRole
from apps.namespaces.selectors import namespaces_for_user
from apps.namespaces.services import (
    membership_remove,
    membership_set,
    namespace_create,
    namespace_update,
    user_invite,
)
from memoryhub.exceptions import ApplicationError


@login_required
@require_http_methods(["GET", "POST"])
def namespace_list(request: DashboardRequest) -> HttpResponse:
    """The user's namespaces with their role and size; superusers also create one here."""
    form = NamespaceCreateForm(request.POST or None)
    if request.method == "POST":
        if not request.user.is_superuser:
            raise PermissionDenied(_("Only an administrator creates namespaces."))
        if form.is_valid():
            try:
                created = namespace_create(
                    actor=actor_of(request),
                    slug=form.cleaned_data["slug"],
                    name=form.cleaned_data["name"],
                    owner=request.user,
                )
            except ApplicationError as error:
                form.add_error("slug", error.localized)
            else:
                messages.success(request, _("Namespace created."))
                return redirect("governance:namespace_settings", slug=created.slug)
    rows = namespaces_for_user(request.user).annotate(
        member_count=Count("memberships", distinct=True)
    )
    roles = dict(Membership.objects.filter(user=request.user).values_list("namespace_id", "role"))
    return render(
        request,
        "governance/namespaces.html",
        {
            "rows": [
                (n, MembershipRole(roles.get(n.pk, MembershipRole.OWNER)).label) for n in rows
            ],
            "form": form,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def namespace_settings(request: DashboardRequest, slug: str) -> HttpResponse:
    """The namespace's policies: a first POST shows what the change would do (a dry run);
    the second, confirmed, saves it (audited: which fields changed)."""
    namespace = namespace_for_request(request, slug, OWNER)
    form = NamespaceSettingsForm(request.POST or None, instance=_copy(namespace))
    context: dict[str, Any] = page_context(request, namespace, form=form)
    if request.method == "POST" and form.is_valid():
        changes = form.changes(namespace)
        if not changes:
            messages.info(request, _("Nothing changed."))
            return redirect("governance:namespace_settings", slug=slug)
        if request.POST.get("confirm") == "1":
            namespace_update(actor=actor_of(request), namespace=namespace, **changes)
            messages.success(request, _("Settings saved."))
            return redirect("governance:namespace_settings", slug=slug)
        context["effects"] = policy_preview(namespace=namespace, changes=changes)
        context["posted"] = [
            (name, value) for name in SETTINGS_FIELDS for value in request.POST.getlist(name)
        ]
        context["changed"] = [form[name] for name in SETTINGS_FIELDS if name in changes]
    return render(request, "governance/namespace_settings.html", context)


def _copy(namespace: Any) -> Any:
    """The form edits a copy: the namespace itself keeps its saved values to compare with."""
    return type(namespace).objects.get(pk=namespace.pk)


@login_required
def members(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, OWNER)
    return render(
        request,
        "governance/members.html",
        page_context(
            request,
            namespace,
            members=Membership.objects.filter(namespace=namespace)
            .select_related("user")
            .order_by("user__username"),
            roles=MembershipRole.choices,
            add_form=MemberAddForm(prefix="add"),
            invite_form=MemberInviteForm(prefix="invite"),
        ),
    )


@login_required
@require_POST
def member_change(request: DashboardRequest, slug: str) -> HttpResponse:
    """Add an existing user, invite a new one, change a role, or remove a member."""
    namespace = namespace_for_request(request, slug, OWNER)
    back = reverse("governance:members", kwargs={"slug": slug})
    actor = actor_of(request)
    action = request.POST.get("action", "")
    try:
        if action == "invite":
            invite = MemberInviteForm(request.POST, prefix="invite")
            if not invite.is_valid():
                raise ApplicationError(gettext_noop("Give a user name and a role."))
            user = user_invite(actor=actor, namespace=namespace, **invite.cleaned_data)
            link = request.build_absolute_uri(
                reverse(
                    "governance:set_password",
                    kwargs={
                        "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
                        "token": default_token_generator.make_token(user),
                    },
                )
            )
            return render(
                request,
                "governance/invited.html",
                page_context(request, namespace, invited=user, link=link),
            )
        if action == "add":
            add = MemberAddForm(request.POST, prefix="add")
            if not add.is_valid():
                raise ApplicationError(gettext_noop("Give a user name and a role."))
            existing = User.objects.filter(username=add.cleaned_data["username"]).first()
            if existing is None:
                raise ApplicationError(gettext_noop("No user has that name: invite them instead."))
            membership_set(
                actor=actor, namespace=namespace, user=existing, role=add.cleaned_data["role"]
            )
        elif action in ("role", "remove"):
            member = (
                Membership.objects.filter(namespace=namespace, user_id=request.POST.get("user", ""))
                .select_related("user")
                .first()
                if request.POST.get("user", "").isdigit()
                else None
            )
            if member is None:
                raise ApplicationError(gettext_noop("That user is not a member."))
            if action == "remove" and request.POST.get("confirm") != "1":
                # Asked first: who loses what.
                return render(
                    request,
                    "governance/member_remove.html",
                    page_context(request, namespace, member=member),
                )
            if action == "remove":
                membership_remove(actor=actor, namespace=namespace, user=member.user)
            else:
                membership_set(
                    actor=actor,
                    namespace=namespace,
                    user=member.user,
                    role=request.POST.get("role", ""),
                )
        else:
            raise ApplicationError(gettext_noop("Unknown action."))
    except ApplicationError as error:
        messages.error(request, error.localized)
        return redirect(back)
    messages.success(request, _("Members updated."))
    return redirect(back)
