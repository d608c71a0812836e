"""Resource models: what the service answers.

Tolerant on purpose: unknown fields are kept (``extra="allow"``) rather than
refused, since the service may add fields, and every field except ``id`` is
optional, since a ``properties`` selection returns only the fields asked
for.  Dates and date-times stay strings as the service wrote them: the
reconciler compares them, it does no arithmetic on them, and parsing would
turn an unexpected format into a failed run.

The access-list entries sent to the service are here too, as the one
shape shared by requests and the reconciler's apply step; they are strict
(``extra="forbid"``), like every request body (the rest live in
``bodies.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Required

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from reconciler.vocabulary import Role



class AccessUserInput(BaseModel):
    """A user to put on an access list: ``{email, role}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    email: str
    role: Role


class AccessDomainInput(BaseModel):
    """A domain to put on an access list: ``{domain, role}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    domain: str
    role: Role


class Resource(BaseModel):
    """Fields every resource carries (all read-only)."""

    model_config = ConfigDict(extra="allow")

    id: str
    object: str | None = None
    url: str | None = None
    createdAt: str | None = None
    updatedAt: str | None = None


class User(Resource):
    email: str | None = None
    firstName: str | None = None
    lastName: str | None = None
    name: str | None = None
    avatar: str | None = None


class WorkspaceUser(Resource):
    role: Role | None = None
    user: User | None = None


class WorkspaceDomain(Resource):
    role: Role | None = None
    domain: str | None = None


class CustomFieldOption(BaseModel):
    model_config = ConfigDict(extra="allow")

    index: int | None = None
    label: str | None = None
    value: str | None = None


class CustomField(Resource):
    name: str | None = None
    variableName: str | None = None
    # Values seen: singleCheckbox, richText; the full set is not documented.
    type: str | None = None
    options: list[CustomFieldOption] | None = None


class CustomFieldWithValue(CustomField):
    # For richText fields the value is HTML.
    value: str | None = None


class Account(Resource):
    name: str | None = None
    website: str | None = None
    ownerId: str | None = None
    logo: str | None = None
    crmTwoAccountId: str | None = None
    crmOneCompanyId: str | None = None
    customFields: list[CustomFieldWithValue] | None = None


class Deal(Resource):
    createdDate: str | None = None
    closeDate: str | None = None
    name: str | None = None
    amount: int | None = None
    type: str | None = None
    stage: str | None = None
    crmOneDealId: str | None = None
    crmTwoOpportunityId: str | None = None


class Workspace(Resource):
    name: str | None = None
    accountId: str | None = None
    workspaceUrl: str | None = None
    templateId: str | None = None
    startDate: str | None = None
    targetEndDate: str | None = None
    actualEndDate: str | None = None
    projectAge: float | None = None
    taskProgress: str | None = None
    lastContactView: str | None = None
    totalViews: float | None = None
    totalActions: float | None = None
    totalTimeSpent: float | None = None
    contactsCount: float | None = None
    account: Account | None = None
    deal: Deal | None = None
    customFields: list[CustomFieldWithValue] | None = None
    workspaceUsers: list[WorkspaceUser] | None = None
    workspaceDomains: list[WorkspaceDomain] | None = None


# A workspace of a listing as reading access needs it (``reconciler.live.read_listed``): plain dicts validated
# by pydantic straight from the page's bytes, every other field of the answer ignored. A page of 100
# workspaces of 25 entries was 5,100 models (a Workspace, a WorkspaceUser and a User per entry) built, read
# once into LiveEntry tuples and dropped: at 10,000 workspaces 1.9 s of CPU in all against 0.5 s this way
# (issue 40). Each field is checked as the model checks it; a field not read is not checked (the tolerant
# reader of the models above, a step further).
class ListedUser(TypedDict, total=False):
    email: str | None


class ListedWorkspaceUser(TypedDict, total=False):
    id: Required[str]
    role: Role | None
    user: ListedUser | None


class ListedWorkspaceDomain(TypedDict, total=False):
    id: Required[str]
    role: Role | None
    domain: str | None


class ListedAccount(TypedDict, total=False):
    id: str | None
    name: str | None


class ListedDeal(TypedDict, total=False):
    crmOneDealId: str | None
    crmTwoOpportunityId: str | None


class ListedWorkspace(TypedDict, total=False):
    id: Required[str]
    name: str | None
    accountId: str | None
    account: ListedAccount | None
    templateId: str | None
    startDate: str | None
    targetEndDate: str | None
    actualEndDate: str | None
    createdAt: str | None
    deal: ListedDeal | None
    workspaceUsers: list[ListedWorkspaceUser] | None
    workspaceDomains: list[ListedWorkspaceDomain] | None


class PageInfo(BaseModel):
    model_config = ConfigDict(extra="allow")

    page: int | None = None
    pages: int | None = None
    total: int | None = None
    pageTotal: int | None = None
    hasNextPage: bool | None = None
    hasPrevPage: bool | None = None


class Tag(Resource):
    title: str | None = None


class Asset(Resource):
    name: str | None = None
    description: str | None = None
    transcript: str | None = None
    views: float | None = None
    shares: float | None = None
    # Documented values include the create types and the converted
    # microsoft*EmbedPdf; the full set is not shown, so any string is kept.
    assetType: str | None = None
    assetUrl: str | None = None
    isInternal: bool | None = None
    tags: list[Tag] | None = None


class File(Resource):
    """A file; only ``id``, ``uploadStatus`` and ``url`` are documented."""

    # "in_progress" after creation; the name of the ready state is not shown.
    uploadStatus: str | None = None


class UploadTarget(BaseModel):
    """Where and how to PUT a new file's bytes (a presigned address)."""

    model_config = ConfigDict(extra="allow")

    url: str
    method: str = "PUT"
    headers: dict[str, str] = {}
    expiresAt: str | None = None

    @property
    def content_type(self) -> str | None:
        """The ``Content-Type`` the storage provider expects, if given."""
        return next((v for k, v in self.headers.items() if k.lower() == "content-type"), None)


class PlanTaskAssignee(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str | None = None
    userId: str | None = None
    email: str | None = None


class WorkspacePlanTask(Resource):
    isInternal: bool | None = None
    # Allowed values and transitions are not documented.
    status: str | None = None
    completedAt: str | None = None
    actionLinkUrl: str | None = None
    actionLinkName: str | None = None
    actionText: str | None = None
    actionType: str | None = None
    showActionText: bool | None = None
    startDate: str | None = None
    title: str | None = None
    dueDate: str | None = None
    index: int | None = None
    templatePlanTaskId: str | None = None
    description: str | None = None
    parentTaskId: str | None = None
    assignees: list[PlanTaskAssignee] | None = None


class WorkspaceSection(Resource):
    name: str | None = None
    navigationName: str | None = None
    index: int | None = None
    isHidden: bool | None = None
    isSynced: bool | None = None
    isCollaborative: bool | None = None
    isHiddenFromNavigation: bool | None = None
    templateSectionId: str | None = None


class WorkspacePage(Resource):
    name: str | None = None
    navigationName: str | None = None
    isHidden: bool | None = None
    index: int | None = None
    templatePageId: str | None = None


class NewFile(BaseModel):
    """A file just created, and where to upload its bytes."""

    model_config = ConfigDict(extra="allow")

    file: File
    upload: UploadTarget


@dataclass(frozen=True)
class ConnectResult:
    """The answer to connecting a workspace to a group.

    ``already_connected`` is true for 200 (the workspace was in the group and
    nothing changed), false for 201 (connected, or created from a template).
    """

    workspace: Workspace
    already_connected: bool
