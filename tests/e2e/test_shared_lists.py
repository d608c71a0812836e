"""One list, one truth (issue 38): a standalone workspace of the manifests whose
access list the service shares with a workspace no manifest names (the two
were connected by hand in the web app; the API never says so).

The partner is found by its shared entry ids, as a group's hand-connected
members are; the plan then makes ONE change of the shared list, with the
rules and reviews of both workspaces, and names the partner wherever it
names the workspace. Planned and applied by the real client against the
in-process emulator.
"""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import pytest
import yaml

from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.errors import ApplyError, PlanError, PlanRefused
from reconciler.manifest import load_desired
from reconciler.plan.model import AccessChange
from reconciler.plan.policy import check_policy
from reconciler.plan.safety import check_max_removals
from reconciler.plan.render_text import render_text
from tests.e2e.conftest import EmulatorRig
from tests.review.conftest import Company, company_maker, start_q4
from tests.review.conftest import workspaces as review_workspaces

SEED = """
companies:
  acme:
    token: dev-token-acme
    verified: true
    plan: paid
    credits: 100
    accounts:
      - {id: acc_1, name: Contoso, crmOneCompanyId: hs-1, crmTwoAccountId: null}
    templates:
      - {id: tpl_k, name: Kickoff, requiresDeal: false, sections: [], pages: [], tasks: []}
    workspaces:
      - id: ws_s
        name: Contoso – Renewal
        account: acc_1
        published: true
        group: by-hand
        users:
          - {email: jane@acme.com, role: owner}
          - {email: old@acme.com, role: editor}
      - id: ws_p
        name: Contoso – Renewal (copy)
        account: acc_1
        published: true
        group: by-hand
        users:
          - {email: jane@acme.com, role: owner}
          - {email: old@acme.com, role: editor}
      - id: ws_o
        name: Fabrikam – Kickoff
        account: acc_1
        published: true
        users:
          - {email: cy@acme.com, role: owner}
        domains:
          - {domain: gmail.com, role: viewer}
"""

STANDALONE = """
version: 1
workspaces:
  renewal:
    id: ws_s
    access:
      authoritative: false
      users: [{email: jane@acme.com, role: owner}, {email: new@acme.com, role: viewer}]
"""


class Rig(EmulatorRig):
    def users(self, workspace_id: str) -> dict[str, str]:
        return {e.key: e.role for e in self.company.workspace(workspace_id).access.users}

    def writes(self) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.emulator.requests if r.method != "GET"]

    def write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path


@pytest.fixture
def rig(tmp_path: Path, clock: VirtualClock) -> Rig:
    root = tmp_path / "m"
    root.mkdir()
    (tmp_path / "seed.yaml").write_text(SEED, encoding="utf-8")
    return Rig(Emulator.from_seed_file(tmp_path / "seed.yaml", clock=clock), clock, root)


def test_a_grant_on_a_standalone_list_names_the_workspace_it_shares_the_list_with(rig: Rig) -> None:
    """Repro 1: without rules the plan read only ws_s, and nothing said the grant reaches ws_p."""
    rig.write("m.yaml", STANDALONE)
    plan = rig.plan()
    assert {e.workspace for e in plan.effects} == {"ws_s", "ws_p"}
    (change,) = [c for c in plan.changes if isinstance(c, AccessChange)]
    assert [r.workspace_id for r in change.reach] == ["ws_s", "ws_p"]
    assert [r.probable for r in change.reach] == [False, True]
    text = render_text(plan)
    assert 'ws_p "Contoso – Renewal (copy)" (probably connected by hand:' in text, text
    rig.apply(plan)
    assert rig.users("ws_p") == {"jane@acme.com": "owner", "old@acme.com": "editor", "new@acme.com": "viewer"}


