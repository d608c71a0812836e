"""One list, one truth, widened (issue 38, item 7): generated companies whose
lists are shared by hand, with rules and an access review over them, planned
as the CLI plans (its listing, its safety checks) and applied by the real
client against the emulator.

For every company, either the plan is refused before any call, with a
message naming its sources (``file:line``), and nothing is written; or it is
applied, and then: every workspace of the company holds the list the plan
predicted (its ``after`` in ``effects``, or the list it had); the workspaces
whose list changed are exactly those of ``effects``, and the text, markdown,
``--by-person`` and JSON views each name every one of them; no entry of one
list is written by two calls (one POST per side of a list, a PATCH of an
entry only where no POST sends it), as the emulator holds the lists when the
call arrives, not as the planner believes; planned again with the state the
apply wrote, the plan changes no list (the apply converged; no revocation
comes back).

Refusing is a valid outcome, but a property that holds because everything is
refused proves nothing: the test fails when fewer than a third of the
companies are applied, and prints the counts.  The companies are
``tests/e2e/shared_list_companies.py``'s; ``RECONCILER_PROPERTY_EXAMPLES``
sets how many (300 in the suite, as the effects property test).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from reconciler.apply.run import apply_plan
from reconciler.clock import VirtualClock
from reconciler.commands.plan import check_safety, plan_with_client, render
from reconciler.company.read import read_company
from reconciler.emulator import Emulator
from reconciler.errors import ApplyError, ManifestError, PlanError
from reconciler.manifest import load_desired
from reconciler.review.start import StartOptions, start_campaign
from reconciler.state import State, load_state
from tests.e2e.conftest import EmulatorRig
from tests.e2e.effects_checks import (
    company_lists, every_list_is_the_predicted_one, every_view_names_every_workspace_of_the_effects, quiet_views,
)
from tests.e2e.list_writes import ListWriteRecorder, recorded_client
from tests.e2e.shared_list_companies import Case, cases

EXAMPLES = int(os.environ.get("RECONCILER_PROPERTY_EXAMPLES", "300"))
STARTED, DUE = date(2027, 1, 15), date(2027, 2, 1)
# What a refusal must name, by what it refuses: the words that say which refusal, then the files its
# file:line sources must include (each at least once, the manifest as often as listed).
REFUSALS = (
    # two lists of the manifests changing one entry of one list of the service differently: both lists' lines
    ("only one of them can hold", ("manifest.yaml", "manifest.yaml")),
    # two lists of the manifests on one list of the service that the list the plan leaves does not satisfy
    ("want different entries on one access list", ("manifest.yaml", "manifest.yaml")),
    ("disagree about one shared access list", ("manifest.yaml", "manifest.yaml")),  # both rules' lines
    ("cannot hold: ", ("manifest.yaml",)),  # a rule's except that a shared list defeats: the except's line
    # a reviewer's revoke of what a line or a rule grants: the decision's line and the grant's
    ("a review revokes what the manifests grant", ("reviews/q4/", "manifest.yaml")),
    ("without an owner", ("manifest.yaml",)),  # a list left with no owner: the list or rule that leaves it so
    ("a person is either granted or revoked", ("manifest.yaml", "manifest.yaml")),  # validation: rule and line
    # a reviewer's revoke on a workspace the plan connects onto the group's list: the decision's line and the
    # connected member's
    ("which the review did not see", ("reviews/q4/", "manifest.yaml")),
)


def test_shared_lists_end_as_planned_or_the_plan_is_refused_naming_its_sources(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    outcomes: Counter[str] = Counter()
    carried: Counter[str] = Counter()  # in the applied plans: what the reviews and rules did, and where

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(case=cases())
    def each(case: Case) -> None:
        outcomes[_plan_and_apply(case, tmp_path_factory.mktemp("shared"), carried)] += 1

    each()
    total = sum(outcomes.values())
    applied = sum(n for outcome, n in outcomes.items() if outcome.startswith("applied"))
    print(f"\n{total} companies: {applied} applied, {total - applied} refused ({dict(outcomes)}); applied plans "
          f"with entries of {dict(carried)}")
    assert applied * 3 >= total, f"fewer than a third applied, the property is near vacuous: {dict(outcomes)}"


def _plan_and_apply(case: Case, root: Path, carried: Counter[str]) -> str:
    """``applied``, or ``refused: <which>``; ``carried`` counts the applied plans with entries of a review or a
    rule, on a list of one workspace or a shared one."""
    (root / "manifest.yaml").write_text(yaml.safe_dump(case.manifest, sort_keys=False), encoding="utf-8")
    clock = VirtualClock()
    emulator = Emulator.from_seed(case.seed, clock=clock)
    recorder = ListWriteRecorder(emulator)
    client = recorded_client(emulator, clock, recorder)
    before = company_lists(client)
    today = date(2027, 3, 1) if case.overdue else STARTED
    try:
        if case.campaign:
            _start_review(root, client, case.decisions, on_due="revoke" if case.overdue else "flag")
        desired = load_desired(root)
        plan = plan_with_client(client, desired, State(), today=today)
        check_safety(plan, desired, max_removals=None, allow={})
    except (ManifestError, PlanError) as refused:
        writes = [f"{r.method} {r.path}" for r in emulator.requests if r.method != "GET"]
        assert writes == [], f"refused, yet written: {writes}"
        return f"refused: {_refusal_names_its_sources(str(refused), root)}"
    every_view_names_every_workspace_of_the_effects(plan)
    try:
        apply_plan(plan, client=client, state=State(), state_path=root / "state.json")  # proves it too
    except ApplyError:
        if not plan.needs_person:  # what waits for a person is said last, after everything else was made
            raise
    carried.update({f"{kind} on a list {'shared' if len(c.reaches) > 1 else 'of one workspace'}"
                    for c in plan.access_changes for kind in {e.source.kind for e in c.entries if e.source}
                    if kind in ("review", "rule")})
    twice = recorder.twice()
    assert not twice, "one list, one write; written twice: " + "; ".join(twice)
    every_list_is_the_predicted_one(plan, before, company_lists(client))
    _planned_again(root, client, today)
    return "applied, but for what waits for a person" if plan.needs_person else "applied"


def _planned_again(root: Path, client: Any, today: date) -> None:
    """Planned again with the state the apply wrote, the plan changes no list: the apply converged (and is
    not refused: rules a workspace the plan created makes disagree were refused before the creation)."""
    again = plan_with_client(client, load_desired(root), load_state(root / "state.json"), today=today)
    assert again.access_changes == (), "applied, yet not converged:\n" + render(again, fmt="text", color=False)


def _start_review(root: Path, client: Any, decisions: tuple[tuple[str, str, str], ...], *, on_due: str) -> None:
    """``review start q4`` over the whole company (ownerless workspaces to sec@acme.com), then each decision
    written into every reviewer's file holding the entry, as a reviewer would."""
    desired = load_desired(root)
    options = StartOptions(name="q4", due=DUE, today=STARTED, fallback="sec@acme.com", on_due=on_due)
    started = start_campaign(desired, read_company(client, desired, State()), options)
    folder = root / "reviews" / "q4"
    folder.mkdir(parents=True)
    wanted = {(wid, key): decision for wid, key, decision in decisions}
    for name, text in started.files.items():
        (folder / name).write_text(text if name == "campaign.yaml" else _decided(text, wanted), encoding="utf-8")


