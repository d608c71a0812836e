"""What ``who``, ``audit`` and the access report say the next apply removes is what the plan of the same read
removes, entry for entry: the company read decides it with the plan's own rules (``expand_access``'s
revocations, ``target_roles``' authoritative and recorded entries), and this holds them together on every
example, a directory leaver's included."""

from __future__ import annotations

import json
import shutil
from datetime import date
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
from reconciler.commands.plan import directory_for
from reconciler.service import Service, open_client
from tests.e2e.conftest import ROOT, EmulatorRig, run_cli
from tests.e2e.test_directory_leavers import DIRECTORY
from tests.e2e.test_directory_saved_plan import Example

REMOVED_BY_THE_NEXT_APPLY = ("revoked", "leaving", "expired")


def _rig(tmp_path: Path, example: str) -> EmulatorRig:
    root = tmp_path / example
    shutil.copytree(ROOT / "examples" / example, root)
    clock = VirtualClock()
    return EmulatorRig(Emulator.from_seed_file(root / "seed.yaml", clock=clock), clock, root)


def _predicted_and_removed(rig: EmulatorRig, today: date | None = None
                           ) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    desired, state = load_desired(rig.root), load_state(rig.state_path)
    live = read_live(rig.client())
    company = company_access(desired, live, state, today)
    plan = make_plan(desired, live, state, today=today)
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


def test_with_the_live_directory_who_says_what_plan_directory_live_removes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The identity provider switched Bo off and took Cy out of Customer Success: ``who --directory live``
    says, on each of their workspaces, that the next ``apply --directory live`` removes it, and the plan
    made with the same directory removes exactly those entries."""
    example = Example(tmp_path)
    example.identity_provider(inactive=())
    assert run_cli(["apply", str(example.manifests), *example.connect, "--auto-approve"], capsys)[0] == 0
    example.identity_provider(inactive=("bo",), left={"cy"})

    said = {}
    for person in ("bo", "cy"):
        code, out, err = run_cli(["who", f"{person}@acme.com", str(example.manifests), *example.connect,
                                  "--directory", "live"], capsys)
        assert code == 0, err
        said[person] = out
    assert said["bo"].count(f"deactivated in the directory at {example.state}:1: the next apply removes it") == 3
    assert said["cy"].count("does not list it: the next apply removes it") == 3
    code, out, err = run_cli(["who", "cy@acme.com", str(example.manifests), *example.connect], capsys)
    assert "the next apply removes it" not in out  # the committed directory still has her in the group

    desired, _ = directory_for(load_desired(example.manifests), "live", example.state, example.manifests)
    state = load_state(example.state)
    with open_client(Service(emulator_file=example.emulator)) as client:
        live = read_live(client)
    company = company_access(desired, live, state)
    predicted = {(r.workspace_id, r.kind, r.key) for r in company.rows if r.why.source in REMOVED_BY_THE_NEXT_APPLY}
    removed = {(d.workspace_id, d.kind, d.key) for d in removals(make_plan(desired, live, state))
               if d.workspace_id is not None}
    assert predicted == removed and {key for _, _, key in predicted} == {"bo@acme.com", "cy@acme.com"}


@pytest.mark.parametrize("directory", ["committed", "live"])
def test_the_access_report_reads_the_directory_it_is_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], directory: str) -> None:
    example = Example(tmp_path)
    example.identity_provider(inactive=())
    assert run_cli(["apply", str(example.manifests), *example.connect, "--auto-approve"], capsys)[0] == 0
    example.identity_provider(inactive=("bo",))
    out = tmp_path / "report"

    code, _, err = run_cli(["report", str(example.manifests), *example.connect, "--out", str(out),
                            "--directory", directory], capsys)

    assert code == 0, err
    bo = [row["managed_by"] for row in json.loads((out / "access.json").read_text(encoding="utf-8"))["rows"]
          if row["key"] == "bo@acme.com"]
    removed = [line for line in bo if line.endswith("the next apply removes it")]
    assert len(bo) == 3 and len(removed) == (3 if directory == "live" else 0)


def test_audit_with_the_live_directory_lists_a_workspace_a_live_leaver_leaves_to_a_person(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Cy, switched off in the identity provider and not yet in directory.yaml, is the only owner of a
    workspace no manifest names: ``audit --directory live`` leaves it to a person and exits 2, as ``plan
    --directory live`` would; the committed directory knows nothing of it yet."""
    example = Example(tmp_path)
    example.identity_provider(inactive=())
    assert run_cli(["apply", str(example.manifests), *example.connect, "--auto-approve"], capsys)[0] == 0
    example.identity_provider(inactive=("cy",))

    live = run_cli(["audit", str(example.manifests), *example.connect, "--directory", "live"], capsys)
    committed = run_cli(["audit", str(example.manifests), *example.connect], capsys)

    assert live[0] == 2 and "1 workspace left to a person" in live[1] and "cy@acme.com is its only owner" in live[1]
    assert committed[0] == 0 and "left to a person" not in committed[1]


def test_a_grant_whose_expires_date_has_come_is_removed_by_the_plan_of_that_day_as_the_company_read_says(
        tmp_path: Path) -> None:
    rig = _rig(tmp_path, "quickstart")
    rig.apply()
    manifest = rig.root / "manifest.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(
        "{email: raj@customer.com, role: collaborator}", "{email: raj@customer.com, role: collaborator, "
        "expires: 2027-03-01}"), encoding="utf-8")
    assert _predicted_and_removed(rig, date(2027, 2, 28)) == (set(), set())
    predicted, removed = _predicted_and_removed(rig, date(2027, 3, 1))
    assert predicted == removed
    assert {key for _, _, key in predicted} == {"raj@customer.com"}
