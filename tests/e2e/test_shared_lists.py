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
from reconciler.plan.render_text import render_text
from tests.e2e.conftest import EmulatorRig
from tests.review.conftest import company_maker, start_q4
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


def test_two_manifest_lists_writing_one_side_of_one_shared_list_are_refused_before_any_call(rig: Rig) -> None:
    """Planned apart, the second POST of one list would undo the first (the revocation that came back)."""
    path = rig.write("m.yaml", STANDALONE + """
  renewal-copy:
    id: ws_p
    access:
      users: [{email: jane@acme.com, role: owner}]
""")
    rig.emulator.requests.clear()
    with pytest.raises(PlanError) as err:
        rig.plan()
    assert str(err.value) == (
        "The plan cannot be made:\n"
        f"  {path}:11: workspace.renewal-copy and {path}:5: workspace.renewal both change the users of one access "
        "list in the service: workspaces ws_p and ws_s show the same entry ids (connected by hand in the web app; "
        "the service does not say so), so planned apart the second write would undo the first. Declare them as "
        "one group with one list (homepage: ws_s, workspaces: {KEY: {id: ws_p}}), or disconnect them in the web "
        "app.")
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
    data = yaml.safe_load((company.root / "emulator.yaml").read_text(encoding="utf-8"))
    lists = {ws["id"]: sorted(u["email"] for u in ws["users"])
             for ws in data["companies"]["acme"]["workspaces"] if ws["id"] in ("ws_a", "ws_p")}
    assert lists == {"ws_a": ["jane@acme.com", "sam@acme.com"], "ws_p": ["jane@acme.com", "sam@acme.com"]}
    code, out, err = company.run("plan", str(company.root), "--detailed-exitcode")
    assert code == 0, out + err


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