def _decided(text: str, wanted: dict[tuple[str, str], str]) -> str:
    """A reviewer's file with the decision of each item ``wanted`` names set (a reason too)."""
    lines = text.split("\n")
    entry: tuple[str, str] = ("", "")
    for number, line in enumerate(lines):
        if line.startswith("  - workspace: "):
            entry = (yaml.safe_load(line.partition(": ")[2]), entry[1])
        elif line.startswith("    key: "):
            entry = (entry[0], yaml.safe_load(line.partition(": ")[2]))
        elif line.startswith("    decision: ") and entry in wanted:
            lines[number] = f"    decision: {wanted[entry]}"
        elif line.startswith("    reason: ") and entry in wanted:
            lines[number] = "    reason: generated"
    return "\n".join(lines)


def _refusal_names_its_sources(message: str, root: Path) -> str:
    """Which refusal ``message`` is, having checked it names as many ``file:line`` of the manifests or the
    review as that refusal has sources."""
    sources = set(re.findall(re.escape(str(root)) + r"/[^\s:]+:\d+", message))
    for words, files in REFUSALS:
        if words in message:
            for file in set(files):
                named = [s for s in sources if file in s]
                assert len(named) >= files.count(file), f"the refusal names {sorted(sources)}, not its " \
                                                         f"sources (in {file}):\n{message}"
            return words.rstrip(": ")
    raise AssertionError(f"a refusal this test does not know (a valid outcome? say what it names):\n{message}")


