"""A saved plan edited after `plan --out` is refused, and nothing is sent.

The attack: the plan artifact of a pull-request run passes through the pull
request's own code, so whoever wrote the pull request can rewrite plan.json
before `apply --plan plan.json --auto-approve` runs on main.  Each test edits
the saved plan the way a careful forger would (the entries, the list's
snapshot and the call kept consistent with each other) and checks that apply
refuses it, says so, and leaves the service as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import emu_args, run_cli

Forgery = Callable[[dict[str, Any]], None]


pytestmark = pytest.mark.usefixtures("no_ambient_connection")


def group_access(doc: dict[str, Any]) -> dict[str, Any]:
    """The saved plan's change of the onboarding group's list."""
    return next(c for c in doc["plan"]["changes"] if c["address"] == "group.acme-onboarding")


def add_an_owner(doc: dict[str, Any]) -> None:
    change = group_access(doc)
    change["entries"].append({**change["entries"][0], "key": "attacker@evil.example", "action": "create",
                              "before": None, "after": "owner", "entry_id": None, "location": None,
                              "privilege": "grant", "flags": []})
    change["after"]["users"]["attacker@evil.example"] = "owner"


def change_a_role(doc: dict[str, Any]) -> None:
    change = group_access(doc)
    entry = next(e for e in change["entries"] if e["key"] == "priya@customer.com")
    entry["after"] = "owner"
    change["after"]["users"]["priya@customer.com"] = "owner"


def change_the_workspace(doc: dict[str, Any]) -> None:
    change = group_access(doc)
    change["workspace_id"] = "ws_portal"
    change["calls"] = [{**call, "path": call["path"].replace("ws_home", "ws_portal")} for call in change["calls"]]


def drop_the_revocation(doc: dict[str, Any]) -> None:
    change = group_access(doc)
    change["entries"] = [e for e in change["entries"] if e["action"] != "delete"]
    change["after"]["users"]["old.contractor@agency.io"] = "editor"
    doc["plan"]["summary"]["delete"] -= 1


def downgrade_the_owner(doc: dict[str, Any]) -> None:
    change = group_access(doc)
    change["entries"].append({**change["entries"][0], "key": "jane@acme.com", "action": "update",
                              "before": "owner", "after": "viewer", "entry_id": None, "location": None,
                              "privilege": "downgrade", "flags": ["owner"]})
    change["after"]["users"]["jane@acme.com"] = "viewer"
    change["after"]["users"]["attacker@evil.example"] = "owner"


def forge_the_effects(doc: dict[str, Any]) -> None:
    # What a reviewer reads as "after": a forger hides a grant from it.
    effect = doc["plan"]["effects"][0]
    effect["after"]["users"] = effect["before"]["users"]


FORGERIES: dict[str, Forgery] = {
    "forged effects": forge_the_effects,
    "an added owner": add_an_owner,
    "a changed role": change_a_role,
    "a changed workspace id": change_the_workspace,
    "a dropped revocation": drop_the_revocation,
    "a downgraded protected owner": downgrade_the_owner,
}


def saved_plan(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    plan_file = tmp_path / "plan.json"
    code, _, err = run_cli(["plan", str(project), *emu_args(project), "--out", str(plan_file)], capsys)
    assert code == 0, err
    return plan_file


def service_lists(project: Path) -> dict[str, Any]:
    """Every workspace's users and domains as the emulator keeps them."""
    data = yaml.safe_load((project / "emulator.yaml").read_text())
    return {ws["id"]: (ws.get("users"), ws.get("domains")) for company in data["companies"].values()
            for ws in company["workspaces"]}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_saved_plan_is_refused_and_nothing_is_sent(project: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str], forgery: str) -> None:
    plan_file = saved_plan(project, tmp_path, capsys)
    doc = json.loads(plan_file.read_text())
    FORGERIES[forgery](doc)
    plan_file.write_text(json.dumps(doc))
    before = service_lists(project)

    code, out, err = run_cli(["apply", str(project), *emu_args(project), "--plan", str(plan_file),
                              "--auto-approve"], capsys)

    assert code == 1
    assert (f"The saved plan {plan_file} is not the plan that the manifests, the live service and the state "
            "give now, although they have not changed since it was made, so nothing was changed.") in err
    assert "Apply complete" not in out
    assert service_lists(project) == before


def test_a_forged_plan_is_refused_even_where_policy_would_have_let_it_through(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Policy is judged on what would be sent, and that is the recomputed plan:
    a forged owner slips past no policy, because it is never sent."""
    plan_file = saved_plan(project, tmp_path, capsys)
    doc = json.loads(plan_file.read_text())
    add_an_owner(doc)
    plan_file.write_text(json.dumps(doc))

    code, _, err = run_cli(["apply", str(project), *emu_args(project), "--plan", str(plan_file),
                            "--auto-approve"], capsys)

    assert code == 1
    assert "At changes[0] ('group.acme-onboarding').entries[3] ('attacker@evil.example')" in err
    assert "attacker@evil.example" not in json.dumps(service_lists(project))


def test_the_refusal_names_the_first_difference(project: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = saved_plan(project, tmp_path, capsys)
    doc = json.loads(plan_file.read_text())
    change_a_role(doc)
    plan_file.write_text(json.dumps(doc))

    _, _, err = run_cli(["apply", str(project), *emu_args(project), "--plan", str(plan_file), "--auto-approve"],
                        capsys)

    assert ("At changes[0] ('group.acme-onboarding').entries[2] ('priya@customer.com').after the saved plan has "
            "'owner'; these inputs give 'commenter'.") in err


def test_an_unedited_saved_plan_applies_what_it_shows(project: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = saved_plan(project, tmp_path, capsys)

    code, out, err = run_cli(["apply", str(project), *emu_args(project), "--plan", str(plan_file),
                              "--auto-approve"], capsys)

    assert code == 0, err
    users = dict(service_lists(project))["ws_home"][0]
    assert {u["email"]: u["role"] for u in users} == {
        "jane@acme.com": "owner", "raj@customer.com": "collaborator", "priya@customer.com": "commenter"}
