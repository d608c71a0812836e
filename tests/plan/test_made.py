"""``made``: the planner's values made without validating again what was validated (issue 40) are the values
validation makes, field for field and in JSON, and a missing or unknown field is still an error."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from reconciler.plan.model import AccessChange, AccessSnapshot, Action, ApiCall, EntryChange, EntrySource, made

SNAPSHOT = {"users": {"jane@acme.com": "owner", "bo@acme.com": "viewer"}, "domains": {"acme.com": "viewer"}}
SOURCE = {"kind": "rule", "location": "m.yaml:4", "rule": "baseline", "team": "security"}
ENTRY = {"kind": "user", "key": "bo@acme.com", "action": Action.CREATE, "after": "viewer", "location": "m.yaml:9",
         "reason": "listed", "privilege": "grant", "flags": ("owner",)}
CASES: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (AccessSnapshot, SNAPSHOT),
    (AccessSnapshot, {}),
    (ApiCall, {"method": "POST", "path": "/workspaces/ws_1/access"}),
    (EntrySource, SOURCE),
    (EntrySource, {**SOURCE, "since": "2026-01-02"}),
    (EntryChange, ENTRY),
    (AccessChange, {"address": "workspace.a", "workspace_id": "ws_1", "workspace_name": "A", "location": "m.yaml:1",
                    "strategy": "replace", "entries": (EntryChange(**ENTRY),),
                    "before": AccessSnapshot(), "after": AccessSnapshot(**SNAPSHOT),
                    "calls": (ApiCall(method="POST", path="/workspaces/ws_1/access"),), "notified": ("bo@acme.com",)}),
]


@pytest.mark.parametrize(("model", "values"), CASES)
def test_made_is_what_validation_makes(model: type[BaseModel], values: dict[str, Any]) -> None:
    validated, found = model(**values), made(model, **values)
    assert found == validated
    assert found.model_dump_json() == validated.model_dump_json()
    assert found.model_fields_set == validated.model_fields_set


def test_made_refuses_a_missing_or_unknown_field() -> None:
    with pytest.raises(TypeError, match="key is required"):
        made(EntryChange, kind="user", action=Action.CREATE)
    with pytest.raises(TypeError, match="no field"):
        made(ApiCall, method="GET", path="/", nope=1)


def test_a_default_made_each_time_is_not_shared() -> None:
    assert made(AccessSnapshot).users is not made(AccessSnapshot).users


def test_values_made_alike_share_their_fields_set_and_a_copy_never_changes_it() -> None:
    """The set of fields given is one per model and set of names (issue 40), so a copy with an update must
    take its own: pydantic copies it before adding to it."""
    first, second = made(EntryChange, **ENTRY), made(EntryChange, **ENTRY)
    assert first.model_fields_set is second.model_fields_set
    copied = first.model_copy(update={"managed_since": "2026-01-02"})
    assert "managed_since" in copied.model_fields_set
    assert "managed_since" not in second.model_fields_set


def test_the_managed_list_made_is_what_validation_makes() -> None:
    from reconciler.plan.model import ManagedAccess

    values: dict[str, Any] = {"address": "workspace.a", "workspace_id": "ws_1", "users": SNAPSHOT["users"],
                              "via": {"user:bo@acme.com": "team security"}}
    validated, found = ManagedAccess(**values), made(ManagedAccess, **values)
    assert found == validated and found.model_dump_json() == validated.model_dump_json()