# What the property found (issue 38), shrunk: two standalone workspaces of the manifests connected by hand in the
# web app hold one list; one manifest's list writes it, the other's changes nothing. The effects name both
# workspaces and the apply changes both as predicted; every view names both too (once, only the one written).
TWINS_SEED = {"companies": {"acme": {"token": "dev-token-acme", "verified": True, "plan": "paid", "credits": 10,
                                     "workspaces": [
    {"id": "ws_s", "name": "Renewal", "published": True, "group": "by-hand",
     "users": [{"email": "jane@acme.com", "role": "owner"}], "domains": [{"domain": "customer.com", "role": "editor"}]},
    {"id": "ws_t", "name": "Renewal (copy)", "published": True, "group": "by-hand",
     "users": [{"email": "jane@acme.com", "role": "owner"}], "domains": [{"domain": "customer.com", "role": "editor"}]},
]}}}
TWINS = """version: 1
workspaces:
  renewal:
    id: ws_s
    access:
      users: [{email: jane@acme.com, role: owner}]
  copy:
    id: ws_t
    access:
      authoritative: false
      users: [{email: jane@acme.com, role: owner}]
"""


@pytest.fixture
def twins(tmp_path: Path, clock: VirtualClock) -> EmulatorRig:
    (tmp_path / "m.yaml").write_text(TWINS, encoding="utf-8")
    return EmulatorRig(Emulator.from_seed(TWINS_SEED, clock=clock), clock, tmp_path)


def test_every_view_names_the_manifests_workspace_that_holds_the_written_list_by_hand(twins: EmulatorRig) -> None:
    plan = twins.plan()
    assert sorted(e.workspace or "" for e in plan.effects) == ["ws_s", "ws_t"]  # holds today
    twins.apply(plan)
    assert [d.domain for d in twins.company.workspace("ws_t").access.domains] == []  # holds today: as predicted
    assert [view for view, text in quiet_views(plan).items() if "ws_t" not in text] == []


def test_the_plan_does_not_say_an_entry_the_write_removes_is_left_alone(twins: EmulatorRig) -> None:
    text = render(twins.plan(), fmt="text", color=False)
    assert "customer.com editor on workspace.copy: not listed" not in text, text


def test_a_manifests_workspace_without_a_list_that_holds_the_written_list_by_hand_is_named_and_its_rules_merge(
        twins: EmulatorRig) -> None:
    """copy has no list of its own: the list it holds by hand is renewal's, so every view names it, and a rule
    matching it acts through renewal's one change (planned apart, as a workspace in no manifest, its POST of
    the users was undone by the next plan of renewal's authoritative list)."""
    (twins.root / "m.yaml").write_text(TWINS.split("  copy:")[0] + """  copy:
    id: ws_t
rules:
  audit:
    match: {names: [Renewal (copy)]}
    ensure: {users: [{email: aud@acme.com, role: viewer}]}
""", encoding="utf-8")
    plan = twins.plan()
    assert [c.address for c in plan.access_changes] == ["workspace.renewal"]
    assert [view for view, text in quiet_views(plan).items() if "ws_t" not in text] == []
    twins.apply(plan)
    assert {u.key for u in twins.company.workspace("ws_t").access.users} == {"jane@acme.com", "aud@acme.com"}
    assert twins.plan().access_changes == ()


