"""The exact requests a rule makes on a workspace no manifest names: one
listing for the plan, and one POST of the whole list that keeps every entry
the rule does not name (respx as the service)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import respx

from reconciler.api.client import WorkspaceClient
from reconciler.apply import apply_plan
from reconciler.commands.plan import plan_with_client
from reconciler.manifest import load_desired
from reconciler.state import State, load_state
from tests.api.conftest import data, page


def user(entry_id: str, email: str, role: str) -> dict[str, Any]:
    return {"id": entry_id, "object": "workspace-user", "role": role,
            "user": {"id": f"u_{entry_id}", "object": "user", "email": email}}


BEFORE = {
    "id": "ws_1", "object": "workspace", "name": "Made by hand", "accountId": "acc_1",
    "workspaceUsers": [user("wu_1", "jane@acme.com", "owner"), user("wu_2", "ana@acme.com", "editor"),
                       user("wu_3", "guest@customer.com", "viewer")],
    "workspaceDomains": [{"id": "wd_1", "object": "workspace-domain", "role": "viewer", "domain": "acme.com"}],
}
AFTER = {**BEFORE, "workspaceUsers": [user("wu_1", "jane@acme.com", "owner"),
                                      user("wu_3", "guest@customer.com", "viewer"),
                                      user("wu_4", "security@acme.com", "viewer")]}


def test_a_rule_on_an_unmanaged_workspace_posts_the_live_list_with_only_its_entries_changed(
        router: respx.Router, client: WorkspaceClient, tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(textwrap.dedent("""
        version: 1
        rules:
          baseline:
            match: {all: true}
            ensure: {users: [{email: security@acme.com, role: viewer}]}
            revoke: {users: [ana@acme.com]}
    """), encoding="utf-8")
    listing = router.get("/workspaces").mock(side_effect=[
        respx.MockResponse(200, json=page("workspaces", [BEFORE], 1, 1)),  # the plan
        respx.MockResponse(200, json=page("workspaces", [BEFORE], 1, 1)),  # apply, before writing
        respx.MockResponse(200, json=page("workspaces", [AFTER], 1, 1)),  # apply, reading back
    ])
    post = router.post("/workspaces/ws_1/access").respond(200, json=data("workspace", AFTER))
    plan = plan_with_client(client, load_desired(tmp_path), State())
    assert listing.call_count == 1
    state_path = tmp_path / "reconciler.state.json"
    apply_plan(plan, client=client, state=State(), state_path=state_path)
    assert json.loads(post.calls.last.request.content) == {
        "workspaceUsers": [{"email": "guest@customer.com", "role": "viewer"},
                           {"email": "jane@acme.com", "role": "owner"},
                           {"email": "security@acme.com", "role": "viewer"}],
        "notifyPeople": False,
    }
    assert router.calls.call_count == 4
    record = load_state(state_path).resources["unmanaged.ws_1"].access
    assert record is not None and record.users == {"security@acme.com": "viewer"}
