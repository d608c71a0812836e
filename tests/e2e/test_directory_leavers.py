"""The directory's leavers on the company example: revoked from every workspace, handed over, said why.

examples/company with its ``offboarded`` rule emptied of Ana and a
``directory.yaml`` that deactivates her (no successor) and Cy (successor
Bo): planned and applied by the real client against the in-process emulator.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest

from reconciler.clock import VirtualClock
from reconciler.commands.plan import directory_for, plan_with_client
from reconciler.company.build import company_access
from reconciler.company.read import read_live
from reconciler.company.who import who
from reconciler.directory.store import open_directory_store
from reconciler.emulator import Emulator
from reconciler.manifest import load_desired
from reconciler.plan import Plan
from reconciler.plan.model import EntrySource
from reconciler.plan.render_markdown import render_markdown
from reconciler.plan.render_text import render_text
from reconciler.state import load_state
from tests.e2e.conftest import ROOT, EmulatorRig

DIRECTORY = """\
directory:
  groups:
    Customer Success:
    - bo@acme.com
  deactivated:
    ana@acme.com: {since: 2026-12-01}
    cy@acme.com: {since: 2026-11-30, successor: bo@acme.com}
"""


class Rig(EmulatorRig):
    def users(self, workspace_id: str) -> dict[str, str]:
        return {e.key: e.role for e in self.company.workspace(workspace_id).access.users}

    def edit(self, file: str, old: str, new: str) -> None:
        path = self.root / file
        text = path.read_text(encoding="utf-8")
        assert old in text, old
        path.write_text(text.replace(old, new), encoding="utf-8")

    def plan_live(self) -> Plan:
        desired, read = directory_for(load_desired(self.root), "live", self.state_path, self.root)
        return plan_with_client(self.client(), desired, load_state(self.state_path)).model_copy(
            update={"directory": read})


@pytest.fixture
def rig(tmp_path: Path, clock: VirtualClock) -> Rig:
    root = tmp_path / "company"
    shutil.copytree(ROOT / "examples" / "company", root)
    rig = Rig(Emulator.from_seed_file(root / "seed.yaml", clock=clock), clock, root)
    rig.edit("rules.yaml", "users: [ana@acme.com]", "users: [old@acme.com]")  # the directory offboards her now
    (root / "directory.yaml").write_text(DIRECTORY, encoding="utf-8")
    return rig


def test_a_leaver_of_the_directory_has_no_access_anywhere_in_the_company_after_apply(rig: Rig) -> None:
    before = [ws.id for ws in rig.company.workspaces if "ana@acme.com" in rig.users(ws.id)]
    assert len(before) == 10
    rig.apply()
    assert [ws.id for ws in rig.company.workspaces if "ana@acme.com" in rig.users(ws.id)] == []
    assert not rig.plan().has_changes


def test_a_leaver_with_a_successor_hands_over_where_they_were_the_last_owner(rig: Rig) -> None:
    plan = rig.apply()
    # Cy was the only owner of three workspaces no manifest names: Bo takes over there, Cy is gone everywhere.
    for workspace in ("ws_u05", "ws_u06", "ws_u12"):
        assert rig.users(workspace).get("bo@acme.com") == "owner", workspace
    assert all("cy@acme.com" not in rig.users(ws.id) for ws in rig.company.workspaces)
    handovers = [e for c in plan.access_changes for e in c.entries if "handover" in e.flags]
    assert {e.why for e in handovers} == {"successor named by the directory"}
    assert len(handovers) == 3


def test_the_plan_says_deactivated_in_the_directory_on_the_day_in_every_view(rig: Rig) -> None:
    plan = rig.plan()
    text, markdown = render_text(plan, by_person=True), render_markdown(plan)
    assert "REMOVED: loses access  (deactivated in the directory on 2026-12-01)" in text
    assert "ana@acme.com loses access to 10 workspaces: 10 (deactivated in the directory on 2026-12-01)" in text
    assert "deactivated in the directory on 2026-12-01" in markdown
    removal = next(e for c in plan.access_changes for e in c.entries if e.key == "ana@acme.com")
    assert removal.source == EntrySource(kind="directory", location=f"{rig.root / 'directory.yaml'}:6",
                                         rule="directory", since="2026-12-01")
    written = json.loads(plan.model_dump_json())["changes"]
    sources = [e["source"] for c in written if c["kind"] == "access" for e in c["entries"]
               if e["key"] == "ana@acme.com"]
    assert {(s["kind"], s["since"]) for s in sources} == {("directory", "2026-12-01")}


def test_who_says_a_leaver_of_the_directory_loses_each_access_at_the_next_apply(rig: Rig) -> None:
    """Before the apply, every access the leaver still has is what the next apply removes: never "not managed:
    granted in the web app", though no manifest line grants it any more."""
    company = company_access(load_desired(rig.root), read_live(rig.client()), load_state(rig.state_path))

    rows = [row for row in who(company, "user", "ana@acme.com").access if row.via == "self"]  # not a domain's
    assert len(rows) == 10
    assert {row.why.text() for row in rows} == {
        f"deactivated in the directory at {rig.root / 'directory.yaml'}:6: the next apply removes it"}
    rig.apply()
    after = company_access(load_desired(rig.root), read_live(rig.client()), load_state(rig.state_path))
    assert [row for row in who(after, "user", "ana@acme.com").access if row.via == "self"] == []