def test_two_manifest_lists_disagreeing_about_one_entry_of_one_shared_list_are_refused(twins: EmulatorRig) -> None:
    """copy's authoritative list (jane alone) and renewal's (jane, bo owner) disagree about bo on the one
    list ws_s and ws_t hold. Planned from the fetched list, copy changes nothing: renewal's POST would add bo
    and the apply converge nowhere (the next plan removing bo through copy, the one after adding it back), so
    copy is planned again against the list the plan leaves, and the two are refused before any call."""
    path = twins.root / "m.yaml"
    path.write_text("""version: 1
workspaces:
  renewal:
    id: ws_s
    access:
      authoritative: false
      users: [{email: jane@acme.com, role: owner}, {email: bo@acme.com, role: owner}]
  copy:
    id: ws_t
    access:
      users: [{email: jane@acme.com, role: owner}]
""", encoding="utf-8")
    with pytest.raises(PlanError) as refused:
        twins.plan()
    assert [r for r in twins.emulator.requests if r.method != "GET"] == []
    assert f"{path}:5: workspace.renewal" in str(refused.value), refused.value
    assert f"{path}:10: workspace.copy" in str(refused.value), refused.value
    assert 'ws_s "Renewal" and ws_t "Renewal (copy)" hold it' in str(refused.value), refused.value


# A group whose homepage ws_h is the only workspace, and the plan creates one more into it from a template.
KICKOFF_SEED = {"companies": {"acme": {"token": "dev-token-acme", "verified": True, "plan": "paid", "credits": 10,
                                      "templates": [{"id": "tpl_k", "name": "Kickoff", "requiresDeal": False}],
                                      "workspaces": [{"id": "ws_h", "name": "Home", "published": True, "group": "g",
                                                      "users": [{"email": "jane@acme.com", "role": "owner"}]}]}}}
KICKOFF = """version: 1
groups:
  kickoff:
    homepage: ws_h
    workspaces:
      new: {template: tpl_k, name: Kickoff 2}
rules:
"""
CREATION_RULES = {
    "except": """  baseline:
    match: {all: true, except: [ws_h]}
    ensure: {users: [{email: auditor@acme.com, role: editor}]}
""",
    "two roles": """  baseline:
    match: {all: true}
    ensure: {users: [{email: auditor@acme.com, role: editor}]}
  homepages:
    match: {names: [Home]}
    ensure: {users: [{email: auditor@acme.com, role: collaborator}]}
""",
}


@pytest.mark.parametrize("rules", sorted(CREATION_RULES))
def test_rules_a_creation_into_the_group_makes_disagree_are_refused_before_the_creation(
        rules: str, tmp_path: Path, clock: VirtualClock) -> None:
    """The plan creates a workspace into ws_h's group, so it will hold ws_h's list; the rules treat the two
    apart (one excepts ws_h, or one gives ws_h another role). The workspace the plan creates counts as a
    member of the list already (matched by the name, template and account it will have), so the first plan
    is refused as the one after the creation would be (``except ws_h cannot hold``, ``disagree about one
    shared access list``), naming the rule's line and the created workspace's, and nothing is written."""
    (tmp_path / "m.yaml").write_text(KICKOFF + CREATION_RULES[rules], encoding="utf-8")
    rig = EmulatorRig(Emulator.from_seed(KICKOFF_SEED, clock=clock), clock, tmp_path)
    with pytest.raises(PlanError) as refused:
        rig.plan()
    message = str(refused.value)
    path = tmp_path / "m.yaml"
    assert ("except ws_h cannot hold" if rules == "except" else "disagree about one shared access list") in message
    assert f"{path}:" in message and "rule.baseline" in message, message
    assert f"group.kickoff.workspace.new ({path}:6)" in message, message  # the created workspace, its line
    assert [r for r in rig.emulator.requests if r.method != "GET"] == []


