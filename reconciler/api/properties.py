"""The ``properties`` values each endpoint accepts, and their encoding.

Without ``properties`` the service may answer little more than ``id``,
``object`` and ``url``, so callers ask for what they need; ``id`` and
``object`` come unasked.  The values are the ones the description lists per
endpoint, as ``Literal`` types (for callers that want a type checker to
catch a typo) and tuples (for the run-time check).  A value not listed is
refused here with ``ValueError`` before any request is sent, since the
service would only answer 400.

Where the description shows no list, the choice is documented beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, get_args

WorkspaceProperty = Literal[
    "accountId", "name", "workspaceUrl", "templateId", "startDate", "targetEndDate", "actualEndDate",
    "projectAge", "taskProgress", "lastContactView", "totalViews", "totalActions", "totalTimeSpent",
    "contactsCount",
    "account.name", "account.website", "account.ownerId", "account.logo", "account.crmTwoAccountId",
    "account.crmOneCompanyId", "account.createdAt", "account.updatedAt",
    "customFields.name", "customFields.type", "customFields.variableName", "customFields.value",
    "workspaceDomains.domain", "workspaceDomains.role", "workspaceDomains.createdAt", "workspaceDomains.updatedAt",
    "workspaceUsers.role", "workspaceUsers.createdAt", "workspaceUsers.updatedAt",
    "workspaceUsers.user.firstName", "workspaceUsers.user.lastName", "workspaceUsers.user.avatar",
    "workspaceUsers.user.email", "workspaceUsers.user.name", "workspaceUsers.user.createdAt",
    "workspaceUsers.user.updatedAt",
    "deal.name", "deal.amount", "deal.closeDate", "deal.createdDate", "deal.type", "deal.stage",
    "deal.crmOneDealId", "deal.crmTwoOpportunityId",
]
"""Connect and access endpoints.  GET /workspaces: its values are not shown;
the same workspace fields are assumed."""

WorkspaceUserProperty = Literal[
    "role", "createdAt", "updatedAt", "user.createdAt", "user.updatedAt", "user.firstName", "user.lastName",
    "user.avatar", "user.email", "user.name",
]
WorkspaceDomainProperty = Literal["role", "domain", "createdAt", "updatedAt"]
PlanTaskProperty = Literal[
    "isInternal", "status", "completedAt", "actionLinkUrl", "actionLinkName", "actionText", "actionType",
    "showActionText", "startDate", "title", "dueDate", "index", "createdAt", "updatedAt", "templatePlanTaskId",
    "description", "assignees", "parentTaskId",
]
SectionProperty = Literal[
    "name", "navigationName", "isHidden", "index", "isSynced", "isCollaborative", "isHiddenFromNavigation",
    "createdAt", "updatedAt", "templateSectionId",
]
PageProperty = Literal["name", "navigationName", "isHidden", "index", "createdAt", "updatedAt", "templatePageId"]
AssetProperty = Literal[
    "name", "description", "updatedAt", "createdAt", "views", "shares", "assetType", "assetUrl", "isInternal",
    "transcript", "tags.title", "tags.createdAt", "tags.updatedAt",
]
"""PATCH /assets/{id}; POST /assets documents none and is assumed the same."""

CustomFieldProperty = Literal[
    "name", "variableName", "type", "options.index", "options.label", "options.value", "createdAt", "updatedAt",
]
AccountProperty = Literal[
    "name", "website", "ownerId", "logo", "crmTwoAccountId", "crmOneCompanyId", "createdAt", "updatedAt",
    "customFields.name", "customFields.type", "customFields.variableName", "customFields.value",
]
FileProperty = Literal["uploadStatus", "url"]
"""GET /files/{id}: only ``uploadStatus`` is shown; ``url`` is the file's
other documented field."""

UserProperty = Literal["firstName", "lastName", "avatar", "email", "name", "createdAt", "updatedAt"]
"""GET /users: values not shown; the user fields seen in responses."""

WORKSPACE: tuple[str, ...] = get_args(WorkspaceProperty)
WORKSPACE_USER: tuple[str, ...] = get_args(WorkspaceUserProperty)
WORKSPACE_DOMAIN: tuple[str, ...] = get_args(WorkspaceDomainProperty)
PLAN_TASK: tuple[str, ...] = get_args(PlanTaskProperty)
SECTION: tuple[str, ...] = get_args(SectionProperty)
PAGE: tuple[str, ...] = get_args(PageProperty)
ASSET: tuple[str, ...] = get_args(AssetProperty)
CUSTOM_FIELD: tuple[str, ...] = get_args(CustomFieldProperty)
ACCOUNT: tuple[str, ...] = get_args(AccountProperty)
FILE: tuple[str, ...] = get_args(FileProperty)
USER: tuple[str, ...] = get_args(UserProperty)


def properties_query(selected: Iterable[str], allowed: Sequence[str], *, endpoint: str) -> list[tuple[str, str]]:
    """``selected`` as repeated ``properties[]=value`` query keys, in order,
    without duplicates.  Raises ``ValueError`` naming every value of
    ``selected`` that ``endpoint`` does not accept."""
    if isinstance(selected, str):
        # A lone string would otherwise be taken letter by letter.
        raise ValueError(f"properties for {endpoint} must be a sequence of names, not the string {selected!r}")
    chosen = list(dict.fromkeys(selected))
    unknown = [p for p in chosen if p not in allowed]
    if unknown:
        raise ValueError(
            f"{endpoint} does not accept the properties {', '.join(map(repr, unknown))}; "
            f"it accepts: {', '.join(allowed)}"
        )
    return [("properties[]", p) for p in chosen]
