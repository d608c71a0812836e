"""The Plan: a pure value, and the one document every renderer reads.

A Plan is a pydantic model so that the JSON view, a saved plan file and the
human views are the same data: the text and markdown renderers read this
value and compute nothing of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import Annotated, Any, Literal, NamedTuple, TypeVar

from json.encoder import encode_basestring as _string  # what json.dumps(ensure_ascii=False) writes a str as

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from reconciler.models import Frozen
from reconciler.plan.findings import (  # re-exported: the Plan holds them
    Adoption as Adoption, Cost as Cost, ManagedAccess as ManagedAccess, Moved as Moved, NeedsPerson as NeedsPerson,
    PlanSummary as PlanSummary, ProbablySamePerson as ProbablySamePerson, Resolution as Resolution,
)
from reconciler.vocabulary import Privilege, Role

# 2: changes of every kind (access, connect, create, section, page, task),
# each with ``kind``, ``depends_on`` and ``calls``.
# 3: ``effects``, every workspace's access before and after the apply; access
# changes of ``governs: "join"`` (a list a connect replaces, no call of its
# own); review ``domain-grant``; entry flag ``not managed before``; access
# changes of ``governs: "create"`` (the list a creation gives, no call).
PLAN_FORMAT_VERSION = 3

_Model = TypeVar("_Model", bound=BaseModel)
_Entry = TypeVar("_Entry", "UserRole", "DomainRole")
_REQUIRED = object()


class _Fields(NamedTuple):
    """What ``made`` needs of a model: its fields in order with their defaults, the required ones, the
    ones whose default is made each time."""

    template: dict[str, Any]
    required: tuple[str, ...]
    factories: tuple[tuple[str, Callable[[], Any]], ...]


_FIELDS: dict[type[BaseModel], _Fields] = {}
_FIELDS_SET: dict[tuple[type[BaseModel], tuple[str, ...]], set[str]] = {}


def made(model: type[_Model], **values: Any) -> _Model:
    """A ``model`` the planner makes from values it has already validated (the manifests', the service's, its
    own): the value pydantic's validation would make of them, without validating them again (issue 40: a plan
    of 10,000 changes validated hundreds of thousands of them). The caller passes each field as the model
    holds it (a tuple for a tuple, an ``Action`` for an action); missing ones take their defaults. Only for
    the models of this module, which have no validator that changes what they are given; the tests hold
    ``made(M, **v) == M(**v)``, and the plans' JSON and digests byte for byte.

    Not ``model_construct``: in pydantic 2.12 it costs more than validation does."""
    fields = _FIELDS.get(model) or _fields(model)
    data = fields.template.copy()
    data.update(values)  # the fields' order stays the template's: pydantic writes them in the dict's order
    if len(data) != len(fields.template):
        raise TypeError(f"{model.__name__}: no field {sorted(set(values) - set(fields.template))}")
    for name in fields.required:
        if data[name] is _REQUIRED:
            raise TypeError(f"{model.__name__}: {name} is required")
    for name, factory in fields.factories:
        if name not in values:
            data[name] = factory()
    found = model.__new__(model)
    object.__setattr__(found, "__dict__", data)
    # One set per model and set of fields given, shared (issue 40: a set per value, 30 MiB at 10,000 changes).
    # Safe: these models are frozen, and pydantic copies the set before changing it (``model_copy``).
    given = tuple(values)
    fields_set = _FIELDS_SET.get((model, given))
    if fields_set is None:
        fields_set = _FIELDS_SET[(model, given)] = set(given)
    object.__setattr__(found, "__pydantic_fields_set__", fields_set)
    object.__setattr__(found, "__pydantic_extra__", None)
    object.__setattr__(found, "__pydantic_private__", None)
    return found


def _fields(model: type[BaseModel]) -> _Fields:
    infos = model.model_fields
    found = _FIELDS[model] = _Fields(
        template={name: _REQUIRED if info.is_required() else info.default for name, info in infos.items()},
        required=tuple(name for name, info in infos.items() if info.is_required()),
        factories=tuple((name, info.default_factory) for name, info in infos.items()  # type: ignore[misc]
                        if info.default_factory is not None))
    return found


EntryKind = Literal["user", "domain"]
# Why an entry is in the plan's "Review first" list: access taken away, a
# role raised, the owner role given or taken.  In the order that list shows
# them.  Every renderer and the JSON read it from the entry (``review``).
# handover: a rule's successor made owner where a revoked owner was the last.
Review = Literal["revocation", "handover", "owner-downgrade", "escalation", "owner-grant", "domain-grant"]
REVIEW_ORDER: tuple[Review, ...] = ("revocation", "handover", "owner-downgrade", "escalation", "owner-grant",
                                    "domain-grant")
SettingKind = Literal["section", "page", "task"]


class Action(str, Enum):
    """The closed set of things a plan can do to one thing: every change and
    every access entry says which (``change.action``), so summaries,
    renderers, progress and audit ask it rather than its class.

    NOOP is what an address already in line gets; the plan lists those in
    ``unchanged``, not as changes, so no change carries it.
    """

    CREATE = "create"
    UPDATE = "update"
    REPLACE = "replace"
    CONNECT = "connect"
    DELETE = "delete"
    NOOP = "no-op"

    @property
    def symbol(self) -> str:
        """Terraform's mark for it: ``+``, ``~``, ``-/+``, ``-``."""
        return _SYMBOLS[self]

    @property
    def done(self) -> str:
        """The word for it once made: ``created``, ``connected``..."""
        return _DONE[self]


