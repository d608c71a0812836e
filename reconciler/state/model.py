"""What the state records: one ``State`` and the ``StateBuilder`` an apply records into.

The only part of ``reconciler.state`` that ``plan/`` imports: pure data, no
I/O.  Where a state is kept (a file, a PostgreSQL table) is the business of
the backends (``file.py``, ``postgres.py``).

Layout follows Terraform's: ``version``, ``lineage`` (a random id fixed at
creation, so a plan made against one state is never applied to another),
``serial`` (bumped on every write) and ``resources`` keyed by address.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

STATE_VERSION = 1


class RevokedByReview(BaseModel):
    """An entry an access review's revoke removed, as an apply carried it out."""

    model_config = ConfigDict(extra="forbid")
    campaign: str
    reviewer: str | None = None
    applied: str  # YYYY-MM-DD (UTC)
    serial: int  # the state serial that apply wrote


class AccessRecord(BaseModel):
    """The access entries this tool manages on one list: email/domain → role
    as last applied, and since when each has been managed
    (``"user:<email>"`` / ``"domain:<domain>"`` → ``YYYY-MM-DD``)."""

    model_config = ConfigDict(extra="forbid")
    users: dict[str, str] = Field(default_factory=dict)
    domains: dict[str, str] = Field(default_factory=dict)
    since: dict[str, str] = Field(default_factory=dict)
    # The entries a team or rule put there ("user:<email>" -> "team <key>" or
    # "rule <key>"): when one leaves the team or the rule, the plan names it.
    via: dict[str, str] | None = None  # None: nothing put there by a team or rule (not written)
    # The entries an access review revoked here ("user:<email>" -> when, by which apply): the
    # review's evidence (reconciler review report) says from it whether a revocation was applied.
    revoked: dict[str, RevokedByReview] | None = None


class AssetRecord(BaseModel):
    """What was last applied to an asset; none of it can be read back.

    ``file_id`` and ``uploaded`` are written as soon as they are true, so an
    apply interrupted between the upload and the asset's creation resumes
    with the same file.  ``None`` fields are unknown (never written by this
    tool, or imported).
    """

    model_config = ConfigDict(extra="forbid")
    type: str | None = None
    file: str | None = None
    digest: str | None = None
    file_id: str | None = None
    uploaded: bool | None = None
    url: str | None = None
    custom_code: str | None = None
    metadata: dict[str, float] | None = None
    name: str | None = None
    description: str | None = None
    tags: list[str] | None = None
    internal: bool | None = None
    # The asset's creation was sent and not answered (recorded before the
    # call, as Pulumi records a pending operation): it may exist.  A file
    # asset is simply tried again (one file backs one asset: a second creation
    # is refused); a link or embed is not, as nothing can tell.
    uncertain: bool | None = None
    # The service refused a creation because the file backs an asset already:
    # it exists, and its id is unknown until someone imports it.
    orphan: bool | None = None
    # The asset was created (its id is known) and the PATCH that follows the
    # creation (description, internal) has not been answered yet: a step of
    # its own, which the next plan sends as an update of that asset.
    pending_patch: list[str] | None = None


class CreationIntent(BaseModel):
    """A workspace creation about to be sent: written ahead of the call.

    The service gives a creation no key of ours, and a kill between the
    call and the record of its answer loses the new id.  So the journal
    records the intent durably (fsynced) before the call is sent, under the
    address with no id yet; the answer's record replaces it.  An intent
    still open when the next plan runs is a creation this tool itself may
    have made: the plan adopts the one workspace that matches it exactly
    (``plan/intents.py``) instead of refusing it as a stranger's.
    """

    model_config = ConfigDict(extra="forbid")
    at: str  # when the call was about to be sent: ISO 8601 UTC, the apply's clock
    name: str
    account: str | None  # the homepage's account: the service connects only within one
    template: str
    group: str  # the group's address
    homepage: str


