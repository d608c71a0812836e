"""The Desired model: what the manifests ask for, normalised and located.

Built from validated manifest files by ``load_desired``; the planner reads
only these types.  Every node carries the ``SourceLocation`` a message about
it should point at; addresses (``group.<key>``, ``workspace.<key>`` ...)
are how plans, state and ``--target`` name things.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from reconciler.manifest.location import SourceLocation
from reconciler.manifest.models import Role


# Every node is a frozen slotted dataclass, not a pydantic model: its values
# were validated by ``ManifestSpec`` before it is built, so a model's
# validator would never run, yet each model class costs ~0.5 ms to define
# when ``validate`` starts, and each model instance keeps a __dict__ and the
# set of fields set (an access entry: 72 bytes instead of about 500; there
# are 250,000 of them at 10,000 workspaces).  Keyword-only, so a field with a
# default may come before one without, and a call names every value.
_node = dataclass(frozen=True, slots=True, kw_only=True)


@_node
class UserAccess:
    """A user entry; ``email`` is lower-cased; from ``expires`` on (UTC) it is removed."""

    email: str
    role: Role
    location: SourceLocation
    expires: date | None = None


@_node
class DomainAccess:
    """A domain entry; ``domain`` is lower-cased; from ``expires`` on (UTC) it is removed."""

    domain: str
    role: Role
    location: SourceLocation
    expires: date | None = None


@_node
class AccessList:
    """One workspace's (or group's) access list as the manifest states it."""

    users: tuple[UserAccess, ...] = ()
    domains: tuple[DomainAccess, ...] = ()
    authoritative: bool = True
    notify: bool = False
    message: str | None = None
    location: SourceLocation


@_node
class VisibilitySetting:
    """Whether one section or page (by id) is hidden."""

    id: str
    hidden: bool
    location: SourceLocation


@_node
class TaskSetting:
    """Whether one plan task (by id) is completed."""

    id: str
    completed: bool
    location: SourceLocation


@_node
class DealLink:
    """The CRM deal a template workspace is created for; exactly one id is set."""

    crm_one_deal_id: str | None = None
    crm_two_opportunity_id: str | None = None
    location: SourceLocation


@_node
class _PlanItemSettings:
    """The sections, pages and tasks a workspace's manifest entry sets."""

    sections: tuple[VisibilitySetting, ...] = ()
    pages: tuple[VisibilitySetting, ...] = ()
    tasks: tuple[TaskSetting, ...] = ()


@_node
class DesiredMember(_PlanItemSettings):
    """A group member: an existing workspace (``id``) or one made from ``template``."""

    group: str
    key: str
    id: str | None = None
    template: str | None = None
    name: str | None = None
    start_date: date | None = None
    target_end_date: date | None = None
    actual_end_date: date | None = None
    deal: DealLink | None = None
    location: SourceLocation

    @property
    def address(self) -> str:
        return f"group.{self.group}.workspace.{self.key}"


@_node
class DesiredGroup:
    """A connection group: its homepage holds the one access list all members share."""

    key: str
    homepage: str
    access: AccessList | None = None
    members: tuple[DesiredMember, ...] = ()
    location: SourceLocation

    @property
    def address(self) -> str:
        return f"group.{self.key}"


@_node
class DesiredWorkspace(_PlanItemSettings):
    """A standalone existing workspace."""

    key: str
    id: str
    access: AccessList | None = None
    location: SourceLocation

    @property
    def address(self) -> str:
        return f"workspace.{self.key}"


@_node
class AssetMetadata:
    """Media metadata passed on creation: all three for video, duration for audio."""

    width: int | None = None
    height: int | None = None
    duration: float


@_node
class DesiredAsset:
    """An asset; file-backed types have ``file`` (absolute, inside the root) and ``mime_type``."""

    key: str
    type: str
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
    location: SourceLocation

    @property
    def address(self) -> str:
        return f"asset.{self.key}"


@_node
class PolicyValue:
    """One value of the policy block, and where it is written."""

    value: int | str
    location: SourceLocation


@_node
class DesiredPolicy:
    """The manifests' ``policy:`` block (at most one file may hold it)."""

    allowed_domains: tuple[PolicyValue, ...] | None = None  # None: any domain
    max_role_outside: PolicyValue | None = None
    protected_owners: tuple[PolicyValue, ...] = ()
    max_revocations: PolicyValue | None = None
    max_escalations: PolicyValue | None = None
    max_notified: PolicyValue | None = None
    location: SourceLocation


@_node
class Desired:
    """Everything the manifests under ``root`` ask for, in manifest order.

    ``digest`` identifies the manifest files' names and bytes; a saved plan
    made from other manifests is refused by comparing it.
    """

    version: int = 1
    groups: tuple[DesiredGroup, ...] = ()
    workspaces: tuple[DesiredWorkspace, ...] = ()
    assets: tuple[DesiredAsset, ...] = ()
    policy: DesiredPolicy | None = None
    # Warnings found while reading (lint, grants already expired); validate
    # --strict makes them errors.
    notes: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()
    root: Path
    digest: str

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
