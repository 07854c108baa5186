"""Which namespace roles a person's groups at the identity provider grant: the role map of
MEMORYHUB_OIDC_ROLE_MAP, read and applied. Pure: no Django.

The map is JSON: a group to a list of `[namespace slug or "*", role]` pairs, for example
`{"memoryhub-admins": [["*", "owner"]], "support": [["support", "viewer"]]}`. `"*"` is every
namespace, those created later included. Where several groups grant roles in one namespace,
the highest wins (owner > editor > viewer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

EVERY_NAMESPACE = "*"
ROLES = ("viewer", "editor", "owner")  # lowest first
_RANK = {role: rank for rank, role in enumerate(ROLES, start=1)}

RoleMap = dict[str, list[tuple[str, str]]]


@dataclass(frozen=True)
class GrantedRoles:
    """The roles a set of groups grants: per namespace slug, and in every namespace."""

    by_namespace: dict[str, str] = field(default_factory=dict)
    every_namespace: str | None = None

    def role_in(self, slug: str) -> str | None:
        """The role in the namespace `slug`: the higher of its own and the every-namespace one."""
        return higher(self.by_namespace.get(slug), self.every_namespace)


def higher(first: str | None, second: str | None) -> str | None:
    if first is None or second is None:
        return first or second
    return first if _RANK[first] >= _RANK[second] else second


def parse_role_map(text: str) -> RoleMap:
    """The role map in `text`, checked; ValueError saying what is wrong otherwise."""
    if not text.strip():
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg})") from None
    if not isinstance(raw, dict):
        raise ValueError('a JSON object of group → [[namespace slug or "*", role], …]')
    role_map: RoleMap = {}
    for group, grants in raw.items():
        if not isinstance(grants, list):
            raise ValueError(f"group {group!r}: a list of [namespace, role] pairs")
        role_map[group] = [_grant(group, grant) for grant in grants]
    return role_map


def _grant(group: str, grant: object) -> tuple[str, str]:
    if (
        not isinstance(grant, list)
        or len(grant) != 2
        or not all(isinstance(part, str) and part for part in grant)
    ):
        raise ValueError(f"group {group!r}: {grant!r} is not a [namespace, role] pair")
    slug, role = grant
    if role not in _RANK:
        raise ValueError(f"group {group!r}: unknown role {role!r} (owner, editor or viewer)")
    return slug, role


def groups_from_claim(value: object) -> list[str]:
    """The groups in a token's groups claim: a list of names (or one name). Anything else
    grants nothing."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [group for group in value if isinstance(group, str)]
    return []


def roles_for(role_map: RoleMap, groups: list[str]) -> GrantedRoles:
    """The roles `groups` grant under `role_map`."""
    by_namespace: dict[str, str] = {}
    every: str | None = None
    for group in groups:
        for slug, role in role_map.get(group, []):
            if slug == EVERY_NAMESPACE:
                every = higher(every, role)
            else:
                by_namespace[slug] = higher(by_namespace.get(slug), role) or role
    return GrantedRoles(by_namespace=by_namespace, every_namespace=every)
