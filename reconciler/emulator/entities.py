"""The service's objects as the emulator holds them: access lists and their
entries, users, accounts, deals, templates, tags, custom fields, workspaces
with their sections, pages and tasks, files and assets.

Plain dataclasses.  A ``Company`` (``store.py``) owns them and finds them by
id through its indexes (``index.py``), which need these types and nothing of
the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AccessEntry:
    """A user (``key`` = email) or domain (``key`` = hostname) with a role."""

    id: str
    key: str
    role: str
    created_at: str
    updated_at: str


@dataclass
class AccessList:
    users: list[AccessEntry] = field(default_factory=list)
    domains: list[AccessEntry] = field(default_factory=list)

    def has_owner(self) -> bool:
        return any(e.role == "owner" for e in self.users + self.domains)


@dataclass
class Group:
    """Connected workspaces: one homepage, one access list."""

    id: str
    homepage: str
    access: AccessList


@dataclass
class User:
    id: str
    email: str
    first_name: str | None
    last_name: str | None
    avatar: str | None
    created_at: str
    updated_at: str

    @property
    def name(self) -> str:
        """First and last name; ``""`` when neither is known (a person first
        seen on an access list): the description types ``name`` as a string."""
        return " ".join(p for p in (self.first_name, self.last_name) if p)


@dataclass
class Account:
    id: str
    name: str
    website: str | None
    owner_id: str | None
    logo: str | None
    crm_two_account_id: str | None
    crm_one_company_id: str | None
    custom_fields: dict[str, str]
    created_at: str
    updated_at: str


@dataclass
class Deal:
    """Exactly one of ``crm_one_deal_id`` / ``crm_two_opportunity_id`` is set;
    the CRM company/account says which account the deal belongs to."""

    id: str
    crm_one_deal_id: str | None
    crm_two_opportunity_id: str | None
    crm_one_company_id: str | None
    crm_two_account_id: str | None
    name: str | None
    amount: int | None
    type: str | None
    stage: str | None
    created_date: str | None
    close_date: str | None
    created_at: str
    updated_at: str


@dataclass
class PlanItem:
    """A section, page or task of a workspace; ``fields`` holds the
    type-specific attributes in the API's spelling (``isHidden``,
    ``completedAt``, ...)."""

    id: str
    fields: dict[str, Any]
    created_at: str
    updated_at: str


@dataclass
class Template:
    id: str
    name: str
    workspace_title: str | None
    requires_deal: bool
    sections: list[dict[str, Any]]
    pages: list[dict[str, Any]]
    tasks: list[dict[str, Any]]


@dataclass
class Tag:
    id: str
    title: str
    created_at: str
    updated_at: str


@dataclass
class CustomField:
    id: str
    name: str
    variable_name: str
    type: str
    object_type: str
    options: list[dict[str, Any]]
    created_at: str
    updated_at: str


@dataclass
class Workspace:
    id: str
    name: str
    account_id: str | None        # None: a seed that names no account
    published: bool
    archived: bool
    access: AccessList
    group: str | None = None
    template_id: str | None = None
    start_date: str | None = None
    target_end_date: str | None = None
    actual_end_date: str | None = None
    deal_id: str | None = None
    custom_fields: dict[str, str] = field(default_factory=dict)
    sections: list[PlanItem] = field(default_factory=list)
    pages: list[PlanItem] = field(default_factory=list)
    tasks: list[PlanItem] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""


@dataclass
class File:
    id: str
    file_name: str
    mime_type: str
    upload_token: str
    expires_at: float
    upload_status: str = "in_progress"
    size: int | None = None
    sha256: str | None = None
    asset_id: str | None = None
    # Epoch seconds at which background conversion ends (docx/ppt/xlsx).
    ready_at: float | None = None
    created_at: str = ""
    updated_at: str = ""

    @property
    def uploaded(self) -> bool:
        return self.sha256 is not None


@dataclass
class Asset:
    id: str
    type: str
    name: str
    description: str = ""
    transcript: str = ""
    is_internal: bool = False
    file_id: str | None = None
    url: str | None = None
    custom_code: str | None = None
    tag_ids: list[str] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    views: int = 0
    shares: int = 0
    created_at: str = ""
    updated_at: str = ""
