"""What a plan finds besides its changes: the resources that need a person,
look-alike addresses, moved addresses, adopted creations, the lists recorded
as managed, the cost in calls and credits, and the summary counts.  Values
the Plan (``reconciler.plan.model``) holds, re-exported there."""

from __future__ import annotations

from collections.abc import Mapping
from json.encoder import encode_basestring as _string  # what json.dumps(ensure_ascii=False) writes a str as
from typing import Literal

from pydantic import Field

from reconciler.addresses import is_asset
from reconciler.models import Frozen
from reconciler.plan.digest import DISPLAY_ONLY
from reconciler.vocabulary import Role


class Resolution(Frozen):
    """One way out of a doubt: the finding it follows from, and the command
    that records it (runnable as shown, once ``ASSET_ID`` is filled in)."""

    when: str = Field(description='The finding this command is for, e.g. "it exists in the service".')
    command: str = Field(description="The command to run, with the manifests' PATH and --state as the plan was "
                                     "made with; ASSET_ID stands for the id found in the web app.")


class NeedsPerson(Frozen):
    """A resource the tool cannot decide about and will not guess about.

    Nothing is planned for it until a person runs one of ``resolutions``;
    until then ``plan`` does not say "No changes", ``plan
    --detailed-exitcode`` exits 2, and ``apply`` does everything else, lists
    it last and exits 1.
    """

    kind: Literal["asset", "access", "workspace"] = Field(default="asset", description=(
        "The kind of resource: an asset, the access list of a workspace no manifest names, or a workspace to "
        "create from a template."))
    address: str = Field(description="The manifest address, e.g. asset.website or unmanaged.ws_1.")
    location: str | None = Field(default=None, description="The manifest file:line that declares it.")
    cause: Literal["creation-unanswered", "file-backs-asset", "ownerless", "namesake-exists",
                   "several-candidates"] = Field(description=(
        "creation-unanswered: a link or embed whose POST /assets got no answer; it may exist, the API cannot "
        "list assets to tell, and sending it again could make a second one. file-backs-asset: a file asset whose "
        "second creation the service refused because its file backs an asset already; it exists, its id is "
        "unknown. ownerless: a workspace no manifest names whose list has no owner, or that the rules could "
        "change only by leaving it without one; the rules' changes there are skipped. namesake-exists: a "
        "workspace to create from a template, of which one of the same account, template and name exists that "
        "the state does not know and no recorded intent of this tool explains (an apply whose state was lost may "
        "have made it): creating another would spend a second credit. several-candidates: a creation an "
        "interrupted apply recorded as intended, matched by more than one workspace."))
    asset_type: str | None = Field(default=None, description="The asset's type, as in the manifest (assets only).")
    name: str | None = Field(default=None, description="The asset's or workspace's name, to find it by in the web "
                                                       "app.")
    url: str | None = Field(default=None, description="A link's or embed's url, to find it by in the web app.")
    file_id: str | None = Field(default=None, description="The file that backs the asset (file-backs-asset).")
    workspace_ids: tuple[str, ...] = Field(default=(), description="The workspaces that may be it (workspaces).")
    reason: str = Field(description="For display: what happened and what is not known.")
    check: str = Field(description="For display: what to look for in the web app.")
    resolutions: tuple[Resolution, ...] = Field(description="One command per finding: adopt it with "
                                                            "'reconciler import', or forget the doubt with "
                                                            "'reconciler state rm' so the next apply creates it "
                                                            "(none for an access list: ``check`` says what to edit).")


class ProbablySamePerson(Frozen):
    """A user the plan does not revoke whose address is probably the same
    person as one it does (a +tag, dots, look-alike or invisible characters,
    a subdomain): named for review, never revoked by the tool."""

    revoked: str = Field(description="The user the plan revokes.")
    key: str = Field(description="The address that is probably the same person, as the service reports it.")
    why: str = Field(description='What makes them alike, e.g. "a +tag", "look-alike characters".')
    workspaces: tuple[str, ...] = Field(description="The workspaces (of those the plan read) where it has access.")


