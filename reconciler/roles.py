"""The order of workspace roles, written down once and used everywhere.

owner > editor > collaborator > commenter > viewer.  The service documents
the roles but not their order; this is the order of what each may do (an
owner administers, an editor changes content, a collaborator works on
tasks, a commenter comments, a viewer only reads), and every privilege
class, policy cap and per-person summary reads it from here.
"""

from __future__ import annotations

from typing import Literal

Privilege = Literal["grant", "escalation", "downgrade", "revocation"]

ROLE_ORDER: tuple[str, ...] = ("viewer", "commenter", "collaborator", "editor", "owner")
_RANK = {role: rank for rank, role in enumerate(ROLE_ORDER)}


def rank(role: str) -> int:
    """0 for viewer up to 4 for owner; -1 for a role the service added later."""
    return _RANK.get(role, -1)


def privilege(before: str | None, after: str | None) -> Privilege:
    """What a change from role ``before`` to ``after`` does (None: no access)."""
    if before is None:
        return "grant"
    if after is None:
        return "revocation"
    return "escalation" if rank(after) > rank(before) else "downgrade"
