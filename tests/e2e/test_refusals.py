"""Refusals users rely on, each pinned by its exact message and by the
emulator's request record: a refusal that promises "nothing was changed"
is checked to have sent no write at all.

Each test here was written against a bug planted by hand in the code that
implements the refusal (issue 19, item 9): the suite let the bug through
before, and this test fails with it.  The CLI runs against the emulator
served on 127.0.0.1, so its request record holds every call the CLI made.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport
from reconciler.emulator.records import RequestRecord
from reconciler.errors import ApplyError
from reconciler.state import load_state, write_state
from tests.e2e.conftest import QUICKSTART, TOKEN, EmulatorRig, onboarding_rig, run_cli

KICKOFF = "group.customer-inc.workspace.kickoff"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    dest = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, dest)
    return dest


class Cli:
    """The real entry point, pointed at the served emulator with the company's token."""

    def __init__(self, base_url: str, emulator: Emulator, capsys: pytest.CaptureFixture[str]) -> None:
        self.base_url, self.emulator, self.capsys = base_url, emulator, capsys

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        return run_cli([*argv, "--base-url", self.base_url], self.capsys)

    def writes(self, since: int = 0) -> list[RequestRecord]:
        """Every request from ``since`` on that could have changed the service."""
        return [r for r in self.emulator.requests[since:] if r.method != "GET"]


