"""The service's words that every layer shares: roles, their order, rate classes.

One ground module, below everything else: ``manifest/`` validates a role
with it, ``plan/`` diffs, ranks and costs with it, ``api/`` types its bodies
and classifies its calls with it, and the emulator (which must not import
the client) checks what it is sent against it.  It is vocabulary, not code
of any layer: nothing here does I/O or imports anything of reconciler's.

Called ``vocabulary`` rather than ``roles`` or ``limits`` because it holds
both, and because it is where a reader looks up what a word of the service's
interface means to the tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, get_args

# -- roles --------------------------------------------------------------------

# The service's WorkspaceRole, in the order its description lists them.
Role = Literal["owner", "editor", "collaborator", "viewer", "commenter"]
ROLES: Final[tuple[Role, ...]] = get_args(Role)

# The order of what each role may do, lowest first: a viewer only reads, a
# commenter comments, a collaborator works on tasks, an editor changes
# content, an owner administers.  The service documents the roles but not
# their order; every privilege class, policy cap and per-person summary
# reads it from here.
ROLE_ORDER: Final[tuple[Role, ...]] = ("viewer", "commenter", "collaborator", "editor", "owner")
_RANK: Final[Mapping[str, int]] = {role: rank for rank, role in enumerate(ROLE_ORDER)}

# What a change of one person's role does to what they may do.
Privilege = Literal["grant", "escalation", "downgrade", "revocation"]
PRIVILEGES: Final[tuple[Privilege, ...]] = get_args(Privilege)


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


# -- rate classes ---------------------------------------------------------------

# The service limits each company per minute and per class of call.
RateClass = Literal["default", "workspace_creation", "file_retrieval"]
DEFAULT: Final = "default"
WORKSPACE_CREATION: Final = "workspace_creation"
FILE_RETRIEVAL: Final = "file_retrieval"
RATE_CLASSES: Final[tuple[RateClass, ...]] = get_args(RateClass)

# Requests per minute per class, as the service's description documents them.
# Read-only: the client, the plan's cost and the emulator all start from it.
DEFAULT_LIMITS: Final[Mapping[str, int]] = MappingProxyType(
    {DEFAULT: 120, WORKSPACE_CREATION: 30, FILE_RETRIEVAL: 60}
)


# -- plans ------------------------------------------------------------------------

# The free plan's workspaces in total, active and archived; past it the service refuses a creation with 403.
FREE_PLAN_WORKSPACES: Final = 10