class ResourceState(BaseModel):
    """What this tool knows of one address.

    ``id`` is the workspace (or, for ``asset.*``, the asset) the address is
    bound to; empty while an asset's file exists but the asset does not yet.  The rest are facts the
    service cannot read back: the access entries last applied, the homepage
    a member was last connected to (membership is not a workspace property),
    the template a workspace was created from by this tool, and the section,
    page and task values last written (``None``: never written).
    """

    model_config = ConfigDict(extra="forbid")
    id: str
    access: AccessRecord | None = None
    connected_to: str | None = None
    template: str | None = None
    # The workspace's name and account when it was bound (import, creation,
    # connection): the next plan checks them against the service, so a state
    # edited to bind the address to another workspace is refused.
    name: str | None = None
    account: str | None = None
    sections: dict[str, bool] | None = None
    pages: dict[str, bool] | None = None
    tasks: dict[str, bool] | None = None
    asset: AssetRecord | None = None
    # A creation sent (or about to be) and not answered: ``id`` is empty until it is.
    intent: CreationIntent | None = None

    def setting(self, kind: str, item_id: str) -> bool | None:
        """The value last written to section/page/task ``item_id``, if known."""
        values: dict[str, bool] | None = getattr(self, f"{kind}s")
        return None if values is None else values.get(item_id)


