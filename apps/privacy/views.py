"""The privacy portal's pages: what is remembered about a person, and what they can do about
it. Each page is bound to the one subject of the portal session in its cookie; any other
subject's address answers "not found". Pages work without JavaScript; htmx only enhances."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import rotate_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.cache import add_never_cache_headers
from django.utils.dateparse import parse_datetime
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_ratelimit.core import is_ratelimited

from apps.audit.actors import Actor
from apps.memories.models import Kind, Memory
from apps.memories.row_encryption import KeyCache
from apps.memories.services import subject_export
from apps.pipeline.timeline import fact_timelines
from apps.privacy import selectors, services
from apps.privacy.forms import CorrectForm, EraseForm, TopicForm
from apps.privacy.middleware import FRAMED
from apps.privacy.models import Flow, PortalSession
from memoryhub.client_address import client_address
from memoryhub.exceptions import ApplicationError
from memoryhub.row_security import namespace_wall

COOKIE = "memoryhub_portal"
COOKIE_PATH = "/portal/"
FLOW_PAGES = {
    Flow.OVERVIEW: "privacy:overview",
    Flow.MEMORIES: "privacy:memories",
    Flow.EXPORT: "privacy:export",
    Flow.ERASE: "privacy:erase",
    Flow.PAUSE: "privacy:pause",
}


class PortalRequest(HttpRequest):
    portal: PortalSession


def _address_key(group: str, request: HttpRequest) -> str:
    return client_address(request) or "unknown"


def _session_key(group: str, request: HttpRequest) -> str:
    session: PortalSession = request.portal  # type: ignore[attr-defined]
    return str(session.pk)


def _too_many(request: HttpRequest) -> HttpResponse:
    response = render(request, "privacy/message.html", {"kind": "rate"}, status=429)
    response["Retry-After"] = "60"
    add_never_cache_headers(response)
    return response


def _rate_limited(
    request: HttpRequest, key: Callable[[str, HttpRequest], str], rate: str | None
) -> bool:
    return is_ratelimited(
        request, group=f"portal-{key.__name__}", key=key, rate=rate, increment=True
    )


def _not_found(request: HttpRequest) -> HttpResponse:
    response = render(request, "privacy/message.html", {"kind": "not_found"}, status=404)
    add_never_cache_headers(response)
    return response


def _frame(response: HttpResponse, session: PortalSession) -> HttpResponse:
    """No framing, unless the namespace names the sites that may frame its portal."""
    origins = session.namespace.portal_frame_origins
    if origins:
        response._csp_replace = {"frame-ancestors": list(origins)}  # type: ignore[attr-defined]
        response.xframe_options_exempt = True
        # Its cookies must then cross sites too (apps/privacy/middleware.py): Secure only.
        setattr(response, FRAMED, settings.SESSION_COOKIE_SECURE)
    return response


def portal_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page of the portal: limited per address and per session, bound to the session's
    subject (anything else is not found), in the session's language, behind the namespace's
    row-level wall, never cached."""

    @wraps(view)
    def wrapped(request: HttpRequest, subject_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        if _rate_limited(request, _address_key, settings.MEMORYHUB_PORTAL_ADDRESS_RATE):
            return _too_many(request)
        key = request.COOKIES.get(COOKIE, "")
        session = services.portal_session_for(key=key, subject_id=subject_id)
        if session is None:
            services.portal_refusal_record(key=key, subject_id=subject_id, request=request)
            return _not_found(request)
        portal_request: PortalRequest = request  # type: ignore[assignment]
        portal_request.portal = session
        if _rate_limited(request, _session_key, settings.MEMORYHUB_PORTAL_SESSION_RATE):
            return _too_many(request)
        with translation.override(session.locale), namespace_wall(session.namespace_id):
            response = view(portal_request, *args, **kwargs)
            if hasattr(response, "render"):
                response.render()
        response.headers.setdefault("Content-Language", session.locale)
        add_never_cache_headers(response)
        return _frame(response, session)

    return wrapped


def _actor(request: PortalRequest) -> Actor:
    return Actor.for_subject(request.portal.subject_id, request, session=request.portal.pk)


def _context(request: PortalRequest, **extra: Any) -> dict[str, Any]:
    session = request.portal
    return {
        "portal": session,
        "subject": session.subject,
        "namespace": session.namespace,
        "return_url": session.return_url,
        "languages": settings.LANGUAGES,
        "kinds": Kind,
        "idle_minutes": settings.MEMORYHUB_PORTAL_IDLE_MINUTES,
        **extra,
    }


def _page(request: PortalRequest, name: str) -> str:
    return reverse(name, kwargs={"subject_id": request.portal.subject_id})


# --- Entry ---------------------------------------------------------------------------------


@require_GET
def enter(request: HttpRequest, token: str) -> HttpResponse:
    """Exchange a link's token for a portal session (a cookie), then open the link's task.
    The token leaves the address bar with the redirect."""
    if _rate_limited(request, _address_key, settings.MEMORYHUB_PORTAL_ADDRESS_RATE):
        return _too_many(request)
    try:
        session, key = services.portal_enter(token=token[:200], request=request)
    except services.PortalEntryRefused as refused:
        with translation.override(refused.locale or translation.get_language()):
            status = 404 if refused.reason == "unknown" else 410
            response = render(
                request, "privacy/message.html", {"kind": refused.reason}, status=status
            )
        add_never_cache_headers(response)
        response["Referrer-Policy"] = "no-referrer"
        return response
    # A new portal session gets a new CSRF token, as a login does: a token planted in this
    # browser before the link was opened no longer passes.
    rotate_token(request)
    target = reverse(FLOW_PAGES[Flow(session.link.flow)], kwargs={"subject_id": session.subject_id})
    response = HttpResponseRedirect(target, status=303)
    framed = bool(session.namespace.portal_frame_origins) and settings.SESSION_COOKIE_SECURE
    response.set_cookie(
        COOKIE,
        key,
        path=COOKIE_PATH,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        # A site that frames the portal is another site: its frame sends the cookie only so.
        samesite="None" if framed else "Lax",
    )
    response["Referrer-Policy"] = "no-referrer"
    add_never_cache_headers(response)
    return _frame(response, session)


# --- An erasure's receipt, fetched again by its code ---------------------------------------


def receipt_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page of an erasure's receipt: no portal session (the person is erased), only the
    code they were shown; limited per address, in the language they erased in, never
    cached nor framed, and its address never sent on. Any other code is not found."""

    @wraps(view)
    def wrapped(request: HttpRequest, code: str) -> HttpResponse:
        if _rate_limited(request, _address_key, settings.MEMORYHUB_PORTAL_ADDRESS_RATE):
            return _too_many(request)
        receipt = selectors.erasure_receipt(code=code)
        if receipt is None:
            services.receipt_refusal_record(request=request)
            response = _not_found(request)
        else:
            with translation.override(receipt.locale):
                response = view(request, receipt, code)
                if hasattr(response, "render"):
                    response.render()
            response.headers.setdefault("Content-Language", receipt.locale)
        add_never_cache_headers(response)
        response["Referrer-Policy"] = "no-referrer"
        return response

    return wrapped


@require_GET
@receipt_page
def receipt(request: HttpRequest, found: selectors.Receipt, code: str) -> HttpResponse:
    """The receipt, to read or print."""
    context = {"receipt": found, "languages": settings.LANGUAGES, **_receipt_links(request, code)}
    return render(request, "privacy/receipt.html", context)


@require_GET
@receipt_page
def receipt_json(request: HttpRequest, found: selectors.Receipt, code: str) -> HttpResponse:
    """The receipt as a JSON file to keep."""
    document = selectors.receipt_document(found)
    response = HttpResponse(json.dumps(document, indent=2), content_type="application/json")
    stamp = found.erased_at.strftime("%Y-%m-%d")
    response["Content-Disposition"] = f'attachment; filename="erasure-receipt-{stamp}.json"'
    return response


# --- Pages ---------------------------------------------------------------------------------


@portal_page
@require_GET
def overview(request: PortalRequest) -> HttpResponse:
    summary = selectors.summary(request.portal.subject)
    return render(request, "privacy/overview.html", _context(request, summary=summary))


@portal_page
@require_http_methods(["GET", "POST"])
def memories(request: PortalRequest) -> HttpResponse:
    """What is remembered, grouped by kind; one kind (or the history) page by page; a search
    (POSTed: the words may be personal)."""
    subject = request.portal.subject
    keys = KeyCache()
    form = TopicForm(request.POST or None)
    context = _context(request, form=form)
    if request.method == "POST":
        if form.is_valid():
            found = selectors.search(subject, form.cleaned_data["q"], keys)
            context.update(results=found, searched=True)
        template = "privacy/memories.html"
        if getattr(request, "htmx", False):
            template += "#results"
        return render(request, template, context)
    kind = request.GET.get("kind", "")
    if kind == "history" or kind in Kind.values:
        page = selectors.kind_page(
            subject, kind, keys, after=request.GET.get("after", "")[:200], past=kind == "history"
        )
        label = _("History") if kind == "history" else selectors.kind_label(kind)
        context.update(page=page, kind=kind, label=label)
        if kind == "history":
            context["timelines"] = fact_timelines(subject=subject, keys=keys)
    else:
        context.update(
            groups=selectors.grouped(subject, keys), history=selectors.history(subject).count()
        )
    return render(request, "privacy/memories.html", context)


@portal_page
@require_GET
def memory(request: PortalRequest, memory_id: str) -> HttpResponse:
    subject = request.portal.subject
    found = selectors.memory_of(subject, memory_id)
    if found is None:
        return _not_found(request)
    return _memory_page(request, found, KeyCache())


@portal_page
@require_http_methods(["GET", "POST"])
def correct(request: PortalRequest, memory_id: str) -> HttpResponse:
    """Correct a memory: a new version, marked as the person's own correction."""
    subject = request.portal.subject
    found = selectors.memory_of(subject, memory_id)
    if found is None:
        return _not_found(request)
    if request.method == "GET":
        return redirect(_page(request, "privacy:memories") + f"{found.pk}/#correct")
    keys = KeyCache()
    form = CorrectForm(request.POST)
    if form.is_valid():
        try:
            services.memory_correct(
                actor=_actor(request), memory=found, content=form.cleaned_data["content"], keys=keys
            )
        except ApplicationError as error:
            form.add_error("content", error.localized)
        else:
            messages.success(request, _("Corrected. The earlier wording stays in its history."))
            return redirect("privacy:memory", subject_id=subject.pk, memory_id=found.pk)
    return _memory_page(request, found, keys, form=form, status=422)


@portal_page
@require_POST
def confirm(request: PortalRequest, memory_id: str) -> HttpResponse:
    """A fact in doubt that the person says is still true."""
    subject = request.portal.subject
    found = selectors.memory_of(subject, memory_id)
    if found is None:
        return _not_found(request)
    try:
        services.memory_confirm(actor=_actor(request), memory=found)
    except ApplicationError as error:
        messages.error(request, error.localized)
    else:
        messages.success(request, _("Thank you: it is used again to answer you."))
    return redirect("privacy:memory", subject_id=subject.pk, memory_id=found.pk)


def _memory_page(
    request: PortalRequest,
    found: Memory,
    keys: KeyCache,
    *,
    form: CorrectForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """A memory with its history, what replaced it, and the correction form (blank, or as
    posted with its errors)."""
    subject = request.portal.subject
    (item,) = selectors.items(subject, [found], keys)
    return render(
        request,
        "privacy/memory.html",
        _context(
            request,
            item=item,
            # The wordings before the current one (the newest version is what it says now).
            versions=selectors.versions(found, keys)[1:],
            related=selectors.related(subject, found, keys),
            usage=selectors.memory_usage(subject, found.pk),
            form=form or CorrectForm(initial={"content": item.content}),
            current=not selectors.in_history(found),
        ),
        status=status,
    )


@portal_page
@require_http_methods(["GET", "POST"])
def delete(request: PortalRequest, memory_id: str) -> HttpResponse:
    """Delete one memory, after a confirmation that shows it."""
    subject = request.portal.subject
    found = selectors.memory_of(subject, memory_id)
    if found is None:
        return _not_found(request)
    if request.method == "POST":
        services.memories_forget(actor=_actor(request), subject=subject, ids=[found.pk])
        messages.success(request, _("Deleted, with its earlier versions."))
        return redirect("privacy:memories", subject_id=subject.pk)
    (item,) = selectors.items(subject, [found], KeyCache())
    return render(request, "privacy/delete.html", _context(request, item=item))


@portal_page
@require_http_methods(["GET", "POST"])
def forget(request: PortalRequest) -> HttpResponse:
    """Delete by topic: search, see every match, choose, confirm."""
    subject = request.portal.subject
    keys = KeyCache()
    form = TopicForm(request.POST or None)
    context = _context(request, form=form)
    if request.method == "POST" and request.POST.get("confirm"):
        ids = []
        for value in request.POST.getlist("memory")[:1000]:
            with contextlib.suppress(ValueError):
                ids.append(uuid.UUID(value))  # the service keeps only the subject's own
        deleted = services.memories_forget(
            actor=_actor(request), subject=subject, ids=ids, topic=True
        )
        messages.success(
            request,
            ngettext("Deleted %(n)d memory.", "Deleted %(n)d memories.", deleted) % {"n": deleted},
        )
        return redirect("privacy:memories", subject_id=subject.pk)
    if request.method == "POST" and form.is_valid():
        context.update(
            matches=selectors.search(subject, form.cleaned_data["q"], keys), searched=True
        )
    return render(request, "privacy/forget.html", context)


@portal_page
@require_GET
def export(request: PortalRequest) -> HttpResponse:
    return render(request, "privacy/export.html", _context(request))


@portal_page
@require_GET
def export_json(request: PortalRequest) -> HttpResponse:
    """The JSON export under the published schema (the API's), as a download."""
    document = subject_export(actor=_actor(request), subject=request.portal.subject)
    response = HttpResponse(
        json.dumps(document, ensure_ascii=False, indent=2), content_type="application/json"
    )
    stamp = timezone.now().strftime("%Y-%m-%d")
    response["Content-Disposition"] = f'attachment; filename="my-memories-{stamp}.json"'
    return response


@portal_page
@require_GET
def export_print(request: PortalRequest) -> HttpResponse:
    """The same export as a readable page, made to be printed."""
    document = subject_export(actor=_actor(request), subject=request.portal.subject)
    by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in Kind.values}
    for row in document["memories"]:
        # The document's times are ISO text; the page shows them as dates, in the reader's zone.
        shown = {**row, "created_at": parse_datetime(row["created_at"])}
        shown["versions"] = [
            {**v, "created_at": parse_datetime(v["created_at"])} for v in row["versions"]
        ]
        by_kind.setdefault(row["kind"], []).append(shown)
    groups = [(selectors.kind_label(kind), rows) for kind, rows in by_kind.items()]
    return render(
        request,
        "privacy/export_print.html",
        _context(request, document=document, groups=groups, exported_at=timezone.now()),
    )


@portal_page
@require_http_methods(["GET", "POST"])
def erase(request: PortalRequest) -> HttpResponse:
    """Erase everything: a typed confirmation, then the receipt with a link to fetch it
    again (or, with a grace period, the date it will run, cancellable until then)."""
    subject = request.portal.subject
    form = EraseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        outcome = services.erasure_request(
            actor=_actor(request), subject=subject, locale=request.portal.locale
        )
        if isinstance(outcome, services.KeptReceipt):
            receipt = selectors.erasure_receipt(code=outcome.code)
            response = render(
                request,
                "privacy/erased.html",
                _context(request, **_receipt_links(request, outcome.code), receipt=receipt),
            )
            response.delete_cookie(COOKIE, path=COOKIE_PATH)
            response["Referrer-Policy"] = "no-referrer"
            return response
        messages.success(request, _("Your erasure is scheduled."))
        return redirect("privacy:erase", subject_id=subject.pk)
    summary = selectors.summary(subject)
    return render(request, "privacy/erase.html", _context(request, form=form, summary=summary))


def _receipt_links(request: HttpRequest, code: str) -> dict[str, str]:
    page = reverse("privacy:receipt", kwargs={"code": code})
    return {
        "receipt_url": request.build_absolute_uri(page),
        "receipt_json_url": reverse("privacy:receipt_json", kwargs={"code": code}),
    }


@portal_page
@require_POST
def erase_cancel(request: PortalRequest) -> HttpResponse:
    if services.erasure_cancel(actor=_actor(request), subject=request.portal.subject):
        messages.success(request, _("Erasure cancelled: nothing will be erased."))
    return redirect("privacy:erase", subject_id=request.portal.subject_id)


@portal_page
@require_http_methods(["GET", "POST"])
def pause(request: PortalRequest) -> HttpResponse:
    subject = request.portal.subject
    if request.method == "POST":
        paused = request.POST.get("paused") == "1"
        services.subject_pause(actor=_actor(request), subject=subject, paused=paused)
        messages.success(
            request,
            _("Memory paused: nothing new is remembered about you.")
            if paused
            else _("Memory resumed."),
        )
        return redirect("privacy:pause", subject_id=subject.pk)
    return render(request, "privacy/pause.html", _context(request))


@portal_page
@require_GET
def activity(request: PortalRequest) -> HttpResponse:
    """Who used the person's memories; with ?memory=<id>, the uses of that one alone (what
    its page counts)."""
    subject = request.portal.subject
    keys = KeyCache()
    chosen = request.GET.get("memory", "")
    only = selectors.memory_of(subject, chosen[:64]) if chosen else None
    if chosen and only is None:
        return _not_found(request)
    uses, older = selectors.access_history(
        subject,
        keys,
        before=request.GET.get("before", "")[:64],
        memory=only.pk if only else None,
    )
    context = _context(request, uses=uses, older=older)
    if only is not None:
        (context["only"],) = selectors.items(subject, [only], keys)
        context["usage"] = selectors.memory_usage(subject, only.pk)
    return render(request, "privacy/activity.html", context)


@portal_page
@require_GET
def blocked(request: PortalRequest) -> HttpResponse:
    """Personal data in what the person wrote: what the policy does with each kind, what of
    it is stored (marked), and each write it was found in."""
    found = selectors.personal_data(request.portal.subject, KeyCache())
    return render(request, "privacy/blocked.html", _context(request, found=found))


@portal_page
@require_POST
def language(request: PortalRequest) -> HttpResponse:
    """Switch the portal's language (kept with the session), back to the same page."""
    with contextlib.suppress(ApplicationError):
        services.portal_locale_set(
            actor=_actor(request), session=request.portal, locale=request.POST.get("language", "")
        )
    back = request.POST.get("next", "")
    home = _page(request, "privacy:overview")
    if not (back.startswith(home) and url_has_allowed_host_and_scheme(back, allowed_hosts=None)):
        back = home
    return redirect(back)


@portal_page
@require_POST
def leave(request: PortalRequest) -> HttpResponse:
    """End the portal session now (it would end by itself when idle)."""
    services.portal_session_end(actor=_actor(request), session=request.portal)
    response = render(request, "privacy/message.html", _context(request, kind="left"))
    response.delete_cookie(COOKIE, path=COOKIE_PATH)
    return response