@pytest.fixture
def cli(served: tuple[str, Emulator], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    base_url, emulator = served
    return Cli(base_url, emulator, capsys)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def add_policy(project: Path, body: str) -> Path:
    policy = project / "policy.yaml"
    policy.write_text("version: 1\npolicy:\n" + body, encoding="utf-8")
    return policy


# --- 1. allowedDomains matches whole domains, not name endings -------------------------------------


def test_allowed_domain_acme_com_does_not_let_in_a_user_of_evilacme_com(project: Path, cli: Cli) -> None:
    policy = add_policy(project, "  allowedDomains: [acme.com, customer.com, partner.io]\n")
    manifest = project / "manifest.yaml"
    edit(manifest, "{email: lee@partner.io, role: commenter}", "{email: x@evilacme.com, role: commenter}")
    code, out, err = cli("apply", str(project), "--auto-approve")
    assert (code, out) == (1, "")
    assert err == (f"Error: 1 problem in the manifest:\n  {manifest}:26: workspace.partner-portal: user "
                   f"x@evilacme.com is outside the allowed domains (policy allowedDomains at {policy}:3) and may "
                   "not be granted access\n")
    assert cli.emulator.requests == []


def test_allowed_domain_acme_com_does_not_let_in_the_domain_evilacme_com(project: Path, cli: Cli) -> None:
    policy = add_policy(project, "  allowedDomains: [acme.com, customer.com, partner.io]\n")
    manifest = project / "manifest.yaml"
    edit(manifest, "{domain: customer.com, role: viewer}", "{domain: evilacme.com, role: viewer}")
    code, out, err = cli("apply", str(project), "--auto-approve")
    assert (code, out) == (1, "")
    assert err == (f"Error: 1 problem in the manifest:\n  {manifest}:18: group.acme-onboarding: domain "
                   f"evilacme.com is outside the allowed domains (policy allowedDomains at {policy}:3) and may "
                   "not be granted access\n")
    assert cli.emulator.requests == []


# --- 2. maxRoleOutside: one role above the cap is refused -----------------------------------------


def test_an_outside_grant_one_role_above_max_role_outside_is_refused(project: Path, cli: Cli) -> None:
    policy = add_policy(project, "  allowedDomains: [acme.com, customer.com]\n  maxRoleOutside: commenter\n")
    manifest = project / "manifest.yaml"
    # collaborator is the role right above commenter (reconciler.vocabulary.ROLE_ORDER).
    edit(manifest, "{email: lee@partner.io, role: commenter}", "{email: lee@partner.io, role: collaborator}")
    code, out, err = cli("apply", str(project), "--auto-approve")
    assert (code, out) == (1, "")
    assert err == (f"Error: 1 problem in the manifest:\n  {manifest}:26: workspace.partner-portal: user "
                   "lee@partner.io is outside the allowed domains and may be given at most commenter (policy "
                   f"maxRoleOutside at {policy}:4), not collaborator\n")
    assert cli.emulator.requests == []


# --- 3. an editor is not an owner -------------------------------------------------------------------


def test_a_list_left_with_editors_but_no_owner_is_refused(project: Path, cli: Cli) -> None:
    manifest = project / "manifest.yaml"
    # Not authoritative: the live list (ops owner, temp editor) is merged with the manifest's, and ops is
    # made an editor, so the list would hold editors and a commenter, and no owner.
    edit(manifest, "{email: ops@acme.com, role: owner}", "{email: ops@acme.com, role: editor}")
    code, out, err = cli("apply", str(project), "--auto-approve")
    assert (code, out) == (1, "")
    assert err == ("Error: The plan is refused: it would leave access lists without an owner.\n"
                   f"  {manifest}:23: workspace.partner-portal (ws_portal) would have no user or domain with "
                   "role owner.\n")
    assert cli.writes() == []
    assert {u.key: u.role for u in cli.emulator.store.companies["acme"].workspace("ws_portal").access.users} == {
        "ops@acme.com": "owner", "temp@acme.com": "editor"}


# --- 4. a saved plan is bound to the state's serial and to every list it read ----------------------
# These run the CLI (plan --out, then apply --plan) and judge only what a user sees: the exit code, a
# message naming the plan file and saying nothing was changed, no write in the emulator's record, the
# state file untouched.  They hold however apply decides that a plan is stale.

PRIYA_ON_THE_PORTAL = ("        - {email: lee@partner.io, role: commenter}\n",
                       "        - {email: lee@partner.io, role: commenter}\n"
                       "        - {email: priya@customer.com, role: commenter}\n")


def saved_plan_writing_the_portal_only(project: Path, cli: Cli) -> Path:
    """Apply the quickstart, then add a person to the partner portal and save
    that plan: it writes ws_portal and nothing else."""
    assert cli("apply", str(project), "--auto-approve")[0] == 0
    edit(project / "manifest.yaml", *PRIYA_ON_THE_PORTAL)
    plan_file = project / "plan.json"
    code, _, err = cli("plan", str(project), "--out", str(plan_file))
    assert code == 0, err
    saved = json.loads(plan_file.read_text(encoding="utf-8"))["plan"]
    assert [c["address"] for c in saved["changes"]] == ["workspace.partner-portal"]
    return plan_file


def assert_refused_saved_plan(cli: Cli, project: Path, plan_file: Path) -> None:
    state_file = project / "reconciler.state.json"
    state_before = state_file.read_bytes()
    start = len(cli.emulator.requests)
    code, out, err = cli("apply", str(project), "--plan", str(plan_file), "--auto-approve")
    assert code == 1, out + err
    assert err.startswith(f"Error: The saved plan {plan_file} ")
    assert "nothing was changed" in err
    assert cli.writes(start) == []
    assert state_file.read_bytes() == state_before


def test_a_saved_plan_is_refused_when_only_the_state_serial_moved(project: Path, cli: Cli) -> None:
    plan_file = saved_plan_writing_the_portal_only(project, cli)
    state_file = project / "reconciler.state.json"
    # Another run rewrote the state with the same content: only its serial moved on.
    before = load_state(state_file)
    after = write_state(state_file, before)
    assert after.model_dump(exclude={"serial"}) == before.model_dump(exclude={"serial"})
    assert after.serial == before.serial + 1
    assert_refused_saved_plan(cli, project, plan_file)
    assert {u.key for u in cli.emulator.store.companies["acme"].workspace("ws_portal").access.users} == {
        "ops@acme.com", "lee@partner.io", "temp@acme.com"}


def test_a_saved_plan_is_refused_when_a_list_it_does_not_write_changed(project: Path, cli: Cli) -> None:
    plan_file = saved_plan_writing_the_portal_only(project, cli)
    # Someone makes Raj a viewer again on the onboarding group's list, in the web app; the saved plan
    # does not write that list, so the re-read apply does before writing does not look at it.
    users = [{"email": "jane@acme.com", "role": "owner"}, {"email": "raj@customer.com", "role": "viewer"},
             {"email": "priya@customer.com", "role": "commenter"}]
    with httpx.Client(base_url=f"{cli.base_url}/v1", headers={"Authorization": f"Bearer {TOKEN}"}) as web_app:
        web_app.post("/workspaces/ws_home/access", json={"workspaceUsers": users}).raise_for_status()
    assert_refused_saved_plan(cli, project, plan_file)
    assert {u.key for u in cli.emulator.store.companies["acme"].workspace("ws_portal").access.users} == {
        "ops@acme.com", "lee@partner.io", "temp@acme.com"}


# --- 5. a lost creation answer never adopts a workspace the state binds to another address --------

OLD_KICKOFF = "group.customer-inc.workspace.old-kickoff"


def kickoff_known_under_another_address(tmp_path: Path, clock: VirtualClock) -> tuple[EmulatorRig, str]:
    """The onboarding example applied, then the state's kickoff workspace
    moved to another address: the plan creates a new "Customer Inc – Kickoff"
    while one of that name, account and template exists, bound elsewhere."""
    rig = onboarding_rig(tmp_path, clock)
    rig.apply()
    state = load_state(rig.state_path)
    old_id = state.resources[KICKOFF].id
    write_state(rig.state_path, state.with_resource(OLD_KICKOFF, old_id).without(KICKOFF))
    return rig, old_id


def kickoffs(rig: EmulatorRig) -> list[str]:
    return [w.id for w in rig.company.workspaces if w.name == "Customer Inc – Kickoff"]


def test_a_lost_creation_answer_does_not_adopt_a_workspace_bound_to_another_address(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig, old_id = kickoff_known_under_another_address(tmp_path, clock)
    plan = rig.plan()
    assert [(c.kind, c.address) for c in plan.changes] == [("create", KICKOFF), ("access", KICKOFF)]
    rig.emulator.faults.inject("POST", "/connected-workspaces$", kind="drop")  # hung up before creating
    start = len(rig.emulator.requests)
    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    assert str(stopped.value) == (
        f"Apply stopped at {KICKOFF} ({rig.root / 'groups.yaml'}:31): No answer from the service to POST "
        "/workspaces/ws_home/connected-workspaces: RemoteProtocolError: connection dropped on POST "
        "/v1/workspaces/ws_home/connected-workspaces (before the change). Check the address and the network. The "
        "change may or may not have been made: look for what the call may have created before trying it again, "
        "so that nothing is created twice. No new workspace named \"Customer Inc – Kickoff\" from template "
        f"tpl_kickoff exists, so none was created and no credit was used (of that name there is only {old_id}, "
        f"bound to {OLD_KICKOFF} in the state). If that is the workspace meant for {KICKOFF}, bind it there: "
        f"'reconciler state rm {OLD_KICKOFF}' and 'reconciler import {KICKOFF} {old_id}'. Run 'reconciler apply' "
        "again.")
    after = [(r.method, r.path, r.status) for r in rig.emulator.requests[start:]]
    # The creation was sent once, the workspaces listed to look for it, and nothing else.
    assert after == [("POST", "/v1/workspaces/ws_home/connected-workspaces", 0), ("GET", "/v1/workspaces", 200)]
    assert kickoffs(rig) == [old_id]
    recorded = load_state(rig.state_path).resources
    assert KICKOFF not in recorded and recorded[OLD_KICKOFF].id == old_id


def test_a_lost_creation_answer_adopts_the_new_workspace_not_the_one_bound_elsewhere(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig, old_id = kickoff_known_under_another_address(tmp_path, clock)
    rig.emulator.faults.inject("POST", "/connected-workspaces$", kind="after_commit")  # created, answer lost
    rig.apply()
    (new_id,) = set(kickoffs(rig)) - {old_id}
    recorded = load_state(rig.state_path).resources
    assert recorded[KICKOFF].id == new_id


# --- 6. an answer reporting another list than was sent stops the apply -----------------------------


class ReportsAnotherRole(httpx.BaseTransport):
    """The emulator, except that its answer to a write (``path`` ending the
    request path) reports ``email`` with ``role``, whatever it stored: the
    service saying it holds another list than the one it accepted."""

    def __init__(self, emulator: Emulator, path: str, email: str, role: str) -> None:
        self.inner = emulator_transport(emulator)
        self.path, self.email, self.role = path, email, role

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self.inner.handle_request(request)
        if request.method != "POST" or not request.url.path.endswith(self.path) or answer.status_code >= 300:
            return answer
        doc: dict[str, Any] = json.loads(answer.read())
        for user in doc["data"]["workspace"].get("workspaceUsers", []):
            if user["user"]["email"] == self.email:
                user["role"] = self.role
        headers = {k: v for k, v in answer.headers.items() if k.lower() not in ("content-length", "content-type")}
        return httpx.Response(answer.status_code, headers=headers, json=doc, request=request)


def client_through(transport: httpx.BaseTransport, clock: VirtualClock) -> WorkspaceClient:
    return WorkspaceClient(make_http_client("http://emulator.invalid", TOKEN, transport=transport), clock=clock)


def test_an_access_answer_reporting_another_list_than_was_sent_stops_the_apply(
        tmp_path: Path, clock: VirtualClock) -> None:
    root = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, root)
    rig = EmulatorRig(Emulator.from_seed_file(root / "seed.yaml", clock=clock), clock, root)
    plan = rig.plan()
    assert [c.address for c in plan.changes] == ["group.acme-onboarding", "workspace.partner-portal"]
    start = len(rig.emulator.requests)
    lying = ReportsAnotherRole(rig.emulator, "/workspaces/ws_home/access", "priya@customer.com", "viewer")
    with pytest.raises(ApplyError) as stopped:
        apply_plan(plan, client=client_through(lying, clock), state=load_state(rig.state_path),
                   state_path=rig.state_path)
    assert str(stopped.value) == (
        "group.acme-onboarding: the service accepted POST /workspaces/ws_home/access but reports a different "
        "list than was sent: user priya@customer.com was commenter, now viewer. This is a bug in the service or "
        "in reconciler; run 'reconciler plan' to see the result.")
    # The re-read before writing, the write whose answer differs, and nothing after it: the partner
    # portal's list is not written, and the lists are not read back.
    assert [(r.method, r.path) for r in rig.emulator.requests[start:]] == [
        ("GET", "/v1/workspaces"), ("POST", "/v1/workspaces/ws_home/access")]
    assert {u.key for u in rig.company.workspace("ws_portal").access.users} == {"ops@acme.com", "temp@acme.com"}


def test_a_creation_answer_reporting_another_list_than_was_sent_stops_the_apply(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan()
    # The group's list rides on the first creation (the kickoff workspace); each creation is followed by
    # the list it gives (governs "create": no call).
    assert [(c.kind, c.address) for c in plan.changes[3:8]] == [
        ("create", KICKOFF), ("access", KICKOFF), ("create", "group.customer-inc.workspace.renewal"),
        ("access", "group.customer-inc.workspace.renewal"), ("access", "group.customer-inc")]
    start = len(rig.emulator.requests)
    lying = ReportsAnotherRole(rig.emulator, "/workspaces/ws_home/connected-workspaces", "raj@customer.com",
                               "viewer")
    with pytest.raises(ApplyError) as stopped:
        apply_plan(plan, client=client_through(lying, clock), state=load_state(rig.state_path),
                   state_path=rig.state_path)
    assert str(stopped.value) == (
        f"{KICKOFF}: the service accepted POST /workspaces/ws_home/connected-workspaces but reports a different "
        "list than was sent: user raj@customer.com was collaborator, now viewer. This is a bug in the service "
        "or in reconciler; run 'reconciler plan' to see the result.")
    # Two existing workspaces connected, the kickoff created, and nothing after it: no second creation.
    connect = ("POST", "/v1/workspaces/ws_home/connected-workspaces")
    assert [(r.method, r.path) for r in rig.emulator.requests[start:] if r.method != "GET"] == [connect] * 3
    assert [w.name for w in rig.company.workspaces if w.name.startswith("Customer Inc – Renewal")] == []


def test_a_workspace_whose_creation_answer_reports_another_list_is_still_recorded(
        tmp_path: Path, clock: VirtualClock) -> None:
    """The creation was made (a credit spent) even though its answer is wrong:
    the stop must not lose the new workspace's id."""
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan()
    lying = ReportsAnotherRole(rig.emulator, "/workspaces/ws_home/connected-workspaces", "raj@customer.com",
                               "viewer")
    with pytest.raises(ApplyError):
        apply_plan(plan, client=client_through(lying, clock), state=load_state(rig.state_path),
                   state_path=rig.state_path)
    (kickoff,) = [w.id for w in rig.company.workspaces if w.name == "Customer Inc – Kickoff"]
    assert load_state(rig.state_path).resources[KICKOFF].id == kickoff
