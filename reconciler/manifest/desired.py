"""The Desired model: what the manifests ask for, normalised and located.

Built from validated manifest files by ``load_desired``; the planner reads
only these types.  Every node carries the ``SourceLocation`` a message about
it should point at; addresses (``group.<key>``, ``workspace.<key>`` ...)
are how plans, state and ``--target`` name things.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from operator import attrgetter
from pathlib import Path
from typing import Generic, Literal, NamedTuple, TypeVar

from reconciler.addresses import asset_address
from reconciler.manifest.location import SourceLocation
from reconciler.vocabulary import Role

V = TypeVar("V")

# Every node is a typed NamedTuple: immutable, hashable, compared and ordered
# by value, and cheap at both ends of the tool's life.  ``validate`` defines
# these classes on every start, and Python 3.11's dataclasses compile six
# methods per class to do it (0.55 ms a class, 8.7 ms for these, more than
# any other module of the start-up); a NamedTuple class is one function
# (1.6 ms for all).  A manifest holds hundreds of thousands of nodes (250,000
# access entries at 10,000 workspaces), and a NamedTuple is made twice as
# fast as a frozen dataclass (no ``object.__setattr__`` per field).  Their
# values were validated by ``ManifestSpec`` before they are built, so there
# is nothing to validate again.  Every call that makes one names each field,
# so the field order below (required fields first, as a tuple needs) is not
# part of any interface.  Being tuples, nodes of two kinds with equal values
# compare equal; the code never compares nodes of different kinds.


class UserAccess(NamedTuple):
    """A user entry; ``email`` is lower-cased; from ``expires`` on (UTC) it is removed."""

    email: str
    role: Role
    location: SourceLocation
    expires: date | None = None


class DomainAccess(NamedTuple):
    """A domain entry; ``domain`` is lower-cased; from ``expires`` on (UTC) it is removed."""

    domain: str
    role: Role
    location: SourceLocation
    expires: date | None = None


class TeamAccess(NamedTuple):
    """A team entry of an access list (or of a rule's ``ensure``): each member gets ``role``."""

    team: str
    role: Role
    location: SourceLocation


class AccessList(NamedTuple):
    """One workspace's (or group's) access list as the manifest states it.

    ``teams`` are references, expanded into users by
    ``reconciler.plan.teams.expand_access`` (an explicit ``users`` entry wins).
    """

    location: SourceLocation
    users: tuple[UserAccess, ...] = ()
    domains: tuple[DomainAccess, ...] = ()
    authoritative: bool = True
    notify: bool = False
    message: str | None = None
    teams: tuple[TeamAccess, ...] = ()

    def expiring(self) -> bool:
        """Whether any user or domain entry has an ``expires`` date: most lists have none, and the plan, lint
        and the expiry warnings skip those without looking at each entry (a date is never false)."""
        return any(map(_EXPIRES, self.users)) or any(map(_EXPIRES, self.domains))


_EXPIRES = attrgetter("expires")


class VisibilitySetting(NamedTuple):
    """Whether one section or page (by id) is hidden."""

    id: str
    hidden: bool
    location: SourceLocation


class TaskSetting(NamedTuple):
    """Whether one plan task (by id) is completed."""

    id: str
    completed: bool
    location: SourceLocation


class DealLink(NamedTuple):
    """The CRM deal a template workspace is created for; exactly one id is set."""

    location: SourceLocation
    crm_one_deal_id: str | None = None
    crm_two_opportunity_id: str | None = None


# A NamedTuple cannot inherit fields, so the two workspace nodes each list
# the sections, pages and tasks their manifest entry sets.


class DesiredMember(NamedTuple):
    """A group member: an existing workspace (``id``) or one made from ``template``."""

    group: str
    key: str
    location: SourceLocation
    id: str | None = None
    template: str | None = None
    name: str | None = None
    start_date: date | None = None
    target_end_date: date | None = None
    actual_end_date: date | None = None
    deal: DealLink | None = None
    sections: tuple[VisibilitySetting, ...] = ()
    pages: tuple[VisibilitySetting, ...] = ()
    tasks: tuple[TaskSetting, ...] = ()

    @property
    def address(self) -> str:
        return f"group.{self.group}.workspace.{self.key}"

    def workspace_id(self, recorded: Callable[[str], str | None]) -> str | None:
        """Its workspace id: declared, or ``recorded`` for its address (``State.recorded_id``: an earlier
        apply created it); None for one not created yet. Every reader of a member's id asks here."""
        return self.id if self.id is not None else recorded(self.address)


class DesiredGroup(NamedTuple):
    """A connection group: its homepage holds the one access list all members share."""

    key: str
    homepage: str
    location: SourceLocation
    access: AccessList | None = None
    members: tuple[DesiredMember, ...] = ()

    @property
    def address(self) -> str:
        return f"group.{self.key}"


class DesiredWorkspace(NamedTuple):
    """A standalone existing workspace."""

    key: str
    id: str
    location: SourceLocation
    access: AccessList | None = None
    sections: tuple[VisibilitySetting, ...] = ()
    pages: tuple[VisibilitySetting, ...] = ()
    tasks: tuple[TaskSetting, ...] = ()

    @property
    def address(self) -> str:
        return f"workspace.{self.key}"


class AssetMetadata(NamedTuple):
    """Media metadata passed on creation: all three for video, duration for audio."""

    duration: float
    width: int | None = None
    height: int | None = None


class DesiredAsset(NamedTuple):
    """An asset; file-backed types have ``file`` (absolute, inside the root) and ``mime_type``."""

    key: str
    type: str
    location: SourceLocation
    file: Path | None = None
    file_label: str | None = None  # the file relative to the manifest root, for display and state
    mime_type: str | None = None
    digest: str | None = None  # SHA-256 of the file's bytes when the manifest was loaded
    size: int | None = None
    name: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    internal: bool = False
    url: str | None = None
    custom_code: str | None = None
    metadata: AssetMetadata | None = None

    @property
    def address(self) -> str:
        return asset_address(self.key)


class PolicyValue(NamedTuple, Generic[V]):
    """One value of the policy block, and where it is written."""

    value: V
    location: SourceLocation


class DesiredPolicy(NamedTuple):
    """The manifests' ``policy:`` block (at most one file may hold it)."""

    location: SourceLocation
    allowed_domains: tuple[PolicyValue[str], ...] | None = None  # None: any domain
    max_role_outside: PolicyValue[Role] | None = None
    protected_owners: tuple[PolicyValue[str], ...] = ()
    max_revocations: PolicyValue[int] | None = None
    max_escalations: PolicyValue[int] | None = None
    max_notified: PolicyValue[int] | None = None
    min_owners: PolicyValue[int] | None = None  # the access report flags a workspace with fewer owners


class TeamMember(NamedTuple):
    """One email of a team (lower-cased), where it is written."""

    email: str
    location: SourceLocation


class DesiredTeam(NamedTuple):
    """A named list of people (``teams:``); access lists and rules name it.

    A team from the directory (``{directoryGroup: NAME}``) has ``directory_group``;
    its ``members`` are the group's, each at its line of the directory's file
    (``reconciler.manifest.directory.with_directory`` fills them in)."""

    key: str
    location: SourceLocation
    members: tuple[TeamMember, ...] = ()
    directory_group: str | None = None

    @property
    def address(self) -> str:
        return f"team.{self.key}"

    def emails(self) -> tuple[str, ...]:
        return tuple(m.email for m in self.members)


class RuleMatch(NamedTuple):
    """Which workspaces a rule applies to (see ``reconciler.plan.rules.rule_matches``).

    Every criterion given (not None) must hold; a tuple holds when any of
    its items does.  ``all`` alone matches every workspace.
    """

    location: SourceLocation
    all: bool = False
    accounts: tuple[str, ...] | None = None
    templates: tuple[str, ...] | None = None
    names: tuple[str, ...] | None = None  # fnmatch patterns, case-sensitive
    except_ids: tuple[str, ...] = ()
    except_locations: tuple[SourceLocation, ...] = ()  # the line of each except id


class RevokedEntry(NamedTuple):
    """An email or domain (lower-cased) a rule revokes, whatever its role.

    ``since``: a leaver of the directory, deactivated on that day (the plan's
    reason says so); None for a rule written in a manifest."""

    key: str
    location: SourceLocation
    since: date | None = None


class DesiredRule(NamedTuple):
    """A rule over every workspace of the company (``rules:``)."""

    key: str
    location: SourceLocation
    match: RuleMatch
    ensure_users: tuple[UserAccess, ...] = ()
    ensure_teams: tuple[TeamAccess, ...] = ()
    ensure_domains: tuple[DomainAccess, ...] = ()
    revoke_users: tuple[RevokedEntry, ...] = ()
    revoke_domains: tuple[RevokedEntry, ...] = ()
    # revoke.successor: who becomes owner (role owner, at its line) where a
    # revoked owner was the last one: a handover, planned against the live list.
    successor: UserAccess | None = None
    # Made from the directory's leavers (``DIRECTORY_RULE``), not written in a manifest.
    from_directory: bool = False

    @property
    def address(self) -> str:
        return f"rule.{self.key}"


# The key of the rules the directory's leavers make (one per successor); no manifest may define a rule of that name
# while a ``directory:`` exists.
DIRECTORY_RULE = "directory"


class DirectoryLeaver(NamedTuple):
    """A person under ``directory.deactivated``: revoked everywhere since ``since``; ``successor`` takes over."""

    email: str
    since: date
    location: SourceLocation
    successor: UserAccess | None = None  # role owner, at the leaver's line


class DirectoryGroupMembers(NamedTuple):
    """A group under ``directory.groups``: its name as the identity provider spells it, its members."""

    name: str
    location: SourceLocation
    members: tuple[TeamMember, ...] = ()


class DesiredDirectory(NamedTuple):
    """The manifests' ``directory:`` (one file, written by ``reconciler directory sync``)."""

    location: SourceLocation
    groups: tuple[DirectoryGroupMembers, ...] = ()
    leavers: tuple[DirectoryLeaver, ...] = ()

    def group(self, name: str) -> DirectoryGroupMembers | None:
        return next((g for g in self.groups if g.name == name), None)


OnDue = Literal["revoke", "keep", "flag"]
Decision = Literal["keep", "revoke"]
ReviewEntryKind = Literal["user", "domain"]


class ReviewItem(NamedTuple):
    """One item of a reviewer's file, with the line of its ``decision:`` (where a
    plan's revocation points) and of the item itself."""

    campaign: str
    reviewer: str
    workspace: str
    kind: ReviewEntryKind
    key: str
    role: Role
    location: SourceLocation  # the decision line
    name: str | None = None
    why: str = ""
    decision: Decision | None = None
    reason: str | None = None
    remove_from_team: bool = False
    position: int = 0  # the item's index in the reviewer's file

    @property
    def file(self) -> str:
        return self.location.file


class DesiredCampaign(NamedTuple):
    """A campaign and every reviewer's items, in reviewer then file order."""

    name: str
    location: SourceLocation  # the campaign file, line 1
    started: date
    due: date
    on_due: OnDue = "flag"
    match: RuleMatch | None = None
    entries: Literal["all", "external"] = "all"
    reviewers: str = "owners"  # "owners" or "team:NAME"
    fallback: str | None = None
    closed: date | None = None
    items: tuple[ReviewItem, ...] = ()
    reviewer_files: tuple[tuple[str, str], ...] = ()  # (reviewer, file as shown)

    def overdue(self, today: date) -> bool:
        return today > self.due


class DesiredMove(NamedTuple):
    """An entry of ``moved:``: the address ``source`` is now ``destination`` (Terraform's moved block)."""

    source: str
    destination: str
    location: SourceLocation


class Desired(NamedTuple):
    """Everything the manifests under ``root`` ask for, in manifest order.

    ``digest`` identifies the manifest files' names and bytes; a saved plan
    made from other manifests is refused by comparing it.
    """

    root: Path
    digest: str
    version: int = 1
    groups: tuple[DesiredGroup, ...] = ()
    workspaces: tuple[DesiredWorkspace, ...] = ()
    assets: tuple[DesiredAsset, ...] = ()
    policy: DesiredPolicy | None = None
    teams: tuple[DesiredTeam, ...] = ()
    rules: tuple[DesiredRule, ...] = ()
    moves: tuple[DesiredMove, ...] = ()
    # Warnings found while reading (lint, grants already expired); validate
    # --strict makes them errors.
    notes: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()
    # Access review campaigns (reviews/<name>/: reconciler.manifest.reviews).
    reviews: tuple[DesiredCampaign, ...] = ()
    # The directory's groups and leavers (``directory:``); its leavers are in ``rules`` as rules of
    # their own (``DesiredRule.from_directory``), and its groups in the teams that name them.
    directory: DesiredDirectory | None = None

    def addresses(self) -> list[str]:
        """Every group, member, standalone workspace and asset address, in manifest order."""
        found: list[str] = []
        for group in self.groups:
            found.append(group.address)
            found += [m.address for m in group.members]
        found += [w.address for w in self.workspaces]
        found += [a.address for a in self.assets]
        return found

    def access_lists(self) -> list[tuple[str, str, AccessList]]:
        """(address, workspace id, access list) for every managed access list.

        Groups first (their list lives on the homepage), then standalone
        workspaces; each in manifest order.
        """
        lists = [(g.address, g.homepage, g.access) for g in self.groups if g.access is not None]
        lists += [(w.address, w.id, w.access) for w in self.workspaces if w.access is not None]
        return lists

    def list_holders(self, recorded: Callable[[str], str | None]) -> list[tuple[str, DesiredGroup | DesiredWorkspace]]:
        """(workspace id, the group or standalone workspace whose manifest entry writes its list), for every
        workspace a manifest names: a group's homepage and each member with an id (declared, or
        ``recorded``: ``DesiredMember.workspace_id``), then each standalone workspace; in manifest order,
        whether or not the entry has an ``access:`` list. The plan's reviews, the company read and a review's
        close all find a list's workspaces here, so they cannot disagree about which workspace holds it."""
        found: list[tuple[str, DesiredGroup | DesiredWorkspace]] = []
        for group in self.groups:
            found.append((group.homepage, group))
            found += [(workspace_id, group) for workspace_id in
                      (member.workspace_id(recorded) for member in group.members) if workspace_id]
        found += [(workspace.id, workspace) for workspace in self.workspaces]
        return found
