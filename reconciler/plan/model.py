"""The Plan: a pure value, and the one document every renderer reads.

A Plan is a pydantic model so that the JSON view, a saved plan file and the
human views are the same data: the text and markdown renderers read this
value and compute nothing of their own.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PLAN_FORMAT_VERSION = 1

EntryKind = Literal["user", "domain"]


class Action(str, Enum):
    """The closed set of things a plan can do to one access entry."""

    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"

    @property
    def symbol(self) -> str:
        return {"create": "+", "update": "~", "delete": "-"}[self.value]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EntryChange(_Frozen):
    """One user or domain gaining, changing or losing a role."""

    kind: EntryKind
    key: str  # email or domain
    action: Action
    before: str | None = None  # role before; None for CREATE
    after: str | None = None  # role after; None for DELETE
    entry_id: str | None = None  # the live workspace-user/-domain id, when it exists
    location: str | None = None  # manifest file:line of the desired entry
    reason: str = ""  # for display only: never drives apply


class ApiCall(_Frozen):
    method: str
    path: str  # relative to /v1
    limit_class: str = "default"


class AccessSnapshot(_Frozen):
    """Who has which role on one access list (email/domain → role)."""

    users: dict[str, str] = Field(default_factory=dict)
    domains: dict[str, str] = Field(default_factory=dict)

    def owners(self) -> list[str]:
        return [k for k, r in {**self.users, **self.domains}.items() if r == "owner"]


class AccessChange(_Frozen):
    """Bring one access list (a group's or a standalone workspace's) in line.

    ``strategy`` says how: ``patch`` when only roles change (one PATCH per
    entry, nobody is re-invited), ``replace`` when entries come or go (one
    POST of the whole list, the only call that adds or removes).
    """

    address: str
    workspace_id: str
    workspace_name: str | None = None
    location: str | None = None
    authoritative: bool = True
    strategy: Literal["patch", "replace"]
    entries: tuple[EntryChange, ...]
    before: AccessSnapshot  # live, when planned: apply refuses if it changed since
    after: AccessSnapshot  # the whole list once applied
    notify: bool = False
    message: str | None = None
    calls: tuple[ApiCall, ...]

    @property
    def removals(self) -> tuple[EntryChange, ...]:
        return tuple(e for e in self.entries if e.action is Action.DELETE)


class ManagedAccess(_Frozen):
    """The entries this tool manages on one list: what state records after apply."""

    address: str
    workspace_id: str
    users: dict[str, str] = Field(default_factory=dict)
    domains: dict[str, str] = Field(default_factory=dict)


class Cost(_Frozen):
    """What applying costs: calls per limit class, credits, least time."""

    calls_by_class: dict[str, int] = Field(default_factory=dict)
    refresh_reads: int = 0  # list pages apply re-reads before its first write
    workspace_credits: int = 0
    min_seconds: float = 0.0

    @property
    def total_calls(self) -> int:
        return sum(self.calls_by_class.values())


class PlanSummary(_Frozen):
    create: int = 0
    update: int = 0
    delete: int = 0

    @property
    def total(self) -> int:
        return self.create + self.update + self.delete


class Plan(_Frozen):
    format_version: int = PLAN_FORMAT_VERSION
    changes: tuple[AccessChange, ...] = ()
    unchanged: tuple[str, ...] = ()  # managed addresses already in line
    managed: tuple[ManagedAccess, ...] = ()  # every planned list, changed or not
    summary: PlanSummary = PlanSummary()
    cost: Cost = Cost()
    warnings: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    # What the plan was computed from; apply --plan refuses a stale plan.
    manifest_digest: str = ""
    live_fingerprint: str = ""
    state_lineage: str = ""
    state_serial: int = 0

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    @property
    def removals(self) -> tuple[tuple[str, EntryChange], ...]:
        return tuple((c.address, e) for c in self.changes for e in c.removals)