def test_a_rule_and_a_manifest_list_on_one_shared_list_make_one_write_and_keep_each_others_changes(rig: Rig) -> None:
    """Repro 3: the manifest revokes old@ (it listed it before), a rule ensures security@ everywhere. Two
    changes diffed the same fetched list, and the second POST put old@ back."""
    rig.write("m.yaml", STANDALONE.replace("{email: new@acme.com, role: viewer}", "{email: old@acme.com, role: editor}"))
    rig.apply()  # the list now records old@ as the manifest's
    rig.write("m.yaml", STANDALONE.replace(", {email: new@acme.com, role: viewer}", ""))
    rig.write("rules.yaml", """
        version: 1
        rules:
          baseline:
            match: {all: true}
            ensure: {users: [{email: security@acme.com, role: viewer}]}
    """)
    rig.emulator.requests.clear()
    plan = rig.plan()
    assert [c.address for c in plan.changes if isinstance(c, AccessChange)] == ["workspace.renewal",
                                                                                "unmanaged.ws_o"]
    rig.apply(plan)
    expected = {"jane@acme.com": "owner", "security@acme.com": "viewer"}
    assert (rig.users("ws_s"), rig.users("ws_p")) == (expected, expected)
    assert rig.writes().count(("POST", "/v1/workspaces/ws_s/access")) == 1
    assert ("POST", "/v1/workspaces/ws_p/access") not in rig.writes()
    assert rig.plan().changes == ()


def test_a_rule_whose_except_a_shared_list_defeats_is_refused_naming_both_workspaces(rig: Rig) -> None:
    """Repro 4: the rule excepts ws_p, but ws_p holds ws_s's list: the rule's entry would reach it."""
    rig.write("m.yaml", STANDALONE)
    rules = rig.write("rules.yaml", """
        version: 1
        rules:
          baseline:
            match: {all: true, except: [ws_p]}
            ensure: {users: [{email: security@acme.com, role: viewer}]}
    """)
    rig.emulator.requests.clear()
    with pytest.raises(PlanError) as err:
        rig.plan()
    assert rig.writes() == []
    message = str(err.value)
    assert f"{rules}:4: rule.baseline" in message and "except" in message, message
    assert "ws_p" in message and "ws_s" in message, message


COPY = """
  renewal-copy:
    id: ws_p
    access:
      authoritative: false
      users: [{email: jane@acme.com, role: owner}, {email: extra@acme.com, role: ROLE}]
"""


def test_two_manifest_lists_on_one_shared_list_are_written_by_one_call_with_both_entries(rig: Rig) -> None:
    """Item 2: planned apart, the second POST of the list would send it without the first's entry (the
    revocation that came back); refusing them (as this tool did) refused a company that agreed. One call
    writes what both want; each entry is shown once, under the list that wants it."""
    rig.write("m.yaml", STANDALONE + COPY.replace("ROLE", "viewer"))
    rig.emulator.requests.clear()
    plan = rig.plan()
    changes = [c for c in plan.changes if isinstance(c, AccessChange)]
    assert [(c.address, [e.key for e in c.entries], len(c.calls), c.carries, c.carried_by) for c in changes] == [
        ("workspace.renewal", ["new@acme.com"], 1, ("workspace.renewal-copy",), None),
        ("workspace.renewal-copy", ["extra@acme.com"], 0, (), "workspace.renewal")]
    # Both lists' changes make both workspaces' difference: each is behind the entries it keeps.
    assert {e.workspace: e.because for e in plan.effects} == dict.fromkeys(
        ("ws_p", "ws_s"), ("workspace.renewal", "workspace.renewal-copy"))
    text = render_text(plan, color=False)
    assert "no call of its own: the service holds this list and workspace.renewal's as one" in text, text
    rig.apply(plan)
    expected = {"jane@acme.com": "owner", "old@acme.com": "editor", "new@acme.com": "viewer",
                "extra@acme.com": "viewer"}
    assert (rig.users("ws_s"), rig.users("ws_p")) == (expected, expected)
    assert rig.writes() == [("POST", "/v1/workspaces/ws_s/access")]
    assert rig.plan().changes == ()


def test_two_manifest_lists_changing_one_entry_of_one_shared_list_differently_are_refused_naming_both(
        rig: Rig) -> None:
    """One call writes the list, so one of two roles for extra@ would silently lose: refused, each line named."""
    path = rig.write("m.yaml", STANDALONE.replace("new@acme.com", "extra@acme.com") + COPY.replace("ROLE", "editor"))
    rig.emulator.requests.clear()
    with pytest.raises(PlanError) as err:
        rig.plan()
    assert str(err.value) == (
        "The plan cannot be made:\n"
        f"  {path}:5: workspace.renewal would add user extra@acme.com as viewer ({path}:7) and {path}:11: "
        f"workspace.renewal-copy would add user extra@acme.com as editor ({path}:13), on one access list in the "
        'service: workspaces ws_p "Contoso – Renewal (copy)" and ws_s "Contoso – Renewal" hold it (they show the '
        "same entry ids: connected by hand in the web app; the service does not say so). One call writes the list, "
        "so only one of them can hold. Make the lists agree, declare the workspaces as one group with one list, or "
        "disconnect them in the web app.")
    assert rig.writes() == []