_SYMBOLS = {Action.CREATE: "+", Action.UPDATE: "~", Action.REPLACE: "-/+", Action.CONNECT: "+",
            Action.DELETE: "-", Action.NOOP: " "}
_DONE = {Action.CREATE: "created", Action.UPDATE: "updated", Action.REPLACE: "replaced",
         Action.CONNECT: "connected", Action.DELETE: "deleted", Action.NOOP: "unchanged"}
# What one access entry can undergo.
EntryAction = Literal[Action.CREATE, Action.UPDATE, Action.DELETE]
# What a change is made to, for summaries: an access list, a workspace, a
# section/page/task value, an asset.
Subject = Literal["access", "workspace", "setting", "asset"]


SourceKind = Literal["entry", "team", "rule", "review", "directory"]


class EntrySource(Frozen):
    """What grants an entry, or what takes it away: typed, for JSON readers.

    entry: an explicit line of the list (``location``); team: a team the
    list names (``team``, ``location`` of the reference); rule: a rule's
    ``ensure`` or ``revoke`` (``rule``, with ``team`` when the rule names a
    team).  A removal whose grant is gone from the manifests carries what
    had put it there, as the state recorded it (without a location).
    review: an access review's revoke (``campaign``, ``reviewer``, the
    decision's line; ``due`` when revoked for not being reviewed by then).
    directory: a leaver of the directory (``since`` the day they were
    deactivated, ``location`` their line under ``directory.deactivated``), or
    the successor it names where they were the last owner.
    """

    kind: SourceKind
    location: str | None = None
    team: str | None = None
    rule: str | None = None
    campaign: str | None = None
    reviewer: str | None = None
    due: str | None = None
    # Written only when set: every plan's sources (and so its digest) stay what they were before leavers.
    since: str | None = Field(default=None, exclude_if=lambda value: value is None)

    @property
    def text(self) -> str:
        """``entry m.yaml:3``, ``team customer-success``, ``rule offboarded``, ``rule baseline (team cs)``."""
        if self.kind == "directory":
            return "the directory"
        if self.kind == "review":
            return f"review {self.campaign}"
        if self.kind == "rule":
            return f"rule {self.rule}" + (f" (team {self.team})" if self.team else "")
        if self.kind == "team":
            return f"team {self.team}"
        return f"entry {self.location}" if self.location else "entry"


