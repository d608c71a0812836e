"""Defaults and seed spelling of workspace sections, pages and tasks.

One table per kind, shared by the seed loader, the dumper (which writes only
what differs from the defaults, so a hand-written seed stays short after a
round trip) and template instantiation.
"""

from __future__ import annotations

from typing import Any

SECTION_DEFAULTS: dict[str, Any] = {
    "name": "", "navigationName": None, "index": 0, "isHidden": False, "isSynced": False,
    "isCollaborative": False, "isHiddenFromNavigation": False, "templateSectionId": None,
}
PAGE_DEFAULTS: dict[str, Any] = {
    "name": "", "navigationName": None, "isHidden": False, "index": 0, "templatePageId": None,
}
TASK_DEFAULTS: dict[str, Any] = {
    "title": "", "isInternal": False, "status": "not_started", "completedAt": None,
    "actionLinkUrl": None, "actionLinkName": None, "actionText": None, "actionType": None,
    "showActionText": False, "startDate": None, "dueDate": None, "index": 0,
    "templatePlanTaskId": None, "description": "", "parentTaskId": None, "assignees": [],
}

DEFAULTS: dict[str, dict[str, Any]] = {"section": SECTION_DEFAULTS, "page": PAGE_DEFAULTS, "task": TASK_DEFAULTS}

# The seed says ``hidden`` / ``completed`` (see README.md); the API says
# ``isHidden`` / ``status`` + ``completedAt``.
SEED_ALIASES: dict[str, dict[str, str]] = {"section": {"hidden": "isHidden"}, "page": {"hidden": "isHidden"}, "task": {}}

COMPLETED = "completed"
NOT_STARTED = "not_started"


def fields_from_seed(kind: str, raw: dict[str, Any], index: int, where: str) -> dict[str, Any]:
    """API-spelled fields of one seed item; raises ``ValueError`` on unknown keys."""
    defaults = DEFAULTS[kind]
    aliases = SEED_ALIASES[kind]
    fields = {k: (list(v) if isinstance(v, list) else v) for k, v in defaults.items()}
    fields["index"] = index
    for key, value in raw.items():
        if key in ("id", "createdAt", "updatedAt"):
            continue
        if kind == "task" and key == "completed":
            if "status" not in raw:
                fields["status"] = COMPLETED if value else NOT_STARTED
            continue
        api_key = aliases.get(key, key)
        if api_key not in defaults:
            allowed = sorted(set(defaults) | set(aliases) | {"id"} | ({"completed"} if kind == "task" else set()))
            raise ValueError(f"{where}: unknown key {key!r} (allowed: {', '.join(allowed)})")
        fields[api_key] = value
    if kind in ("section", "page") and fields["navigationName"] is None:
        fields["navigationName"] = fields["name"]
    return fields


def fields_to_seed(kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The seed spelling of an item's fields, leaving out defaults."""
    defaults = DEFAULTS[kind]
    out: dict[str, Any] = {}
    name_key = "title" if kind == "task" else "name"
    out[name_key] = fields[name_key]
    if kind == "task":
        out["completed"] = fields["status"] == COMPLETED
    else:
        out["hidden"] = bool(fields["isHidden"])
    for key, value in fields.items():
        if key in (name_key, "isHidden", "index") or (kind == "task" and key == "status" and value in (COMPLETED, NOT_STARTED)):
            continue
        if key == "navigationName" and value == fields.get("name"):
            continue
        if value != defaults.get(key):
            out[key] = value
    return out