class Moved(Frozen):
    """An address renamed by a manifest's ``moved:`` entry: the state's record of
    ``previous_address`` is kept under ``address``.  Only the state changes: no call."""

    address: str = Field(description="The address now (the entry's 'to').")
    previous_address: str = Field(description="The address the state knew it by (the entry's 'from').")
    id: str | None = Field(description="The workspace (or asset) id the state records for it.")
    location: str = Field(description="The manifest file:line of the moved: entry.")

    @property
    def detail(self) -> str:
        """``workspace ws_1, m.yaml:9``: what moves, and the entry that moves it."""
        what = "asset" if is_asset(self.address) else "workspace"
        return f"{what} {self.id or 'whose id is unknown'}, {self.location}"

    @property
    def text(self) -> str:
        """``workspace.a has moved to workspace.b (workspace ws_1, m.yaml:9): only the state changes, ...``."""
        return (f"{self.previous_address} has moved to {self.address} ({self.detail}): only the state changes, "
                "no call is made")


class Adoption(Frozen):
    """A workspace an interrupted apply created and did not record, found
    again by the intent it journaled before the call: apply records it
    (``address`` bound to ``workspace_id``) before any change, as if the
    answer had arrived.  No call, no credit."""

    address: str
    location: str | None = None
    workspace_id: str
    group: str
    homepage_id: str
    template_id: str
    intended_at: str = Field(description="When the interrupted apply recorded the intent (ISO 8601 UTC).")
    reason: str = Field(description='For display: "adopted ws_1: created by the interrupted apply of ...".')


class ManagedAccess(Frozen):
    """The entries this tool manages on one list: what state records after apply."""

    address: str
    workspace_id: str
    users: dict[str, Role] = Field(default_factory=dict)
    domains: dict[str, Role] = Field(default_factory=dict)
    # "user:<email>" / "domain:<domain>" -> "team <key>" / "rule <key>": the
    # entries a team or rule put there, so their removal later names it.
    via: dict[str, str] = Field(default_factory=dict)

    def canonical_json(self, known: dict[int, str]) -> str:  # noqa: ARG002 - the digest's protocol (Effect's)
        """This record as the plan digest's canonical JSON writes it: exactly ``json.dumps(`` its approved value
        ``, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` (no display-only field; a data key of
        that name left out), written straight from its fields: a plan records one per list, and pydantic's dump and the
        encoder's pass over it were a third of the digest's CPU at 10,000 lists (issue 40)."""
        return (f'{{"address":{_string(self.address)},"domains":{_object(self.domains)},'
                f'"users":{_object(self.users)},"via":{_object(self.via)},'
                f'"workspace_id":{_string(self.workspace_id)}}}')


def _object(values: Mapping[str, str]) -> str:
    """A mapping of text to text as ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
    writes it, a key named like a display-only field left out as the digest leaves it out at any depth (a
    record read back from a state file may hold one)."""
    if not values.keys().isdisjoint(DISPLAY_ONLY):  # looks up the three names, not every key
        values = {key: value for key, value in values.items() if key not in DISPLAY_ONLY}
    return "{" + ",".join([f"{_string(key)}:{_string(value)}" for key, value in sorted(values.items())]) + "}"


class Cost(Frozen):
    """What applying costs: calls per limit class, credits, least time."""

    calls_by_class: dict[str, int] = Field(default_factory=dict)
    refresh_reads: int = 0  # list pages apply re-reads before its first write and after its last
    workspace_credits: int = 0
    min_seconds: float = 0.0
    conversion_polls: int = 0  # at least one GET /files/{id} per converted file, with apply --wait
    limits: dict[str, int] = Field(default_factory=dict)  # requests per minute per class the least time assumed

    @property
    def total_calls(self) -> int:
        return sum(self.calls_by_class.values())


class PlanSummary(Frozen):
    """Access entries added, changed and removed; workspaces created and
    connected; section, page and task values written."""

    create: int = 0
    update: int = 0
    delete: int = 0
    workspaces_created: int = 0
    workspaces_connected: int = 0
    settings: int = 0
    assets_created: int = 0
    assets_replaced: int = 0
    assets_updated: int = 0

    @property
    def total(self) -> int:
        return (self.create + self.update + self.delete + self.workspaces_created
                + self.workspaces_connected + self.settings + self.assets_created
                + self.assets_replaced + self.assets_updated)
