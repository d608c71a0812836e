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

from pydantic import BaseModel, ConfigDict, computed_field

from reconciler.manifest.location import SourceLocation
from reconciler.manifest.models import Role


class _Node(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# Access entries are the bulk of a manifest (250,000 at 10,000 workspaces), so
# they are frozen slotted dataclasses, not pydantic models: 72 bytes each
# instead of about 500 (a model also keeps a __dict__ and a set of the fields
# set).  Their values were validated by ``ManifestSpec`` before they are built.


@dataclass(frozen=True, slots=True)
class UserAccess:
    """A user entry; ``email`` is lower-cased; from ``expires`` on (UTC) it is removed."""

    email: str
    role: Role
    location: SourceLocation
    expires: date | None = None


@dataclass(frozen=True, slots=True)
class DomainAccess:
    """A domain entry; ``domain`` is lower-cased; from ``expires`` on (UTC) it is removed."""

    domain: str
    role: Role
    location: SourceLocation
    expires: date | None = None


class AccessList(_Node):
    """One workspace's (or group's) access list as the manifest states it."""

    users: tuple[UserAccess, ...] = ()
    domains: tuple[DomainAccess, ...] = ()
    authoritative: bool = True
    notify: bool = False
    message: str | None = None
    location: SourceLocation


class VisibilitySetting(_Node):
    """Whether one section or page (by id) is hidden."""

    id: str
    hidden: bool
    location: SourceLocation


class TaskSetting(_Node):
    """Whether one plan task (by id) is completed."""

    id: str
    completed: bool
    location: SourceLocation


class DealLink(_Node):
    """The CRM deal a template workspace is created for; exactly one id is set."""

    crm_one_deal_id: str | None = None
    crm_two_opportunity_id: str | None = None
    location: SourceLocation


class _PlanItemSettings(_Node):
    """The sections, pages and tasks a workspace's manifest entry sets."""

    sections: tuple[VisibilitySetting, ...] = ()
    pages: tuple[VisibilitySetting, ...] = ()
    tasks: tuple[TaskSetting, ...] = ()


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

    @computed_field  # type: ignore[prop-decorator]
    @property
    def address(self) -> str:
        return f"group.{self.group}.workspace.{self.key}"


class DesiredGroup(_Node):
    """A connection group: its homepage holds the one access list all members share."""

    key: str
    homepage: str
    access: AccessList | None = None
    members: tuple[DesiredMember, ...] = ()
    location: SourceLocation

    @computed_field  # type: ignore[prop-decorator]
    @property
    def address(self) -> str:
        return f"group.{self.key}"


class DesiredWorkspace(_PlanItemSettings):
    """A standalone existing workspace."""

    key: str
    id: str
    access: AccessList | None = None
    location: SourceLocation

    @computed_field  # type: ignore[prop-decorator]
    @property
    def address(self) -> str:
        return f"workspace.{self.key}"


class AssetMetadata(_Node):
    """Media metadata passed on creation: all three for video, duration for audio."""

    width: int | None = None
    height: int | None = None
    duration: float


class DesiredAsset(_Node):
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

    @computed_field  # type: ignore[prop-decorator]
    @property
    def address(self) -> str:
        return f"asset.{self.key}"


class PolicyValue(_Node):
    """One value of the policy block, and where it is written."""

    value: int | str
    location: SourceLocation


class DesiredPolicy(_Node):
    """The manifests' ``policy:`` block (at most one file may hold it)."""

    allowed_domains: tuple[PolicyValue, ...] | None = None  # None: any domain
    max_role_outside: PolicyValue | None = None
    protected_owners: tuple[PolicyValue, ...] = ()
    max_revocations: PolicyValue | None = None
    max_escalations: PolicyValue | None = None
    max_notified: PolicyValue | None = None
    location: SourceLocation


class Desired(_Node):
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