def test_an_authoritative_list_on_a_shared_list_that_another_adds_to_is_refused(rig: Rig) -> None:
    """The merged list must satisfy every list on it: an authoritative one that does not list what the other
    adds would take it away at the next plan."""
    path = rig.write("m.yaml", STANDALONE + """
  renewal-copy:
    id: ws_p
    access:
      users: [{email: jane@acme.com, role: owner}]
""")
    rig.emulator.requests.clear()
    with pytest.raises(PlanError) as err:
        rig.plan()
    assert (f"  {path}:5: workspace.renewal and {path}:11: workspace.renewal-copy want different entries on one "
            "access list in the service") in str(err.value), err.value
    assert "workspace.renewal-copy would remove user new@acme.com there" in str(err.value), err.value
    assert rig.writes() == []


def test_a_creation_into_a_group_whose_list_holds_an_outsider_is_judged_by_the_policy(rig: Rig) -> None:
    """Repro 5: the new workspace's access is the group's whole list: a grant like any other, so the
    policy judges it (it used to be created with gmail.com on it, no review, no refusal)."""
    path = rig.write("m.yaml", """
        version: 1
        policy: {allowedDomains: [acme.com]}
        groups:
          fabrikam:
            homepage: ws_o
            workspaces:
              kickoff: {template: tpl_k, name: Fabrikam – Kickoff 2}
    """)
    rig.emulator.requests.clear()
    plan = rig.plan()
    with pytest.raises(PlanRefused) as refused:
        check_policy(plan, load_desired(rig.root).policy, {})  # as plan and apply do before any write
    assert str(refused.value) == (
        "The plan is refused by the manifests' policy; nothing was changed:\n"
        f"  {path}:2: policy allowedDomains: group.fabrikam.workspace.kickoff would give domain gmail.com viewer on "
        f'workspace new "Fabrikam – Kickoff 2" ({path}:7): group.fabrikam\'s list gives the new workspace viewer.')
    assert rig.writes() == []


