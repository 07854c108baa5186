"""A namespace's members: roles changed, members removed, people added or invited with a
one-time link. Owners only."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_POST

from apps.dashboard.members.forms import (
    MemberAddForm,
    MemberInviteForm,
)
from apps.dashboard.pages import (
    OWNER,
    DashboardRequest,
    actor_of,
    namespace_for_request,
    page_context,
)
from apps.namespaces.models import Membership, MembershipRole
from apps.namespaces.services import (
    membership_remove,
    membership_set,
    user_invite,
)
from memoryhub.exceptions import ApplicationError


@login_required
def members(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, OWNER)
    return render(
        request,
        "dashboard/members/members.html",
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
    back = reverse("dashboard:members:list", kwargs={"slug": slug})
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
                    "dashboard:account:set_password",
                    kwargs={
                        "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
                        "token": default_token_generator.make_token(user),
                    },
                )
            )
            return render(
                request,
                "dashboard/members/invited.html",
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
                    "dashboard/members/member_remove.html",
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