def test_a_leaver_a_hand_written_team_still_lists_is_not_granted_and_a_warning_names_the_line(rig: Rig) -> None:
    # teams.yaml still lists Cy in customer-success (line 7), which the group and Contoso's lists name.
    plan = rig.plan()
    warning = next(w for w in plan.warnings if "cy@acme.com was deactivated" in w)
    assert warning == (f"{rig.root / 'teams.yaml'}:7: team.customer-success: cy@acme.com was deactivated in the "
                       f"directory on 2026-11-30 ({rig.root / 'directory.yaml'}:7): the directory wins, the grant "
                       "is not made; remove the line")
    assert not [e for c in plan.access_changes for e in c.entries if e.key == "cy@acme.com" and e.after is not None]


def _mirror(rig: Rig, users: list[dict[str, object]], groups: list[dict[str, object]]) -> None:
    with open_directory_store(str(rig.state_path)) as store:
        store.mirror(users, groups, today=date(2026, 12, 5))


USERS = [{"id": "u-bo", "userName": "bo@acme.com", "active": True},
         {"id": "u-jane", "userName": "jane@acme.com", "active": True},
         {"id": "u-cy", "userName": "cy@acme.com", "active": False},
         {"id": "u-ana", "userName": "ana@acme.com", "active": False}]


def test_live_removals_from_a_group_apply_and_additions_wait(rig: Rig) -> None:
    rig.edit("teams.yaml", "customer-success: [bo@acme.com, cy@acme.com]", "customer-success: {directoryGroup: Customer Success}")
    rig.apply()
    assert rig.users("ws_contoso").get("bo@acme.com") == "editor"
    # The identity provider takes Bo out of the group and puts Jane's colleague Dee in.
    _mirror(rig, [*USERS, {"id": "u-dee", "userName": "dee@acme.com"}],
            [{"id": "g1", "displayName": "Customer Success", "members": [{"value": "u-dee"}]}])
    plan = rig.plan_live()
    assert [(c.address, e.key, e.after) for c in plan.access_changes for e in c.entries] == [
        ("group.northwind", "bo@acme.com", None), ("workspace.contoso-renewal", "bo@acme.com", None)]
    assert plan.directory is not None and plan.directory.waiting == 1
    assert ("Made with the live directory of " in render_text(plan)
            and "1 addition to groups waits for reconciler directory sync and a reviewed plan" in render_text(plan))


def test_a_live_leaver_is_revoked_and_handed_over_to_nobody(rig: Rig) -> None:
    rig.apply()
    # The CEO leaves in the identity provider (his manager is Jane); the committed directory.yaml does not know yet.
    ceo = {"id": "u-ceo", "userName": "ceo@acme.com", "active": False,
           "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"manager": {"value": "u-jane"}}}
    _mirror(rig, [*USERS, ceo], [])
    plan = rig.plan_live()
    assert not [e for c in plan.access_changes for e in c.entries if e.after is not None]
    # He was the Board's only owner: a person decides there, as no successor ever comes from the live directory.
    [stuck] = plan.needs_person
    assert (stuck.address, stuck.reason) == (
        "unmanaged.ws_u11", 'ws_u11 "Board – Minutes": ceo@acme.com is its only owner, and the directory '
        f"(deactivated on 2026-12-05) ({rig.state_path}:1) revokes them; nothing is changed on it until then")
