"""Who did it: the acting party every service takes, with the request it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from apps.audit.models import ActorType
from memoryhub.client_address import client_address

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser
    from django.http import HttpRequest


class ApiKeyLike(Protocol):
    """What an actor needs of an API key (accounts' ApiKey, which sits above this app)."""

    prefix: str
    name: str


@dataclass(frozen=True)
class Actor:
    type: str
    id: str
    name: str
    user: AbstractBaseUser | None = None
    api_key: ApiKeyLike | None = None
    request_id: str = ""
    ip: str | None = None

    @classmethod
    def system(cls, name: str = "system") -> Actor:
        return cls(type=ActorType.SYSTEM, id="", name=name)

    @classmethod
    def for_job(cls, job_id: object, work: str) -> Actor:
        """A background job doing `work` ("write pipeline", "purge"): named for people by
        its work, known in the audit log by the job's id."""
        return cls(type=ActorType.SYSTEM, id=str(job_id)[:64], name=work)

    @classmethod
    def for_user(cls, user: AbstractBaseUser, request: HttpRequest | None = None) -> Actor:
        return cls(
            type=ActorType.USER,
            id=str(user.pk),
            name=user.get_username(),
            user=user,
            **_request_fields(request),
        )

    @classmethod
    def for_api_key(cls, api_key: ApiKeyLike, request: HttpRequest | None = None) -> Actor:
        return cls(
            type=ActorType.API_KEY,
            id=api_key.prefix,
            name=api_key.name,
            api_key=api_key,
            **_request_fields(request),
        )

    @classmethod
    def for_subject(
        cls, subject_id: object, request: HttpRequest | None = None, *, session: object = ""
    ) -> Actor:
        """The person a memory is about, in the privacy portal: known by the subject's id
        (never the app's external id, which may be an e-mail address), named by the portal
        session they act in (whose start event says who asked for its link)."""
        name = f"portal session {session}" if session else ""
        return cls(
            type=ActorType.SUBJECT, id=str(subject_id), name=name, **_request_fields(request)
        )

    @classmethod
    def anonymous(cls, request: HttpRequest | None = None, *, claimed_id: str = "") -> Actor:
        return cls(
            type=ActorType.ANONYMOUS, id=claimed_id[:64], name="", **_request_fields(request)
        )

    @property
    def display(self) -> str:
        return f"{self.type}:{self.name or self.id}"


def _request_fields(request: Any) -> dict[str, Any]:
    if request is None:
        return {}
    return {
        "request_id": getattr(request, "request_id", "") or "",
        "ip": client_address(request),
    }
