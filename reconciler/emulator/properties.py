"""The ``properties`` query parameter: parsing, checking and selection.

Without ``properties`` a resource shows only ``id``, ``object`` and ``url``.
With it, ``id`` and ``object`` plus exactly the selected dotted paths; a
nested object or list element also keeps its own ``id`` and ``object``, so
``workspaceUsers.user.email`` gives
``workspaceUsers: [{id, object, user: {id, object, email}}]``.
"""

from __future__ import annotations

import functools
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
    400 naming the first value not in ``allowed``, and 400 for an empty one
    (``properties=``, ``properties=name,``): the service refuses a value it
    does not know, and an empty name is one (README.md)."""
    selected: list[str] = []
    for key, value in query:
        if key not in PARAM_NAMES:
            continue
        for part in value.split(","):
            part = part.strip()
            if not part:
                raise bad_request(f"Empty value in {key}={value!r}: name a property; "
                                  f"allowed: {', '.join(allowed) or 'none on this endpoint'}.")
            if part not in allowed:
                raise bad_request(f"Unknown property {part!r} for this endpoint; allowed: {', '.join(allowed)}.")
            if part not in selected:
                selected.append(part)
    return selected


def select(doc: dict[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    """``doc`` cut down to ``paths`` (see module docstring)."""
    if not paths:
        return {k: doc[k] for k in ("id", "object", "url") if k in doc}
    return _pick(doc, _tree(tuple(paths)))


# A selection as a tree: each key maps to the selection under it, or to None
# when a path ends there (the whole value is kept).  Built once per distinct
# selection, not again for every element of every list (a page of 100
# workspaces with 25 entries each regrouped its paths 2,600 times).
_Tree = dict[str, "_Tree | None"]


@functools.lru_cache(maxsize=256)
def _tree(paths: tuple[str, ...]) -> _Tree:
    return _grouped([p.split(".") for p in paths])


def _grouped(paths: list[list[str]]) -> _Tree:
    by_head: dict[str, list[list[str]]] = {}
    for parts in paths:
        by_head.setdefault(parts[0], []).append(parts[1:])
    return {head: None if any(not rest for rest in rests) else _grouped(rests) for head, rests in by_head.items()}


def _pick(doc: dict[str, Any], tree: _Tree) -> dict[str, Any]:
    out: dict[str, Any] = {k: doc[k] for k in ("id", "object") if k in doc}
    for head, under in tree.items():
        if head not in doc:
            continue
        value = doc[head]
        if under is None or value is None:
            out[head] = value
        elif isinstance(value, list):
            out[head] = [_pick(item, under) if isinstance(item, dict) else item for item in value]
        elif isinstance(value, dict):
            out[head] = _pick(value, under)
        else:
            out[head] = value
    return out