def test_a_reviewed_revocation_on_a_shared_list_is_not_undone_by_a_rule_on_the_partner(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Repro 3 as reported: a campaign's revoke on a standalone list, and a rule change on the same
    shared list through the hand-connected partner. The second POST used to put bob back, exit 0."""
    spaces = review_workspaces()
    spaces[0]["group"] = "by-hand"
    spaces.append({**spaces[0], "id": "ws_p", "name": "Alpha (copy)"})
    company = company_maker(tmp_path, capsys, monkeypatch)(spaces)
    start_q4(company)
    item = _item_of(company.file("jane@acme.com.yaml"), "bob@ext.com")
    company.decide("jane@acme.com", {item: ("revoke", "contractor left")})
    (company.root / "rules.yaml").write_text(textwrap.dedent("""
        version: 1
        rules:
          baseline:
            match: {all: true, except: [ws_b]}  # ws_b has no owner: a person's, not a rule's
            ensure: {users: [{email: sam@acme.com, role: viewer}]}
    """).lstrip(), encoding="utf-8")
    code, out, err = company.run("apply", str(company.root), "--auto-approve")
    assert code == 0, out + err
    assert _users_of(company, "ws_a", "ws_p") == dict.fromkeys(("ws_a", "ws_p"), ["jane@acme.com", "sam@acme.com"])
    code, out, err = company.run("plan", str(company.root), "--detailed-exitcode")
    assert code == 0, out + err


def _users_of(company: Company, *workspace_ids: str) -> dict[str, list[str]]:
    """The users of each workspace, as the emulator's data file holds them after the command."""
    data = yaml.safe_load((company.root / "emulator.yaml").read_text(encoding="utf-8"))
    return {ws["id"]: sorted(u["email"] for u in ws["users"])
            for ws in data["companies"]["acme"]["workspaces"] if ws["id"] in workspace_ids}


def _item_of(path: Path, key: str) -> int:
    """The index of ``key``'s item in a reviewer's file."""
    items = yaml.safe_load(path.read_text(encoding="utf-8"))["items"]
    return next(i for i, item in enumerate(items) if item["key"] == key)


def test_a_list_changed_behind_the_applys_back_on_a_workspace_no_manifest_names_fails_the_proof(rig: Rig) -> None:
    """Item 4: the proof reads the whole company again and compares every list with the plan's prediction;
    ws_o, in no manifest and predicted unchanged, is changed by someone while the apply writes."""
    rig.write("m.yaml", STANDALONE)
    plan = rig.plan()
    assert "ws_o" not in {e.workspace for e in plan.effects}
    rig.emulator.faults.inject("POST", r"/workspaces/ws_s/access$", "tamper", workspace="ws_o",
                               email="intruder@acme.com", role="editor")
    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    assert ("  ws_o: the plan predicted no change here; predicted intruder@acme.com editor absent, service shows "
            "it\n") in str(stopped.value), stopped.value


def _alpha_and_its_copy_in_the_manifests(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> Company:
    """The review tests' company with ws_p connected by hand to ws_a, each a standalone workspace of the
    manifests with a non-authoritative list (the copy's adds sam), and campaign q4 started."""
    from tests.review.conftest import MANIFEST

    spaces = review_workspaces()
    spaces[0]["group"] = "by-hand"
    spaces.append({**spaces[0], "id": "ws_p", "name": "Alpha (copy)"})
    return start_q4(company_maker(tmp_path, capsys, monkeypatch)(spaces, MANIFEST + """  alpha-copy:
    id: ws_p
    access:
      authoritative: false
      users:
        - {email: jane@acme.com, role: owner}
        - {email: sam@acme.com, role: viewer}
"""))


def test_a_reviewed_revocation_on_a_list_two_manifest_lists_share_is_one_write_and_its_evidence_says_applied(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Repro 3 with the partner named by a manifest: the review revokes bob on alpha, the partner's own list
    adds sam. Both write the users of one list; they used to be refused (or, planned apart, the second POST
    put bob back). Now one POST carries both, and the revocation is recorded under the list it was decided on,
    so the evidence shows it applied."""
    company = _alpha_and_its_copy_in_the_manifests(tmp_path, capsys, monkeypatch)
    company.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", "contractor left")})
    code, out, err = company.run("apply", str(company.root), "--auto-approve")
    assert code == 0, out + err
    assert _users_of(company, "ws_a", "ws_p") == dict.fromkeys(("ws_a", "ws_p"), ["jane@acme.com", "sam@acme.com"])
    state = yaml.safe_load((company.root / "reconciler.state.json").read_text(encoding="utf-8"))
    assert list(state["resources"]["workspace.alpha"]["access"]["revoked"]) == ["user:bob@ext.com"]
    code, out, err = company.run("review", "report", "q4", str(company.root), "--out", str(tmp_path / "out"),
                                 service=False)
    assert code == 0, err
    assert "1 revoked and applied" in out, out
    code, out, err = company.run("plan", str(company.root), "--detailed-exitcode")
    assert code == 0, out + err


def test_max_removals_counts_a_removal_on_every_workspace_holding_the_list(rig: Rig) -> None:
    """Item 3: one entry of ws_s's list removed is removed from ws_p too, which no manifest names: two
    people-workspace losses, as the effects say, where the change's entries count one."""
    rig.write("m.yaml", STANDALONE.replace("authoritative: false", "authoritative: true")
              .replace(", {email: new@acme.com, role: viewer}", ""))
    plan = rig.plan()
    assert [len(c.removals) for c in plan.access_changes] == [1]
    check_max_removals(plan, 2)
    with pytest.raises(PlanRefused) as refused:
        check_max_removals(plan, 1)
    assert ('The plan removes 2 access entries, each a person or domain losing all access to one workspace (ws_p '
            '"Contoso – Renewal (copy)": user old@acme.com (workspace.renewal), ws_s "Contoso – Renewal": user '
            "old@acme.com (workspace.renewal)), more than --max-removals 1 allows.") in str(refused.value)


def test_an_overdue_revocation_on_a_shared_list_merges_with_the_partners_change_and_both_items_are_applied(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39 item 3: nobody decided bob, on ws_a nor on ws_p (one list), by the due date, and onDue is
    revoke: each item is a revocation whose source is the campaign's onDue, merged with the copy's addition of
    sam into one POST; the evidence shows both items carried out. It used to be refused (two writes of one
    list's users)."""
    company = _alpha_and_its_copy_in_the_manifests(tmp_path, capsys, monkeypatch)
    for reviewer in ("jane@acme.com", "joe@acme.com", "sec@acme.com"):
        others = {e: ("keep", None) for e in company.entries(reviewer) if e[1] != "bob@ext.com"}
        if others:
            company.decide_on(reviewer, others)
    campaign = company.file("campaign.yaml")
    campaign.write_text(campaign.read_text(encoding="utf-8").replace("due: 2027-02-01", "due: 2020-01-01")
                        .replace("onDue: flag", "onDue: revoke"), encoding="utf-8")
    code, out, err = company.run("plan", str(company.root), "--format", "json")
    assert code == 0, err
    changes = [c for c in json.loads(out)["changes"] if c["kind"] == "access"]
    assert [(c["address"], [(e["key"], e["source"]["kind"], e["source"]["due"]) for e in c["entries"]],
             len(c["calls"])) for c in changes] == [
        ("workspace.alpha", [("bob@ext.com", "review", "2020-01-01")], 1),
        ("workspace.alpha-copy", [("bob@ext.com", "review", "2020-01-01"), ("sam@acme.com", "entry", None)], 0)]
    code, out, err = company.run("apply", str(company.root), "--auto-approve")
    assert code == 0, out + err
    assert _users_of(company, "ws_a", "ws_p") == dict.fromkeys(("ws_a", "ws_p"), ["jane@acme.com", "sam@acme.com"])
    code, out, err = company.run("review", "report", "q4", str(company.root), "--out", str(tmp_path / "out"),
                                 service=False)
    assert code == 0, err
    with (tmp_path / "out" / "evidence.csv").open(encoding="utf-8", newline="") as f:
        bob = sorted((r["workspace_id"], r["overdue"], r["applied"]) for r in csv.DictReader(f)
                     if r["email_or_domain"] == "bob@ext.com")
    assert bob == [("ws_a", "yes", "applied"), ("ws_p", "yes", "applied")]


def test_a_reviewed_revocation_on_a_groups_member_is_recorded_on_the_group_and_its_evidence_says_applied(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The revocation is decided on the member ws_p and recorded under the group's address (the list is the
    homepage's): the evidence finds it there for the member, as for the homepage."""
    spaces = review_workspaces()
    spaces[0]["group"] = "portal"
    spaces.append({**spaces[0], "id": "ws_p", "name": "Alpha (member)"})
    company = start_q4(company_maker(tmp_path, capsys, monkeypatch)(spaces, """version: 1
policy:
  allowedDomains: [acme.com]
groups:
  portal:
    homepage: ws_a
    access:
      authoritative: false
      users:
        - {email: jane@acme.com, role: owner}
    workspaces:
      member: {id: ws_p}
"""))
    reviewer = next(r for r in ("jane@acme.com", "sec@acme.com")
                    if ("ws_p", "bob@ext.com") in company.entries(r))
    company.decide_on(reviewer, {("ws_p", "bob@ext.com"): ("revoke", "contractor left")})
    code, out, err = company.run("apply", str(company.root), "--auto-approve")
    assert code == 0, out + err
    assert _users_of(company, "ws_a", "ws_p") == dict.fromkeys(("ws_a", "ws_p"), ["jane@acme.com"])
    state = yaml.safe_load((company.root / "reconciler.state.json").read_text(encoding="utf-8"))
    assert list(state["resources"]["group.portal"]["access"]["revoked"]) == ["user:bob@ext.com"]
    code, out, err = company.run("review", "report", "q4", str(company.root), "--out", str(tmp_path / "out"),
                                 service=False)
    assert code == 0, err
    with (tmp_path / "out" / "evidence.csv").open(encoding="utf-8", newline="") as f:
        bob = [(r["workspace_id"], r["decision"], r["applied"]) for r in csv.DictReader(f)
               if r["email_or_domain"] == "bob@ext.com" and r["decision"]]
    assert bob == [("ws_p", "revoke", "applied")]