class State(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = STATE_VERSION
    # Empty until the first write: a missing state file must load the same way
    # every time, or a plan saved before the first apply would never match.
    lineage: str = ""
    serial: int = 0
    resources: dict[str, ResourceState] = Field(default_factory=dict)

    def access_record(self, address: str) -> AccessRecord | None:
        resource = self.resources.get(address)
        return resource.access if resource is not None else None

    def recorded_id(self, address: str) -> str | None:
        """The workspace id an earlier apply bound ``address`` to, or None (nothing recorded, or no id)."""
        resource = self.resources.get(address)
        return resource.id if resource is not None and resource.id else None

    def known_ids(self) -> set[str]:
        """Every workspace id some address is bound to."""
        return {r.id for r in self.resources.values() if r.id}

    def with_resource(self, address: str, workspace_id: str, **facts: object) -> State:
        """A copy where ``address`` is bound to ``workspace_id`` with ``facts``
        merged into what was known (a different id starts afresh).

        Copies the whole map: for one edit (import, ``state rm``); apply
        records through a ``StateBuilder``, O(1) per change."""
        resources = dict(self.resources)
        resources[address] = _bound(resources.get(address), workspace_id, facts)
        return self.model_copy(update={"resources": resources})

    def with_setting(self, address: str, workspace_id: str, kind: str, item_id: str, value: bool) -> State:
        """A copy that records ``value`` as last written to one section/page/task."""
        facts = _setting_facts(self.resources.get(address), workspace_id, kind, item_id, value)
        return self.with_resource(address, workspace_id, **facts)

    def without(self, address: str) -> State:
        resources = {a: r for a, r in self.resources.items() if a != address}
        return self.model_copy(update={"resources": resources})

    def moves(self, source: str, destination: str) -> list[tuple[str, str]]:
        """(from, to) for ``source`` and every address under it (a group's members,
        ``group.a.workspace.k``), as ``moved`` renames them: those the state records."""
        return [(a, renamed(a, source, destination)) for a in self.resources
                if a == source or a.startswith(source + ".")]

    def moved(self, source: str, destination: str) -> State:
        """A copy where what ``source`` (and every address under it) records is recorded
        under ``destination`` instead (``state mv``, a manifest's ``moved:``); the caller
        checks that no destination is recorded already."""
        resources = {renamed(a, source, destination): r for a, r in self.resources.items()}
        return self.model_copy(update={"resources": resources})


def renamed(address: str, source: str, destination: str) -> str:
    """``address`` once ``source`` is called ``destination``: itself, or an address under it."""
    if address == source or address.startswith(source + "."):
        return destination + address[len(source):]
    return address


def _bound(old: ResourceState | None, workspace_id: str, facts: Mapping[str, object]) -> ResourceState:
    """``old`` bound to ``workspace_id`` with ``facts`` merged in (a different id starts afresh)."""
    base = old.model_dump() if old is not None and old.id == workspace_id else {"id": workspace_id}
    return ResourceState.model_validate({**base, **facts})


def _setting_facts(old: ResourceState | None, workspace_id: str, kind: str, item_id: str,
                   value: bool) -> dict[str, object]:
    """The facts that record ``value`` as last written to one section/page/task of ``old``."""
    known: dict[str, bool] | None = getattr(old, f"{kind}s") if old is not None and old.id == workspace_id else None
    return {f"{kind}s": {**(known or {}), item_id: value}}


class StateBuilder:
    """A state changed in place, one address at a time: what apply records into.

    ``State``'s ``with_*`` methods copy the whole map of resources, so an
    apply recording each of its changes through them was O(changes x N).  The
    builder copies the map once, and each change then costs only the
    addresses it touches.  It also remembers what changed since the last
    ``commit`` (the journal line of one change: ``pending``), so that a step
    that failed half-way can be dropped (``revert``) instead of recorded.
    """

    def __init__(self, state: State) -> None:
        self._state = state
        self._resources = dict(state.resources)
        # How many addresses are bound to each id: "is this id known?" in O(1).
        self._ids: Counter[str] = Counter(r.id for r in self._resources.values() if r.id)
        # address -> what it was at the last commit (None: absent), for each address touched since.
        self._before: dict[str, ResourceState | None] = {}

    def get(self, address: str) -> ResourceState | None:
        """What the state knows of ``address`` now."""
        return self._resources.get(address)

    def items(self) -> list[tuple[str, ResourceState]]:
        """Every address and what is known of it (a list: safe to change the builder meanwhile)."""
        return list(self._resources.items())

    def knows_id(self, workspace_id: str) -> bool:
        """Whether some address is bound to ``workspace_id``."""
        return self._ids[workspace_id] > 0

    def put(self, address: str, resource: ResourceState | None) -> None:
        """Record ``resource`` for ``address`` (``None``: forget the address)."""
        old = self._resources.get(address)
        if old == resource:
            return
        self._before.setdefault(address, old)
        self._store(address, resource)

    def bind(self, address: str, workspace_id: str, **facts: object) -> None:
        """As ``State.with_resource``, in place."""
        self.put(address, _bound(self.get(address), workspace_id, facts))

    def record_setting(self, address: str, workspace_id: str, kind: str, item_id: str, value: bool) -> None:
        """As ``State.with_setting``, in place."""
        self.bind(address, workspace_id, **_setting_facts(self.get(address), workspace_id, kind, item_id, value))

    def remove(self, address: str) -> None:
        self.put(address, None)

    def has_pending(self) -> bool:
        """Whether anything changed since the last ``commit``."""
        return any(self._resources.get(a) != before for a, before in self._before.items())

    def pending(self) -> dict[str, object] | None:
        """What changed since the last ``commit``, as one journal entry
        (``{"set": {address: resource}, "remove": [address]}``); ``None``
        when nothing did.  Only the addresses touched are serialised."""
        sets: dict[str, object] = {}
        removes: list[str] = []
        for address, before in self._before.items():
            now = self._resources.get(address)
            if now == before:
                continue
            if now is None:
                removes.append(address)
            else:
                sets[address] = now.model_dump(mode="json", exclude_none=True)
        entry: dict[str, object] = {}
        if sets:
            entry["set"] = sets
        if removes:
            entry["remove"] = removes
        return entry or None

    def commit(self) -> None:
        """What is pending is recorded (its journal line was appended)."""
        self._before.clear()

    def revert(self) -> None:
        """Drop what changed since the last ``commit``."""
        for address, before in self._before.items():
            self._store(address, before)
        self._before.clear()

    @property
    def serial(self) -> int:
        """The serial of the state this builder started from (an apply's fold writes the next)."""
        return self._state.serial

    def state(self) -> State:
        """The state as it is now (one copy of the map)."""
        return self._state.model_copy(update={"resources": dict(self._resources)})

    def _store(self, address: str, resource: ResourceState | None) -> None:
        old = self._resources.pop(address, None)
        if old is not None and old.id:
            self._ids[old.id] -= 1
        if resource is not None:
            self._resources[address] = resource
            if resource.id:
                self._ids[resource.id] += 1
