"""Governing the whole company: teams, rules over every workspace, offboarding.

The fixture is examples/company: fifteen workspaces, three named in the
manifests (a group of two and a standalone one), twelve in no manifest.
Planned and applied by the real client against the in-process emulator.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.emulator.seed import dump_store
from reconciler.errors import PlanError
from reconciler.plan import Plan
from reconciler.plan.model import AccessChange, EntrySource
from reconciler.plan.people import people
from reconciler.plan.render_text import render_text
from reconciler.state import load_state
from tests.e2e.conftest import ROOT, EmulatorRig, run_cli

COMPANY = ROOT / "examples" / "company"


class Rig(EmulatorRig):
    def users(self, workspace_id: str) -> dict[str, str]:
        return {e.key: e.role for e in self.company.workspace(workspace_id).access.users}

    def domains(self, workspace_id: str) -> dict[str, str]:
        return {e.key: e.role for e in self.company.workspace(workspace_id).access.domains}

    def edit(self, file: str, old: str, new: str) -> None:
        path = self.root / file
        text = path.read_text(encoding="utf-8")
        assert old in text, old
        path.write_text(text.replace(old, new), encoding="utf-8")

    def writes(self) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.emulator.requests if r.method != "GET"]

    def add_workspace_by_hand(self, workspace: dict[str, Any]) -> None:
        """A workspace made in the web app: the service as it is, plus one."""
        doc = dump_store(self.emulator.store)
        doc["companies"]["acme"]["workspaces"].append(workspace)
        self.emulator = Emulator.from_seed(doc, clock=self.clock)


@pytest.fixture
def rig(tmp_path: Path, clock: VirtualClock) -> Rig:
    root = tmp_path / "company"
    shutil.copytree(COMPANY, root)
    return Rig(Emulator.from_seed_file(root / "seed.yaml", clock=clock), clock, root)


def changes(plan: Plan) -> dict[str, AccessChange]:
    return {c.address: c for c in plan.access_changes}


def test_the_first_apply_puts_the_baseline_on_every_workspace_of_the_company(rig: Rig) -> None:
    rig.apply()
    for ws in rig.company.workspaces:
        assert rig.users(ws.id).get("security@acme.com") == "viewer", ws.id


def test_a_rule_keeps_everything_else_on_a_workspace_no_manifest_names(rig: Rig) -> None:
    rig.apply()
    assert rig.users("ws_u07") == {"jane@acme.com": "owner", "security@acme.com": "viewer"}
    assert rig.domains("ws_u07") == {"acme.com": "viewer"}


def test_after_apply_the_company_plan_has_no_changes(rig: Rig) -> None:
    rig.apply()
    assert rig.plan().changes == ()


def test_offboarding_revokes_her_from_every_workspace_managed_or_not_in_one_plan(rig: Rig) -> None:
    plan = rig.plan()
    (ana,) = [p for p in people(plan) if p.key == "ana@acme.com"]
    assert ana.loss_summary() == "ana@acme.com loses access to 10 workspaces: 10 via rule offboarded"
    rig.apply(plan)
    assert [ws.id for ws in rig.company.workspaces if "ana@acme.com" in rig.users(ws.id)] == []


def test_the_per_person_view_counts_losses_by_team_and_by_rule(rig: Rig) -> None:
    # Ana is still in the team at first: the lists reach her through it.
    rig.edit("rules.yaml", "      users: [ana@acme.com]\n", "      users: [leaver@acme.com]\n")
    rig.edit("teams.yaml", "customer-success: [bo@acme.com, cy@acme.com]",
             "customer-success: [ana@acme.com, bo@acme.com, cy@acme.com]")
    rig.apply()
    # Then she leaves: out of the team, into the offboarded rule.
    rig.edit("teams.yaml", "customer-success: [ana@acme.com, bo@acme.com, cy@acme.com]",
             "customer-success: [bo@acme.com, cy@acme.com]")
    rig.edit("rules.yaml", "      users: [leaver@acme.com]\n", "      users: [ana@acme.com]\n")
    plan = rig.plan()
    text = render_text(plan, by_person=True)
    assert ("  ana@acme.com loses access to 10 workspaces: 7 via rule offboarded, 3 via team customer-success"
            in text.splitlines())
    contoso = changes(plan)["workspace.contoso-renewal"]
    (removal,) = contoso.removals
    assert removal.source == EntrySource(kind="team", team="customer-success")
    assert removal.reason == "put there by team customer-success, which no longer lists them: loses editor access"


def test_removing_someone_from_a_team_revokes_them_from_a_non_authoritative_list(rig: Rig) -> None:
    rig.apply()
    rig.edit("teams.yaml", "customer-success: [bo@acme.com, cy@acme.com]", "customer-success: [bo@acme.com]")
    plan = rig.plan()
    assert [(a, e.key, e.why) for a, e in plan.removals] == [
        ("group.northwind", "cy@acme.com", "left team customer-success"),
        ("workspace.contoso-renewal", "cy@acme.com", "left team customer-success"),
    ]
    rig.apply(plan)
    assert rig.users("ws_contoso") == {"jane@acme.com": "owner", "buyer@contoso.com": "viewer",
                                       "bo@acme.com": "editor", "security@acme.com": "viewer"}


def test_a_workspace_made_in_the_web_app_after_the_last_apply_gets_the_baseline(rig: Rig) -> None:
    rig.apply()
    rig.add_workspace_by_hand({"id": "ws_new", "name": "Litware – Kickoff", "account": "acc_contoso",
                               "users": [{"email": "cy@acme.com", "role": "owner"}]})
    plan = rig.plan()
    assert [c.address for c in plan.changes] == ["unmanaged.ws_new"]
    rig.apply(plan)
    assert rig.users("ws_new") == {"cy@acme.com": "owner", "security@acme.com": "viewer"}


def test_an_entry_taken_out_of_ensure_is_removed_where_the_rule_put_it_and_nowhere_else(rig: Rig) -> None:
    rig.apply()
    rig.edit("rules.yaml", "      teams: [{team: security, role: viewer}]\n",
             "      teams: [{team: security, role: viewer}]\n      users: [{email: audit@acme.com, role: viewer}]\n")
    rig.apply()
    assert all(rig.users(ws.id).get("audit@acme.com") == "viewer" for ws in rig.company.workspaces)
    rig.add_workspace_by_hand({"id": "ws_hand", "name": "Audit – Own", "account": "acc_contoso",
                               "users": [{"email": "jane@acme.com", "role": "owner"},
                                         {"email": "audit@acme.com", "role": "editor"}]})
    rig.edit("rules.yaml", "      users: [{email: audit@acme.com, role: viewer}]\n", "")
    plan = rig.plan()
    removed = sorted(c.workspace_id for c in plan.access_changes for e in c.removals if e.key == "audit@acme.com")
    # Every workspace the rule put it on (the group's list once, for both of its workspaces) ...
    assert removed == sorted(["ws_nw_home", "ws_contoso", *(f"ws_u{i:02}" for i in range(1, 13))])
    # ... and not the one where someone granted it by hand (which only gets the baseline).
    assert [(e.key, e.action.value) for e in changes(plan)["unmanaged.ws_hand"].entries] == [
        ("security@acme.com", "create")]
    assert {e.why for c in plan.access_changes for e in c.removals if e.key == "audit@acme.com"} == {
        "no longer ensured by rule security-baseline"}
    rig.apply(plan)
    assert rig.users("ws_hand")["audit@acme.com"] == "editor"
    assert "audit@acme.com" not in rig.users("ws_u03")


def test_an_explicit_entry_wins_over_a_rules_ensure_and_the_plan_says_so(rig: Rig) -> None:
    rig.edit("customers.yaml", "      users: [{email: jane@acme.com, role: owner}]\n      teams: [{team: customer-success, role: editor}]\n    workspaces:",
             "      users: [{email: jane@acme.com, role: owner}, {email: security@acme.com, role: editor}]\n"
             "      teams: [{team: customer-success, role: editor}]\n    workspaces:")
    plan = rig.plan()
    (entry,) = [e for e in changes(plan)["group.northwind"].entries if e.key == "security@acme.com"]
    assert (entry.after, entry.why) == ("editor", "explicit entry, over rule security-baseline (team security)")


def test_a_rule_matching_a_member_changes_the_groups_shared_list(rig: Rig) -> None:
    rig.apply()
    rig.edit("rules.yaml", 'match: {names: ["Northwind*", "Tailspin*"]}', 'match: {names: ["*Kickoff"]}')
    rig.edit("rules.yaml", "      domains: [gmail.com]\n", "      domains: [gmail.com]\n  kickoff-readers:\n"
             "    match: {names: ['Northwind – Kickoff']}\n    ensure: {domains: [{domain: northwind.com, role: viewer}]}\n")
    plan = rig.plan()
    group = changes(plan)["group.northwind"]
    assert [(e.key, e.after) for e in group.entries] == [("northwind.com", "viewer")]
    assert group.reaches == ('ws_nw_home "Northwind – Home"', 'ws_nw_kickoff "Northwind – Kickoff"')


def test_a_rule_that_would_leave_a_workspace_without_an_owner_is_refused_before_any_call(rig: Rig) -> None:
    rig.edit("rules.yaml", "      users: [ana@acme.com]\n", "      users: [ana@acme.com, ceo@acme.com]\n")
    with pytest.raises(PlanError) as caught:
        rig.apply()
    assert str(caught.value).splitlines() == [
        "The plan is refused: it would leave access lists without an owner.",
        f"  {rig.root / 'rules.yaml'}:5: unmanaged.ws_u11 (ws_u11) would have no user or domain with role owner.",
    ]
    assert rig.writes() == []


def test_a_rule_that_matches_nothing_is_a_warning(rig: Rig) -> None:
    rig.edit("rules.yaml", 'match: {names: ["Northwind*", "Tailspin*"]}', 'match: {names: ["Nothwind*"]}')
    assert f"{rig.root / 'rules.yaml'}:17: rule.no-personal-email: matches no workspace of the company (15 listed); " \
           "check its match (a name pattern is case-sensitive)" in rig.plan().warnings


def test_the_state_remembers_what_the_rules_put_on_a_workspace_no_manifest_names(rig: Rig) -> None:
    rig.apply()
    record = load_state(rig.state_path).resources["unmanaged.ws_u06"]
    assert record.id == "ws_u06"
    assert record.access is not None
    assert (record.access.users, record.access.via) == ({"security@acme.com": "viewer"},
                                                        {"user:security@acme.com": "rule security-baseline"})


def test_the_plan_reads_the_listing_once_with_rules(rig: Rig) -> None:
    rig.plan()
    assert [(r.method, r.path) for r in rig.emulator.requests] == [("GET", "/v1/workspaces")]


def test_reconciler_demo_runs_the_company_example_to_no_changes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["demo", str(COMPANY)], capsys)
    assert code == 0
    assert out.rstrip().splitlines()[-2].startswith("No changes.")


def test_an_except_id_no_workspace_has_is_refused_naming_its_line(rig: Rig) -> None:
    """The issue's typo: ws_u1l for ws_u11 was accepted, and the rule reached the workspace it was to spare."""
    rig.edit("rules.yaml", "    match: {all: true}\n    ensure:", "    match:\n      all: true\n      except:\n"
                                                                 "        - ws_u1l\n    ensure:")
    with pytest.raises(PlanError) as caught:
        rig.apply()
    assert str(caught.value).splitlines() == [
        "The plan cannot be made:",
        f"  {rig.root / 'rules.yaml'}:10: rules.security-baseline: except names workspace 'ws_u1l', which the "
        "company has no workspace with, so the rule would reach the workspace it was meant to spare. Did you mean "
        "ws_u11?",
    ]
    assert rig.writes() == []


def test_an_except_id_the_company_has_spares_that_workspace(rig: Rig) -> None:
    rig.edit("rules.yaml", "    match: {all: true}\n    ensure:", "    match: {all: true, except: [ws_u11]}\n"
                                                                 "    ensure:")
    assert "unmanaged.ws_u11" not in changes(rig.plan())
