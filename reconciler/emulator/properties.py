"""The ``properties`` query parameter: parsing, checking and selection.

Without ``properties`` a resource shows only ``id``, ``object`` and ``url``.
With it, ``id`` and ``object`` plus exactly the selected dotted paths; a
nested object or list element also keeps its own ``id`` and ``object``, so
``workspaceUsers.user.email`` gives
``workspaceUsers: [{id, object, user: {id, object, email}}]``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from reconciler.emulator.errors import bad_request

PARAM_NAMES = ("properties[]", "properties")

_WORKSPACE_USER = ("role", "createdAt", "updatedAt", "user.firstName", "user.lastName", "user.avatar",
                   "user.email", "user.name", "user.createdAt", "user.updatedAt")
_CUSTOM_FIELD_VALUE = ("customFields.name", "customFields.type", "customFields.variableName", "customFields.value")

WORKSPACE: tuple[str, ...] = (
    "accountId", "name", "workspaceUrl", "templateId", "startDate", "targetEndDate", "actualEndDate", "projectAge",
    "taskProgress", "lastContactView", "totalViews", "totalActions", "totalTimeSpent", "contactsCount",
    "account.name", "account.website", "account.ownerId", "account.logo", "account.crmTwoAccountId",
    "account.crmOneCompanyId", "account.createdAt", "account.updatedAt", *_CUSTOM_FIELD_VALUE,
    "workspaceDomains.domain", "workspaceDomains.role", "workspaceDomains.createdAt", "workspaceDomains.updatedAt",
    "workspaceUsers.role", "workspaceUsers.createdAt", "workspaceUsers.updatedAt",
    *(f"workspaceUsers.{p}" for p in _WORKSPACE_USER[3:]),
    "deal.name", "deal.amount", "deal.closeDate", "deal.createdDate", "deal.type", "deal.stage", "deal.crmOneDealId",
    "deal.crmTwoOpportunityId",
)
WORKSPACE_USER: tuple[str, ...] = _WORKSPACE_USER
WORKSPACE_DOMAIN: tuple[str, ...] = ("role", "domain", "createdAt", "updatedAt")
TASK: tuple[str, ...] = (
    "isInternal", "status", "completedAt", "actionLinkUrl", "actionLinkName", "actionText", "actionType",
    "showActionText", "startDate", "title", "dueDate", "index", "createdAt", "updatedAt", "templatePlanTaskId",
    "description", "assignees", "parentTaskId",
)
SECTION: tuple[str, ...] = ("name", "navigationName", "isHidden", "index", "isSynced", "isCollaborative",
                            "isHiddenFromNavigation", "createdAt", "updatedAt", "templateSectionId")
PAGE: tuple[str, ...] = ("name", "navigationName", "isHidden", "index", "createdAt", "updatedAt", "templatePageId")
ASSET: tuple[str, ...] = ("name", "description", "updatedAt", "createdAt", "views", "shares", "assetType", "assetUrl",
                          "isInternal", "transcript", "tags.title", "tags.createdAt", "tags.updatedAt")
CUSTOM_FIELD: tuple[str, ...] = ("name", "variableName", "type", "options.index", "options.label", "options.value",
                                 "createdAt", "updatedAt")
ACCOUNT: tuple[str, ...] = ("name", "website", "ownerId", "logo", "crmTwoAccountId", "crmOneCompanyId", "createdAt",
                            "updatedAt", *_CUSTOM_FIELD_VALUE)
# Not shown in the description; the emulator's choices (README.md).
FILE: tuple[str, ...] = ("uploadStatus", "url", "fileName", "mimeType", "createdAt", "updatedAt")
USER: tuple[str, ...] = ("firstName", "lastName", "avatar", "email", "name", "createdAt", "updatedAt")
TAG: tuple[str, ...] = ("title", "createdAt", "updatedAt")


def parse(query: Sequence[tuple[str, str]], allowed: Collection[str]) -> list[str]:
    """The selected paths, from repeated ``properties[]=`` and/or
    ``properties=`` keys (a value may also list several, comma-separated);
    400 naming the first value not in ``allowed``."""
    selected: list[str] = []
    for key, value in query:
        if key not in PARAM_NAMES:
            continue
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            if part not in allowed:
                raise bad_request(f"Unknown property {part!r} for this endpoint; allowed: {', '.join(allowed)}.")
            if part not in selected:
                selected.append(part)
    return selected


def select(doc: dict[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    """``doc`` cut down to ``paths`` (see module docstring)."""
    if not paths:
        return {k: doc[k] for k in ("id", "object", "url") if k in doc}
    return _pick(doc, [p.split(".") for p in paths])


def _pick(doc: dict[str, Any], paths: list[list[str]]) -> dict[str, Any]:
    out = {k: doc[k] for k in ("id", "object") if k in doc}
    by_head: dict[str, list[list[str]]] = {}
    for parts in paths:
        by_head.setdefault(parts[0], []).append(parts[1:])
    for head, rests in by_head.items():
        if head not in doc:
            continue
        value = doc[head]
        subpaths = [r for r in rests if r]
        if len(subpaths) < len(rests) or value is None:
            out[head] = value
        elif isinstance(value, list):
            out[head] = [_pick(item, subpaths) if isinstance(item, dict) else item for item in value]
        elif isinstance(value, dict):
            out[head] = _pick(value, subpaths)
        else:
            out[head] = value
    return out
