"""Governing the whole company: teams, rules over every workspace, offboarding.

The fixture is examples/company: fifteen workspaces, three named in the
manifests (a group of two and a standalone one), twelve in no manifest.
Planned and applied by the real client against the in-process emulator.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.emulator.seed import dump_store
from reconciler.errors import ApplyError, PlanError
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


OFFBOARD_BO_CEO = ("      users: [ana@acme.com]\n", "      users: [ana@acme.com, ceo@acme.com]\n")


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


OFFBOARD_BO = ("      users: [ana@acme.com]\n", "      users: [ana@acme.com, bo@acme.com]\n")
BO_LEAVES_THE_TEAM = ("customer-success: [bo@acme.com, cy@acme.com]", "customer-success: [cy@acme.com]")


def test_a_revoked_last_owner_hands_over_to_the_rules_successor_shown_under_review_first(rig: Rig) -> None:
    rig.edit("teams.yaml", *BO_LEAVES_THE_TEAM)
    rig.edit("rules.yaml", OFFBOARD_BO[0], OFFBOARD_BO[1] + "      successor: cy@acme.com\n")
    plan = rig.plan()
    text = render_text(plan).splitlines()
    assert [line for line in text if line.startswith("  handover")] == [
        f"  handover   unmanaged.{ws}: user cy@acme.com gains owner [owner] [handover]" for ws in ("ws_u02", "ws_u09",
                                                                                               "ws_u10")]
    (entry,) = [e for e in changes(plan)["unmanaged.ws_u02"].entries if e.key == "cy@acme.com"]
    assert (entry.review, entry.why, entry.reason) == (
        "handover", "successor named by rule offboarded",
        f"handover: rule offboarded revokes bo@acme.com, the last owner here; its successor "
        f"({rig.root / 'rules.yaml'}:15) becomes owner")
    rig.apply(plan)
    assert rig.users("ws_u02") == {"cy@acme.com": "owner", "security@acme.com": "viewer"}


def test_a_handed_over_owner_stays_on_the_next_plans(rig: Rig) -> None:
    rig.edit("teams.yaml", *BO_LEAVES_THE_TEAM)
    rig.edit("rules.yaml", OFFBOARD_BO[0], OFFBOARD_BO[1] + "      successor: cy@acme.com\n")
    rig.apply()
    assert rig.plan().changes == ()
    assert rig.users("ws_u10")["cy@acme.com"] == "owner"


def test_without_a_successor_a_workspace_in_no_manifest_losing_its_last_owner_needs_a_person(rig: Rig) -> None:
    rig.edit("rules.yaml", *OFFBOARD_BO_CEO)
    plan = rig.plan()
    rules = rig.root / "rules.yaml"
    assert render_text(plan).splitlines()[:3] == [
        "1 resource needs a person (nothing is sent for it until then):",
        f'  unmanaged.ws_u11 ({rules}:14): ws_u11 "Board – Minutes": ceo@acme.com is its only owner, and rule '
        f"offboarded ({rules}:14) revokes them; nothing is changed on it until then.",
        "    Name a successor under rule offboarded's revoke (successor: EMAIL becomes owner wherever "
        "ceo@acme.com was the last one), or give the workspace an owner in a manifest.",
    ]
    assert "unmanaged.ws_u11" not in changes(plan)


def test_one_workspace_the_rules_cannot_fix_does_not_hold_back_the_rollout(rig: Rig) -> None:
    rig.edit("rules.yaml", *OFFBOARD_BO_CEO)
    with pytest.raises(ApplyError):
        rig.apply()  # everything else is done, and the apply says what is open
    assert rig.users("ws_u11") == {"ceo@acme.com": "owner"}
    assert all(rig.users(ws.id).get("security@acme.com") == "viewer"
               for ws in rig.company.workspaces if ws.id != "ws_u11")
    assert [n.address for n in rig.plan().needs_person] == ["unmanaged.ws_u11"]


def test_a_workspace_in_no_manifest_that_has_no_owner_is_left_to_a_person(rig: Rig) -> None:
    rig.add_workspace_by_hand({"id": "ws_orphan", "name": "Orphan", "account": "acc_contoso",
                               "users": [{"email": "cy@acme.com", "role": "editor"}]})
    plan = rig.plan()
    (item,) = plan.needs_person
    assert (item.address, item.location, item.reason, item.check) == (
        "unmanaged.ws_orphan", f"{rig.root / 'rules.yaml'}:5",
        'ws_orphan "Orphan": its list has no owner now, and rule security-baseline would change it; a list without '
        "an owner is left to a person", "Give it an owner in the web app, or name it in a manifest with an owner.")
    assert len([c for c in plan.access_changes if c.governs == "rules"]) == 12  # every other one in no manifest


def test_plan_detailed_exitcode_says_a_skipped_workspace_is_still_open(rig: Rig, capsys: pytest.CaptureFixture[str]
                                                                      ) -> None:
    rig.edit("rules.yaml", *OFFBOARD_BO_CEO)
    where = ["--emulator", str(rig.root / "emulator.yaml"), "--seed", str(rig.root / "seed.yaml"),
             "--state", str(rig.state_path)]
    code, _, err = run_cli(["apply", str(rig.root), *where, "--auto-approve"], capsys)
    assert (code, [line for line in err.splitlines() if line.startswith("Error")]) == (1, ["Error: Apply made every other change (the plan's 14 changes, in 16 API "
                                              "calls), but 1 resource needs a person (nothing is sent for it until "
                                              "then):"])
    code, out, _ = run_cli(["plan", str(rig.root), *where, "--detailed-exitcode"], capsys)
    assert (code, out.splitlines()[4]) == (2, "Nothing else to change (14 access lists checked: 2 named by a "
                                           "manifest, 12 by rules only).")


def test_audit_says_a_workspace_the_rules_skip_is_left_to_a_person(rig: Rig, capsys: pytest.CaptureFixture[str]
                                                                   ) -> None:
    rig.edit("rules.yaml", *OFFBOARD_BO_CEO)
    where = ["--emulator", str(rig.root / "emulator.yaml"), "--seed", str(rig.root / "seed.yaml"),
             "--state", str(rig.state_path)]
    run_cli(["apply", str(rig.root), *where, "--auto-approve"], capsys)
    code, out, _ = run_cli(["audit", str(rig.root), *where], capsys)
    rules = rig.root / "rules.yaml"
    assert (code, out.splitlines()[0], out.splitlines()[-2:]) == (
        2, "Audit of 15 workspaces (3 named by a manifest, 12 reached only by rules), read in 1 call: no policy violation, nothing the "
           "rules would change, 1 workspace left to a person.",
        ["Left to a person, the rules skip them (1):",
         f'  unmanaged.ws_u11 ({rules}:14): ws_u11 "Board – Minutes": ceo@acme.com is its only owner, and rule '
         f"offboarded ({rules}:14) revokes them; nothing is changed on it until then. Name a successor under rule "
         "offboarded's revoke (successor: EMAIL becomes owner wherever ceo@acme.com was the last one), or give the "
         "workspace an owner in a manifest."])


def test_a_manifest_list_a_revoke_leaves_without_an_owner_is_refused_naming_the_person_rule_and_ways_out(
        rig: Rig) -> None:
    rig.edit("customers.yaml", "      users: [{email: jane@acme.com, role: owner}]\n      teams: [{team: customer-success, "
             "role: editor}]\n    workspaces:", "      users: [{email: ceo@acme.com, role: owner}]\n      teams: "
             "[{team: customer-success, role: editor}]\n    workspaces:")
    rig.edit("customers.yaml", "      users: [{email: jane@acme.com, role: owner}]\n", "      users: []\n")
    rig.edit("rules.yaml", "      users: [ana@acme.com]\n", "      users: [ana@acme.com, jane@acme.com]\n")
    with pytest.raises(PlanError) as caught:
        rig.plan()
    rules = rig.root / "rules.yaml"
    assert str(caught.value).splitlines() == [
        "The plan is refused: it would leave access lists without an owner.",
        f'  {rules}:14: rule offboarded revokes jane@acme.com, the only owner of 1 list: workspace.contoso-renewal '
        f'(ws_contoso "Contoso – Renewal"); name a successor under rule offboarded\'s revoke (successor: EMAIL '
        "becomes owner wherever jane@acme.com was the last one), or give these lists an owner in a manifest.",
    ]
    assert rig.writes() == []


def test_a_change_header_names_only_the_rules_that_act_on_it(rig: Rig) -> None:
    rig.apply()
    rig.add_workspace_by_hand({"id": "ws_back", "name": "Back – Door", "account": "acc_contoso",
                               "users": [{"email": "jane@acme.com", "role": "owner"},
                                         {"email": "ana@acme.com", "role": "editor"},
                                         {"email": "security@acme.com", "role": "viewer"}]})
    change = changes(rig.plan())["unmanaged.ws_back"]
    assert (change.rules, change.location) == (("offboarded",), f"{rig.root / 'rules.yaml'}:10")


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


def _cli_where(rig: Rig) -> list[str]:
    return ["--emulator", str(rig.root / "emulator.yaml"), "--seed", str(rig.root / "seed.yaml"),
            "--state", str(rig.state_path)]


def test_the_reports_changes_name_the_rule_behind_a_revocation(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(["report", str(rig.root), *_cli_where(rig), "--out", str(rig.root / "before")], capsys)
    run_cli(["apply", str(rig.root), *_cli_where(rig), "--auto-approve"], capsys)
    code, _, err = run_cli(["report", str(rig.root), *_cli_where(rig), "--out", str(rig.root / "after"), "--since",
                            str(rig.root / "before" / "access.json")], capsys)
    assert code == 0, err
    lines = (rig.root / "after" / "changes.csv").read_text(encoding="utf-8-sig").splitlines()
    assert "revocation,ws_u01,Northwind – QBR 2025,user,ana@acme.com,editor,,external," \
           f"rule offboarded at {rig.root / 'rules.yaml'}:14" in lines


def test_the_report_lists_a_leaver_who_still_holds_access_through_a_domain(
        rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(["apply", str(rig.root), *_cli_where(rig), "--auto-approve"], capsys)
    code, out, err = run_cli(["report", str(rig.root), *_cli_where(rig), "--out", str(rig.root / "out")], capsys)
    assert code == 0, err
    assert out.splitlines()[1] == ("1 leaver (revoked by a rule) still holds access: ana@acme.com on ws_u07 through "
                                   "domain acme.com.")


def test_internal_domain_adds_to_the_policys_allowed_domains(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    rig.edit("rules.yaml", "version: 1\n", "version: 1\npolicy: {allowedDomains: [acme.com]}\n")
    code, _, err = run_cli(["report", str(rig.root), *_cli_where(rig), "--out", str(rig.root / "out"),
                            "--internal-domain", "contoso.com"], capsys)
    assert code == 0, err
    made = json.loads((rig.root / "out" / "access.json").read_text(encoding="utf-8"))
    assert made["internal_domains"] == ["acme.com", "contoso.com"]


def test_an_account_name_where_an_id_is_wanted_lists_the_companys_account_ids(rig: Rig) -> None:
    rig.edit("rules.yaml", 'match: {names: ["Northwind*", "Tailspin*"]}', "match: {accounts: [Northwind]}")
    assert (f"{rig.root / 'rules.yaml'}:17: rule.no-personal-email: match.accounts: Northwind is not the account id "
            "of any workspace of the company; match takes ids, not names (account ids of the company's workspaces: "
            "acc_contoso, acc_northwind)") in rig.plan().warnings


def test_a_template_name_where_an_id_is_wanted_lists_the_companys_template_ids(rig: Rig) -> None:
    rig.edit("rules.yaml", 'match: {names: ["Northwind*", "Tailspin*"]}', "match: {templates: [Onboarding]}")
    assert (f"{rig.root / 'rules.yaml'}:17: rule.no-personal-email: match.templates: Onboarding is not the template "
            "id of any workspace of the company; match takes ids, not names (template ids of the company's "
            "workspaces: none)") in rig.plan().warnings


def test_entries_a_rule_put_on_a_workspace_in_no_manifest_go_when_the_rule_stops_matching_it(rig: Rig) -> None:
    rig.apply()
    # No rule matches ws_u06 any more: the baseline narrows, and so does the offboarding.
    rig.edit("rules.yaml", "    match: {all: true}\n    ensure:", '    match: {names: ["Northwind*"]}\n    ensure:')
    rig.edit("rules.yaml", "    match: {all: true}\n    revoke:", '    match: {names: ["Northwind*"]}\n    revoke:')
    plan = rig.plan()
    change = changes(plan)["unmanaged.ws_u06"]
    assert [(e.key, e.action.value, e.why) for e in change.entries] == [
        ("security@acme.com", "delete", "no longer ensured by rule security-baseline")]
    rig.apply(plan)
    assert rig.users("ws_u06") == {"cy@acme.com": "owner"}


def test_the_state_remembers_which_rule_put_a_domain_on_a_list(rig: Rig) -> None:
    rig.edit("rules.yaml", "      teams: [{team: security, role: viewer}]\n",
             "      teams: [{team: security, role: viewer}]\n      domains: [{domain: acme.com, role: viewer}]\n")
    rig.apply()
    record = load_state(rig.state_path).resources["unmanaged.ws_u06"].access
    assert record is not None and record.via == {"user:security@acme.com": "rule security-baseline",
                                                 "domain:acme.com": "rule security-baseline"}
    rig.edit("rules.yaml", "      domains: [{domain: acme.com, role: viewer}]\n", "")
    (removal,) = changes(rig.plan())["unmanaged.ws_u06"].removals
    assert (removal.key, removal.reason) == (
        "acme.com", "put there by rule security-baseline, which no longer ensures it here: loses viewer access")


def test_a_group_list_a_revoke_leaves_without_an_owner_is_refused_naming_each_of_its_workspaces(rig: Rig) -> None:
    rig.edit("customers.yaml", "    access:\n      users: [{email: jane@acme.com, role: owner}]\n      teams: "
             "[{team: customer-success, role: editor}]\n    workspaces:", "    access:\n      authoritative: false\n"
             "      teams: [{team: customer-success, role: editor}]\n    workspaces:")
    rig.edit("customers.yaml", "      users: [{email: jane@acme.com, role: owner}]\n      teams",
             "      users: [{email: ceo@acme.com, role: owner}]\n      teams")
    rig.edit("rules.yaml", "      users: [ana@acme.com]\n", "      users: [ana@acme.com, jane@acme.com]\n")
    with pytest.raises(PlanError) as caught:
        rig.plan()
    assert str(caught.value).splitlines()[1] == (
        f"  {rig.root / 'rules.yaml'}:14: rule offboarded revokes jane@acme.com, the only owner of 1 list: "
        'group.northwind (ws_nw_home "Northwind – Home", ws_nw_kickoff "Northwind – Kickoff"); name a successor '
        "under rule offboarded's revoke (successor: EMAIL becomes owner wherever jane@acme.com was the last one), or "
        "give these lists an owner in a manifest.")