class EntryChange(Frozen):
    """One user or domain gaining, changing or losing a role."""

    kind: EntryKind
    key: str  # email or domain
    action: EntryAction
    before: Role | None = None  # role before; None for CREATE
    after: Role | None = None  # role after; None for DELETE
    entry_id: str | None = None  # the live workspace-user/-domain id, when it exists
    location: str | None = None  # manifest file:line of the desired entry
    managed_since: str | None = None  # a removal from a non-authoritative list: listed since this date
    reason: str = ""  # for display only: never drives apply
    privilege: Privilege = "grant"  # grant, escalation, downgrade or revocation (reconciler.vocabulary)
    # owner: the owner role is given or taken; domain-wide: everyone of a domain;
    # expired: removed because its grant expired; drift: undoes a change made
    # outside reconciler to an entry the state recorded with another value;
    # not managed before: the state never recorded it (there since before the
    # tool, or granted in the web app); handover: a rule's successor made
    # owner where the owner it revokes was the last one.
    flags: tuple[Literal["owner", "domain-wide", "expired", "drift", "not managed before", "handover"], ...] = ()
    # Why: what grants the entry (a creation or a role change), or what takes
    # it away (a rule's revoke; the team or rule that had put it there); None
    # for an entry an authoritative list simply does not list.
    source: EntrySource | None = None
    # Other sources that reached the same person on this list and did not
    # decide the role (an explicit entry wins, then the highest role).
    outranked: tuple[EntrySource, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _drop_review(cls, data: Any) -> Any:
        # ``review`` is written (a computed field) but derived, never read
        # back: a saved plan's value is recomputed, so it cannot disagree.
        if isinstance(data, dict) and "review" in data:
            data = {k: v for k, v in data.items() if k != "review"}
        return data

    @property
    def why(self) -> str | None:
        """For display: the team or rule behind the entry (``via team cs``,
        ``revoked by rule offboarded``), and what it won over; None for a
        plain manifest entry, whose ``location`` says it all."""
        source = self.source
        if source is None:
            return None
        if self.action is Action.DELETE:
            if source.kind == "directory":
                return f"deactivated in the directory on {source.since}"
            if source.kind == "review":
                return (f"revoked in review {source.campaign}: not reviewed by {source.due}" if source.due else
                        f"revoked in review {source.campaign} by {source.reviewer}")
            if source.kind == "rule" and source.location:
                return f"revoked by rule {source.rule}"
            return f"left team {source.team}" if source.kind == "team" else f"no longer ensured by rule {source.rule}"
        if "handover" in self.flags:
            return ("successor named by the directory" if source.kind == "directory" else
                    f"successor named by rule {source.rule}")
        over = f", over {', '.join(o.text for o in self.outranked)}" if self.outranked else ""
        if source.kind == "entry":
            return f"explicit entry{over}" if over else None
        return f"via {source.text}{over}"

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented pattern; mypy flags any decorated property
    @property
    def review(self) -> Review | None:
        """Why a reviewer must read this entry first (a revocation, an
        escalation, a new owner, an owner downgraded), or None."""
        if "handover" in self.flags:
            return "handover"
        if self.privilege in ("revocation", "escalation"):
            return self.privilege
        if self.privilege == "grant" and self.after == "owner":
            return "owner-grant"
        if self.privilege == "downgrade" and self.before == "owner":
            return "owner-downgrade"
        if self.privilege == "grant" and self.kind == "domain":
            return "domain-grant"  # everyone of a domain, now and later: always read first
        return None

    @property
    def needs_review(self) -> bool:
        """What a reviewer must read first: see ``review``."""
        return self.review is not None


class ApiCall(Frozen):
    method: str
    path: str  # relative to /v1
    limit_class: str = "default"


class AccessSnapshot(Frozen):
    """Who has which role on one access list (email/domain → role)."""

    users: dict[str, Role] = Field(default_factory=dict)
    domains: dict[str, Role] = Field(default_factory=dict)

    def owners(self) -> list[str]:
        return [k for k, r in {**self.users, **self.domains}.items() if r == "owner"]


# One entry of an ``AccessView``: a slots dataclass, not a model (issue 40). The effects of a plan of 10,000
# workspaces hold half a million of them; as models they were 480 bytes and a validation each, as these 48
# bytes and none, and one (email, role) is one object wherever it appears (``AccessViews``). Pydantic
# validates and writes them as it did the models (the same JSON and schema; no docstring: it would become
# the schema's description).
@dataclass(frozen=True, slots=True)
class UserRole:
    __pydantic_config__ = ConfigDict(extra="forbid")

    email: str
    role: Role


@dataclass(frozen=True, slots=True)
class DomainRole:
    __pydantic_config__ = ConfigDict(extra="forbid")

    domain: str
    role: Role


class AccessView(Frozen):
    """One workspace's whole access, as the plan's ``effects`` write it: sorted lists, lower-case keys."""

    users: tuple[UserRole, ...] = ()
    domains: tuple[DomainRole, ...] = ()

    @classmethod
    def of(cls, snapshot: AccessSnapshot) -> AccessView:
        return AccessViews().of(snapshot.users, snapshot.domains)

    def snapshot(self) -> AccessSnapshot:
        return AccessSnapshot(users={u.email: u.role for u in self.users},
                              domains={d.domain: d.role for d in self.domains})


class AccessViews:
    """Makes ``AccessView`` values sharing their entries: one ``UserRole`` per (email, role) and one
    ``DomainRole`` per (domain, role) however many views hold it, so a workspace's view after a change
    holds the very entries of its view before, and only what the change adds is new (issue 40)."""

    __slots__ = ("_users", "_domains")

    def __init__(self) -> None:
        self._users: dict[tuple[str, Role], UserRole] = {}
        self._domains: dict[tuple[str, Role], DomainRole] = {}

    def of(self, users: Mapping[str, Role], domains: Mapping[str, Role]) -> AccessView:
        """The view of one list (``email -> role``, ``domain -> role``), its entries sorted by key."""
        return AccessView(users=_shared(self._users, users, UserRole),
                          domains=_shared(self._domains, domains, DomainRole))


def _shared(known: dict[tuple[str, Role], _Entry], entries: Mapping[str, Role],
            make: Callable[[str, Role], _Entry]) -> tuple[_Entry, ...]:
    """``entries`` sorted by key, each the one object ``known`` holds for its (key, role), made once."""
    found = []
    for item in sorted(entries.items()):
        entry = known.get(item)
        if entry is None:
            entry = known[item] = make(*item)
        found.append(entry)
    return tuple(found)


class Effect(Frozen):
    """One workspace whose users or domains will differ after the apply from
    what the service reports now, whatever call makes it so (its own list's
    change, a change of a list it shares with its group, a connect that
    replaces its list, its creation)."""

    workspace: str | None = Field(description="The workspace id; null for one this plan creates.")
    name: str | None = Field(description="The workspace's name.")
    creates: str | None = Field(description="The address of the change that creates it, or null.")
    before: AccessView = Field(description="Its access as the service reports it now (empty for a new one).")
    after: AccessView = Field(description="Its access once the plan is applied.")
    because: tuple[str, ...] = Field(description="The addresses of the changes that make the difference, in order.")

    def canonical_json(self, known: dict[int, str]) -> str:
        """This effect as the plan digest's canonical JSON writes it: exactly ``json.dumps(effect.model_dump(
        mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` (it has no display-only
        field), written straight from its fields, not through a dict of each (issue 40: the effects were half
        the digest's CPU). ``known``: the views after already written, by id (every workspace holding one list
        holds one view after), at most ``_KNOWN_VIEWS`` of them at a time, so the digest holds no copy of the
        effects."""
        after = known.get(id(self.after))
        if after is None:
            if len(known) >= _KNOWN_VIEWS:
                known.clear()
            after = known[id(self.after)] = _view_json(self.after)
        return (f'{{"after":{after},"because":[{",".join(map(_string, self.because))}],'
                f'"before":{_view_json(self.before)},"creates":{_nullable(self.creates)},'
                f'"name":{_nullable(self.name)},"workspace":{_nullable(self.workspace)}}}')


_KNOWN_VIEWS = 256


def _view_json(view: AccessView) -> str:
    domains = ",".join([f'{{"domain":{_string(d.domain)},"role":{_string(d.role)}}}' for d in view.domains])
    users = ",".join([f'{{"email":{_string(u.email)},"role":{_string(u.role)}}}' for u in view.users])
    return f'{{"domains":[{domains}],"users":[{users}]}}'


def _nullable(value: str | None) -> str:
    return "null" if value is None else _string(value)


class Reach(Frozen):
    """One workspace a group's list is on once applied, and its own list now.

    The per-person view compares ``before`` with the group's final list, so
    each person's row says what happens on that workspace: a member joining
    the group had a list of its own, and one this plan creates had none.
    """

    workspace: str  # 'ws_1 "Name"', or 'new "Name"' for one this plan creates
    workspace_id: str | None = None  # None: this plan creates it
    before: AccessSnapshot = AccessSnapshot()  # who has which role there now (nobody, for a new one)
    # No manifest names it, but it shows the homepage's access entries
    # (reconciler.live.shared_entries): probably connected to the group by hand.
    probable: bool = False


class LeftAlone(Frozen):
    """A live entry of a non-authoritative list that the manifest does not
    list and the plan leaves alone because there is no state: only the state
    says whether reconciler granted it (and so would remove it)."""

    address: str
    workspace_id: str
    kind: EntryKind
    key: str  # email or domain
    role: Role
    location: str | None = None  # the list's manifest file:line

    @property
    def text(self) -> str:
        return (f"{self.key} {self.role} on {self.address}: not listed; "
                "no state says whether reconciler granted it")


class _Change(Frozen):
    """What every change has: where it is, what it waits for, what it sends.

    ``depends_on`` names the addresses of earlier changes in the same plan
    that must have succeeded first; ``reason`` is for display only.
    """

    address: str
    location: str | None = None
    depends_on: tuple[str, ...] = ()
    calls: tuple[ApiCall, ...] = ()
    reason: str = ""


class AccessChange(_Change):
    """Bring one access list (a group's or a standalone workspace's) in line.

    ``strategy`` says how: ``patch`` when only roles change (one PATCH per
    entry, nobody is re-invited), ``replace`` when entries come or go (one
    POST of the whole list, the only call that adds or removes).  When
    ``rides_on`` names a creation in the same group, the final lists travel
    in that creation's body and this change sends no call of its own.
    """

    kind: Literal["access"] = "access"
    # list: a manifest's access list (with its teams, and the rules matching
    # its workspaces merged in).  rules: a workspace no manifest's list
    # governs (address ``unmanaged.<workspace id>``): only the matching rules'
    # entries are added, re-roled or removed, everything else on it is kept.
    # join: what a workspace joining a group loses and gains when it takes
    # over the group's list (the service's rule 1): the connect of the same
    # address (``rides_on``) makes it, so it sends no call of its own, and it
    # is reviewed, counted and judged like every other access change.
    # create: what a workspace this plan creates in a group is given: the
    # group's whole list (the service's rule 3), every entry a grant; the
    # creation of the same address (``rides_on``) makes it, no call of its
    # own, no workspace id yet (``workspace_id`` is empty), judged like a join.
    governs: Literal["list", "rules", "join", "create"] = "list"
    rules: tuple[str, ...] = ()  # the rules whose entries this change applies (their keys)
    action: Literal[Action.UPDATE] = Action.UPDATE  # its entries say what each gains or loses
    workspace_id: str
    workspace_name: str | None = None
    authoritative: bool = True
    rides_on: str | None = None
    # Every workspace the list reaches: a group's list is on all its members
    # ("ws_1 \"Name\"", or "new \"Name\"" for one this plan creates).
    reaches: tuple[str, ...] = ()
    # The same workspaces with the list each holds now (empty for a standalone list).
    reach: tuple[Reach, ...] = ()
    notified: tuple[str, ...] = ()  # emails the service will email (notify: true, newly added users)
    strategy: Literal["patch", "replace"]
    entries: tuple[EntryChange, ...]
    before: AccessSnapshot  # live, when planned: apply refuses if it changed since
    after: AccessSnapshot  # the whole list once applied
    notify: bool = False
    message: str | None = None
    # One list of the service that other lists of the manifests govern too (workspaces connected by hand):
    # one call writes it, this change's, with the entries of the changes it ``carries`` (their addresses);
    # each of those has no call of its own and names this one (``carried_by``). Written only when set, so
    # every other plan (and its digest) stays as it was (plan/merge.py).
    carries: tuple[str, ...] = Field(default=(), exclude_if=lambda value: not value)
    carried_by: str | None = Field(default=None, exclude_if=lambda value: value is None)

    @property
    def removals(self) -> tuple[EntryChange, ...]:
        return tuple(e for e in self.entries if e.action is Action.DELETE)

    @property
    def sides(self) -> frozenset[EntryKind]:
        """The sides (users, domains) its POST sends: those its entries change, and those ``after`` changes
        for the changes it carries (the same thing for a change that carries none)."""
        found: set[EntryKind] = {e.kind for e in self.entries}
        if self.carries:
            if self.after.users != self.before.users:
                found.add("user")
            if self.after.domains != self.before.domains:
                found.add("domain")
        return frozenset(found)

    @property
    def subject(self) -> Subject:
        return "access"


class ConnectChange(_Change):
    """Connect an existing workspace into a group (a 200, already connected, is success)."""

    kind: Literal["connect"] = "connect"
    action: Literal[Action.CONNECT] = Action.CONNECT
    group: str  # the group's address
    homepage_id: str
    workspace_id: str
    workspace_name: str | None = None

    @property
    def subject(self) -> Subject:
        return "workspace"


class CreateChange(_Change):
    """Create a workspace from a template inside a group: uses one credit."""

    kind: Literal["create"] = "create"
    action: Literal[Action.CREATE] = Action.CREATE
    group: str
    homepage_id: str
    template_id: str
    name: str
    # Typed from the manifest to the request body; JSON writes them as ISO dates.
    start_date: date | None = None
    target_end_date: date | None = None
    actual_end_date: date | None = None
    crm_one_deal_id: str | None = None
    crm_two_opportunity_id: str | None = None
    access: AccessSnapshot | None = None  # the group's final lists, riding on this creation
    access_address: str | None = None  # the group access change those lists belong to
    account_id: str | None = None  # the homepage's account: recorded in the intent, to find the workspace again
    credits: int = 1

    @property
    def subject(self) -> Subject:
        return "workspace"


class SettingChange(_Change):
    """Hide or show a section or page, complete or reopen a task.

    These values cannot be read back: ``before`` is what the state recorded
    as last written, ``None`` when it does not know.
    """

    kind: SettingKind
    action: Literal[Action.UPDATE] = Action.UPDATE
    workspace_address: str
    workspace_id: str
    item_id: str
    before: bool | None = None
    after: bool

    @property
    def field(self) -> str:
        return "completed" if self.kind == "task" else "hidden"

    @property
    def subject(self) -> Subject:
        return "setting"


AssetField = Literal["name", "description", "tags", "internal"]


class AssetChange(_Change):
    """Create an asset, replace it with a new one, or PATCH its fields.

    Assets cannot be listed or read back, so ``before`` is what the state
    recorded as last applied.  ``replace`` makes a new asset (a changed file,
    type, url, embed code or media metadata cannot be patched); the API has
    no delete, so ``asset_id`` (the old one) stays in the service.
    ``file_id`` set on a creation resumes an earlier apply whose file was
    created and uploaded but whose asset was not.
    """

    kind: Literal["asset"] = "asset"
    action: Literal[Action.CREATE, Action.REPLACE, Action.UPDATE]
    asset_type: str
    asset_id: str | None = None
    name: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    internal: bool = False
    url: str | None = None
    custom_code: str | None = None
    metadata: dict[str, float] | None = None
    file: str | None = None  # absolute path: apply reads, hashes and uploads these bytes
    file_label: str | None = None  # relative to the manifest root
    mime_type: str | None = None
    digest: str | None = None
    size: int | None = None
    file_id: str | None = None
    patch: tuple[AssetField, ...] = ()  # fields PATCHed (after the creation, for a new asset)
    before: dict[str, str | bool | list[str] | None] = Field(default_factory=dict)
    converts: bool = False  # docx/ppt/xlsx: converted in the background after creation

    @property
    def subject(self) -> Subject:
        return "asset"


Change = Annotated[
    AccessChange | ConnectChange | CreateChange | SettingChange | AssetChange, Field(discriminator="kind")
]


class DirectoryRead(Frozen):
    """How a plan made with ``--directory live`` read the directory (None: the committed ``directory:`` alone)."""

    mode: Literal["live"] = "live"
    address: str = Field(description="The state's address the directory was read from (never a password).")
    fingerprint: str = Field(description="sha256 of the live directory read: apply --plan refuses the plan once it moves.")
    waiting: int = Field(description="Additions to the directory's groups the plan does not grant: they wait for "
                                     "reconciler directory sync and a reviewed plan.")

    @property
    def text(self) -> str:
        """The plan's note, in every view."""
        waiting = (f"{self.waiting} addition{'' if self.waiting == 1 else 's'} to groups wait{'s' if self.waiting == 1 else ''}"
                   " for reconciler directory sync and a reviewed plan" if self.waiting else "no addition to a group waits")
        return (f"Made with the live directory of {self.address} (--directory live): its leavers and removals from "
                f"groups apply, nothing is granted from it; {waiting}.")


class Plan(Frozen):
    format_version: int = PLAN_FORMAT_VERSION
    changes: tuple[Change, ...] = ()  # in the order apply makes them
    unchanged: tuple[str, ...] = ()  # managed addresses already in line
    managed: tuple[ManagedAccess, ...] = ()  # every planned list, changed or not
    addresses: tuple[str, ...] = ()  # every address the manifests manage (in the targets)
    forgotten: tuple[str, ...] = ()  # state addresses no manifest names any more
    moved: tuple[Moved, ...] = ()  # addresses the manifests' moved: entries rename in the state (no call)
    reassert: bool = False
    live_workspaces: int | None = None  # the company's workspaces, when all were listed
    unmanaged_count: int | None = None  # workspaces no manifest names (untargeted plans, when known)
    # Of those, the ones a rule matches ("reached only by rules"; None: the
    # manifests have no rules, or the listing was not complete); the rest no
    # manifest and no rule reaches.
    rules_only_count: int | None = None
    # Lists of workspaces no manifest's list governs that the rules were
    # checked against (changed or not): "No changes" counts them too.
    rules_checked: int = 0
    unmanaged: tuple[str, ...] = ()  # their labels, with plan --show-unmanaged
    summary: PlanSummary = PlanSummary()
    cost: Cost = Cost()
    warnings: tuple[str, ...] = ()
    # Entries of non-authoritative lists left alone for lack of state (a
    # removal from such a list is planned only when the state recorded it).
    left_alone: tuple[LeftAlone, ...] = ()
    # Resources whose outcome is unknown: shown first, never "No changes".
    needs_person: tuple[NeedsPerson, ...] = ()
    # Creations of an interrupted apply found again by their intent: recorded first by apply.
    adopted: tuple[Adoption, ...] = ()
    # Every workspace whose access the apply changes, with its list before and
    # after (plan/effects.py): what apply checks the service against at the end.
    effects: tuple[Effect, ...] = ()
    # Addresses probably the same person as a revoked user: under Review first, not revoked.
    probably_same_person: tuple[ProbablySamePerson, ...] = ()
    targets: tuple[str, ...] = ()
    # What the plan was computed from; apply --plan refuses a stale plan.
    service: str = ""  # the service address (or emulator file) the plan read; set by the command
    manifest_digest: str = ""
    live_fingerprint: str = ""
    state_lineage: str = ""
    state_serial: int = 0
    # plan --directory live: where the directory was read, and what of it waits for a sync.
    directory: DirectoryRead | None = None

    @model_validator(mode="before")
    @classmethod
    def _digest_is_computed(cls, data: Any) -> Any:
        """A plan read back (JSON, a saved plan) drops its ``plan_digest``: it
        is always computed from the plan itself, never believed."""
        if isinstance(data, dict) and "plan_digest" in data:
            return {k: v for k, v in data.items() if k != "plan_digest"}
        return data

    @computed_field(description=(  # type: ignore[prop-decorator]  # pydantic's documented use
        "sha256 (64 hex digits) of the canonical JSON (keys sorted, no spaces, UTF-8) of everything apply acts "
        "on: changes (without location, reason and an asset's absolute file path), managed, forgotten, unchanged, addresses, targets, reassert, "
        "summary, effects, moved. 'apply --expect-digest' (or RECONCILER_EXPECT_DIGEST) applies only a plan with this digest."))
    @property
    def plan_digest(self) -> str:
        from reconciler.plan.digest import plan_digest

        return plan_digest(self)

    @property
    def has_changes(self) -> bool:
        """Something to apply: a change, or an address to move in the state."""
        return bool(self.changes or self.moved)

    @property
    def settled(self) -> bool:
        """Nothing to change, move, record or doubt: the one plan that may say "No changes"."""
        return not self.has_changes and not self.needs_person and not self.adopted

    @property
    def access_changes(self) -> tuple[AccessChange, ...]:
        return tuple(c for c in self.changes if isinstance(c, AccessChange))

    @property
    def removals(self) -> tuple[tuple[str, EntryChange], ...]:
        return tuple((c.address, e) for c in self.access_changes for e in c.removals)
