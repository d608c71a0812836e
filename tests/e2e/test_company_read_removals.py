"""What ``who``, ``audit`` and the access report say the next apply removes is what the plan of the same read
removes, entry for entry: the company read decides it with the plan's own rules (``expand_access``'s
revocations, ``target_roles``' authoritative and recorded entries), and this holds them together on every
example, a directory leaver's included."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reconciler.clock import VirtualClock
from reconciler.company.build import company_access
from reconciler.company.read import read_live
from reconciler.emulator import Emulator
from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.plan.differences import removals
from reconciler.state import load_state
from tests.e2e.conftest import ROOT, EmulatorRig
from tests.e2e.test_directory_leavers import DIRECTORY

REMOVED_BY_THE_NEXT_APPLY = ("revoked", "leaving")


def _rig(tmp_path: Path, example: str) -> EmulatorRig:
    root = tmp_path / example
    shutil.copytree(ROOT / "examples" / example, root)
    clock = VirtualClock()
    return EmulatorRig(Emulator.from_seed_file(root / "seed.yaml", clock=clock), clock, root)


def _predicted_and_removed(rig: EmulatorRig) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    desired, state = load_desired(rig.root), load_state(rig.state_path)
    live = read_live(rig.client())
    company = company_access(desired, live, state)
    plan = make_plan(desired, live, state)
    predicted = {(r.workspace_id, r.kind, r.key) for r in company.rows if r.why.source in REMOVED_BY_THE_NEXT_APPLY}
    removed = {(d.workspace_id, d.kind, d.key) for d in removals(plan) if d.workspace_id is not None}
    return predicted, removed


@pytest.mark.parametrize("example", ["onboarding", "company", "quickstart"])
def test_the_entries_the_company_read_says_the_next_apply_removes_are_those_the_plan_removes(
        tmp_path: Path, example: str) -> None:
    predicted, removed = _predicted_and_removed(_rig(tmp_path, example))
    assert predicted == removed


def test_a_directory_leavers_entries_are_those_the_plan_removes_and_none_are_once_it_ran(tmp_path: Path) -> None:
    rig = _rig(tmp_path, "company")
    (rig.root / "directory.yaml").write_text(DIRECTORY, encoding="utf-8")
    predicted, removed = _predicted_and_removed(rig)
    assert predicted == removed
    assert {key for _, _, key in predicted} >= {"ana@acme.com", "cy@acme.com"}

    rig.apply()

    assert _predicted_and_removed(rig) == (set(), set())


def test_a_team_a_list_that_is_not_authoritative_stops_naming_is_removed_and_the_customers_own_people_are_not(
        tmp_path: Path) -> None:
    rig = _rig(tmp_path, "company")
    rig.apply()
    customers = rig.root / "customers.yaml"
    text = customers.read_text(encoding="utf-8")
    contoso = text.index("contoso-renewal:")
    team_line = "      teams: [{team: customer-success, role: editor}]\n"
    customers.write_text(text[:contoso] + text[contoso:].replace(team_line, "", 1), encoding="utf-8")

    predicted, removed = _predicted_and_removed(rig)

    assert predicted == removed
    on_contoso = {key for workspace, _, key in predicted if workspace == "ws_contoso"}
    assert on_contoso and "buyer@contoso.com" not in on_contoso