def test_a_rule_matching_only_a_workspace_the_plan_creates_into_a_group_acts_in_the_first_plan(
        tmp_path: Path, clock: VirtualClock) -> None:
    """A rule whose match only the workspace the plan creates meets (its template) matches it before it
    exists: the first plan puts the rule's entry on the group's list, which the new workspace holds, warns
    neither that the rule matches nothing nor that its template is no workspace's, and the next plan changes
    nothing (it used to add the entry only once the workspace existed)."""
    (tmp_path / "m.yaml").write_text(KICKOFF + """  kickoffs:
    match: {templates: [tpl_k]}
    ensure: {users: [{email: auditor@acme.com, role: editor}]}
""", encoding="utf-8")
    rig = EmulatorRig(Emulator.from_seed(KICKOFF_SEED, clock=clock), clock, tmp_path)
    plan = rig.plan()
    assert [w for w in plan.warnings if "rule.kickoffs" in w] == []
    assert {e.workspace or e.name: e.after.snapshot().users for e in plan.effects} == {
        "ws_h": {"jane@acme.com": "owner", "auditor@acme.com": "editor"},
        "Kickoff 2": {"jane@acme.com": "owner", "auditor@acme.com": "editor"}}
    rig.apply(plan)
    assert rig.plan().access_changes == ()


def test_a_reviews_revoke_on_a_workspace_the_plan_connects_into_a_group_is_refused(tmp_path: Path) -> None:
    """Found by the property above (shrunk): ws_loose1's review revokes di@partner.io and customer.com, and the
    plan connects ws_loose0 and ws_loose1 into group0, whose homepage's list holds both. Carried out on
    ws_loose1's own list, the revokes were undone by the join, and the next plan carried customer.com's out on
    the group's list, reaching ws_home0 and ws_loose0 too: it never settled. The first plan is refused, naming
    the decision's line and the member's, and nothing is written."""
    def workspace(wid: str, users: dict[str, str], domains: dict[str, str] | None = None,
                  group: str | None = None) -> dict[str, Any]:
        found = {"id": wid, "name": wid, "account": "acc_1", "published": True,
                 "users": [{"email": e, "role": r} for e, r in users.items()],
                 "domains": [{"domain": d, "role": r} for d, r in (domains or {}).items()]}
        return {**found, "group": group} if group else found

    seed = {"companies": {"acme": {
        "token": "dev-token-acme", "verified": True, "plan": "paid", "credits": 100,
        "accounts": [{"id": "acc_1", "name": "Customer Inc"}],
        "templates": [{"id": "tpl_1", "name": "Kickoff", "requiresDeal": False}],
        "workspaces": [
            workspace("ws_loose0", {"ana@acme.com": "owner", "bo@acme.com": "owner", "cy@customer.com": "owner"}),
            workspace("ws_loose1", {"ana@acme.com": "owner", "bo@acme.com": "owner", "di@partner.io": "editor"},
                      {"customer.com": "editor"}),
            workspace("ws_solo0", {"ana@acme.com": "owner"}),
            workspace("ws_home0", {"di@partner.io": "owner"}, {"customer.com": "editor"}, group="g0")]}}}
    manifest = {"version": 1,
                "groups": {"group0": {"homepage": "ws_home0", "workspaces": {"loose0": {"id": "ws_loose0"},
                                                                             "loose1": {"id": "ws_loose1"}}}},
                "workspaces": {"solo0": {"id": "ws_solo0", "access": {
                    "users": [{"email": "ana@acme.com", "role": "owner"}], "authoritative": False}}}}
    case = Case(seed=seed, manifest=manifest, campaign=True, overdue=False,
                decisions=(("ws_loose1", "di@partner.io", "revoke"), ("ws_loose1", "customer.com", "revoke")))
    assert _plan_and_apply(case, tmp_path, Counter()) == "refused: which the review did not see"
