"""What the audit log's integrity box says of the events listed: how many of them the latest
walk of the chains checked, of which chain or chains, and why any were not (written after
the walk began, beyond a broken link, or the walk could not finish). Its counts come from
the list's own query (apps.audit.selectors.audit_page), so the box and the list's count agree."""

from __future__ import annotations

from dataclasses import dataclass

from apps.audit.models import ChainVerification, VerificationStatus
from apps.audit.selectors import AuditPage, AuditScope


@dataclass(frozen=True)
class IntegrityBox:
    # "unverified" (no walk yet), "intact", "broken" (in a chain listed), "stopped" (at a
    # broken link in a chain not listed) or "failed" (the walk could not finish)
    state: str
    verification: ChainVerification | None
    chain: str  # the slug of the one namespace whose chain is listed; "" for several
    chains: int  # how many chains the list spans (when not one namespace's)
    narrowed: bool  # filters beyond the namespace: the events listed are some of the chain's
    total: int
    capped: bool
    checked: int  # of the events listed, those the walk checked (0 when capped)
    unchecked: int  # of the events listed, those it did not reach

    @property
    def all_checked(self) -> bool:
        return self.unchecked == 0


def integrity_box(
    *,
    page: AuditPage,
    status: ChainVerification | None,
    scope: AuditScope,
    chain: str,
    chains: int,
    narrowed: bool,
) -> IntegrityBox:
    """The box for `page`'s list under the latest walk `status` (None before the first)."""
    return IntegrityBox(
        state=_state(status, scope, chain),
        verification=status,
        chain=chain,
        chains=chains,
        narrowed=narrowed,
        total=page.total,
        capped=page.capped,
        checked=0 if page.capped else page.checked,
        unchecked=page.total if page.unchecked is None else page.unchecked,
    )


def _state(status: ChainVerification | None, scope: AuditScope, chain: str) -> str:
    if status is None:
        return "unverified"
    if status.status == VerificationStatus.FAILED:
        return "failed"
    if status.status != VerificationStatus.BROKEN:
        return "intact"
    listed = (
        [scope.namespaces[chain]]
        if chain
        else (None if scope.everything else list(scope.namespaces.values()))
    )
    return "broken" if listed is None or status.broken_chain in listed else "stopped"
