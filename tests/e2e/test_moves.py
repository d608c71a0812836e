"""Renaming an address without creating anything again: ``state mv FROM TO``
and a manifest's ``moved:`` list, on the onboarding example (a member made
from a template: without the move, the next plan would spend a credit)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reconciler.state import load_state
from tests.e2e.conftest import ROOT, run_cli

OLD = "group.customer-inc.workspace.kickoff"
NEW = "group.customer-inc.workspace.kick-off"


@pytest.fixture
def applied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The onboarding example, applied once on its emulator."""
    root = tmp_path / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    code, _, err = run_cli(["apply", str(root), *emu(root), "--auto-approve"], capsys)
    assert code == 0, err
    return root


def emu(root: Path) -> list[str]:
    """The emulator of ``root``: seeded on the first run, as it is afterwards."""
    data = root / "emulator.yaml"
    return ["--emulator", str(data), *(() if data.exists() else ("--seed", str(root / "seed.yaml")))]


def rename_kickoff(root: Path, *, moved: bool) -> int:
    """Rename the kickoff member's key (and add the moved: entry); the entry's line."""
    groups = root / "groups.yaml"
    text = groups.read_text(encoding="utf-8").replace("\n      kickoff:  ", "\n      kick-off: ")
    if moved:
        text += f"moved:\n  - {{from: {OLD}, to: {NEW}}}\n"
    groups.write_text(text, encoding="utf-8")
    return len(text.splitlines())


def kickoff_id(root: Path) -> str:
    return load_state(root / "reconciler.state.json").resources[OLD].id


# -- state mv ------------------------------------------------------------------------


def test_state_mv_moves_the_record_and_the_renamed_member_is_not_created_again(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = kickoff_id(applied)
    state = applied / "reconciler.state.json"
    serial = load_state(state).serial
    rename_kickoff(applied, moved=False)  # the manifests first: state mv's TO must be an address they declare
    code, out, err = run_cli(["state", "mv", OLD, NEW, str(applied)], capsys)
    assert (code, err) == (0, "")
    assert out == (f"Moved {OLD} (workspace {workspace}) to {NEW} in the state {state}. The service was not changed. "
                   f"The next plan manages it as {NEW}; it should not create or remove anything for this move.\n")
    after = load_state(state)
    assert after.serial == serial + 1 and after.resources[NEW].id == workspace and OLD not in after.resources
    code, out, _ = run_cli(["plan", str(applied), *emu(applied)], capsys)
    assert code == 0 and out.startswith("No changes.")


def test_without_the_move_the_renamed_member_would_be_created_again(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rename_kickoff(applied, moved=False)
    code, out, _ = run_cli(["plan", str(applied), *emu(applied)], capsys)
    assert code == 0 and "1 workspace credit" in out


def test_state_mv_to_an_address_the_state_records_is_refused(applied: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    other = "group.customer-inc.workspace.renewal"
    before = (applied / "reconciler.state.json").read_bytes()
    code, out, err = run_cli(["state", "mv", OLD, other, str(applied)], capsys)
    assert (code, out) == (1, "")
    assert err == (f"Error: Cannot move {OLD} to {other}: the state {applied / 'reconciler.state.json'} already "
                   f"records {other}. Remove it first ('reconciler state rm {other} {applied}') if it is stale. Nothing was "
                   "changed.\n")
    assert (applied / "reconciler.state.json").read_bytes() == before


def test_state_mv_of_an_address_the_state_does_not_record_suggests_the_closest(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["state", "mv", "group.customer-inc.workspace.kikoff", NEW, str(applied)], capsys)
    assert code == 1
    assert err == (f"Error: The state {applied / 'reconciler.state.json'} records nothing for "
                   f"group.customer-inc.workspace.kikoff. Did you mean {OLD}, group.customer-inc.workspace.welcome, "
                   "group.customer-inc.workspace.renewal?\n")


def test_state_mv_to_an_address_no_manifest_declares_is_refused_and_changes_nothing(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41 item 6: state mv to an address the manifests do not declare was accepted; the next plan then
    dropped the record and created the workspace again (a credit for a template member)."""
    before = (applied / "reconciler.state.json").read_bytes()
    code, out, err = run_cli(["state", "mv", OLD, NEW, str(applied)], capsys)  # the manifests still say kickoff
    assert (code, out) == (1, "")
    assert err == (f"Error: Cannot move {OLD} to {NEW}: no manifest in {applied} declares {NEW}, so the next plan "
                   "would drop what the state knows of it. Rename the entry in the manifests first, then move (or "
                   "correct TO). Did you mean group.customer-inc.workspace.welcome, group.customer-inc.workspace.renewal, "
                   "group.customer-inc.workspace.quarterly-review? Nothing was changed.\n")
    assert (applied / "reconciler.state.json").read_bytes() == before
    code, _, err = run_cli(["state", "mv", OLD, "group.customer-inc.workspace.kick-of", str(applied)], capsys)
    assert code == 1 and "no manifest in" in err and "Traceback" not in err


def test_state_mv_of_an_asset_to_a_workspace_address_is_refused(applied: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["state", "mv", "asset.pricing-sheet", NEW, str(applied)], capsys)
    assert code == 1
    assert err == (f"Error: Cannot move asset.pricing-sheet to {NEW}: an asset.* address holds an asset and any other "
                   "address a workspace, so one cannot become the other. Nothing was changed.\n")


def test_state_mv_to_itself_is_refused(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["state", "mv", OLD, OLD, str(applied)], capsys)
    assert (code, err) == (1, f"Error: Cannot move {OLD} to itself; nothing was changed.\n")


# -- moved: in the manifest ---------------------------------------------------------------


def test_a_moved_entry_is_planned_as_moved_with_no_call(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = kickoff_id(applied)
    line = rename_kickoff(applied, moved=True)
    code, out, _ = run_cli(["plan", str(applied), *emu(applied), "--detailed-exitcode"], capsys)
    assert code == 2
    digest = json.loads(run_cli(["plan", str(applied), *emu(applied), "--format", "json"], capsys)[1])["plan_digest"]
    assert out == ("reconciler will make these changes:\n\n"
                   f"  # {OLD} has moved to {NEW} (workspace {workspace}, {applied / 'groups.yaml'}:{line}): only the "
                   "state changes, no call is made\n\n"
                   "Plan: 0 to add, 0 to change, 0 to remove; 1 address to move in the state.\n"
                   "Cost: 0 API calls; no workspace credits.\n"
                   f"Plan digest: {digest} (apply --expect-digest applies only this plan).\n")


def test_a_moved_entry_is_in_the_markdown_plan(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = kickoff_id(applied)
    line = rename_kickoff(applied, moved=True)
    code, out, _ = run_cli(["plan", str(applied), *emu(applied), "--format", "markdown"], capsys)
    assert code == 0
    assert (f"- **moved** `{OLD}` → `{NEW}` (workspace {workspace}, {applied / 'groups.yaml'}:{line}): only the "
            "state changes, "
            "no call is made\n") in out.splitlines(keepends=True)


def test_a_moved_entry_is_in_the_json_plan(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = kickoff_id(applied)
    line = rename_kickoff(applied, moved=True)
    code, out, _ = run_cli(["plan", str(applied), *emu(applied), "--format", "json"], capsys)
    plan = json.loads(out)
    assert code == 0
    assert plan["moved"] == [{"address": NEW, "previous_address": OLD, "id": workspace,
                              "location": f"{applied / 'groups.yaml'}:{line}"}]
    assert (plan["changes"], plan["cost"]["calls_by_class"]) == ([], {})


def test_applying_a_moved_entry_records_it_in_the_state_without_any_call(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = kickoff_id(applied)
    rename_kickoff(applied, moved=True)
    code, out, err = run_cli(["apply", str(applied), *emu(applied), "--auto-approve"], capsys)
    assert code == 0, err
    assert out.endswith("Apply complete: 0 added, 0 changed, 0 removed on 0 access lists; 1 address moved in the "
                        "state, in 0 API calls.\n")
    state = load_state(applied / "reconciler.state.json")
    assert state.resources[NEW].id == workspace and OLD not in state.resources


def test_a_moved_entry_already_carried_out_is_nothing_to_do(applied: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    rename_kickoff(applied, moved=True)
    assert run_cli(["apply", str(applied), *emu(applied), "--auto-approve"], capsys)[0] == 0
    code, out, _ = run_cli(["plan", str(applied), *emu(applied), "--detailed-exitcode"], capsys)
    assert code == 0 and out.startswith("No changes.")


def test_a_moved_entry_whose_from_the_state_never_had_is_refused_at_its_line(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41 item 6: a misspelled 'from' (the state records neither end) was taken as a move done already;
    the plan then created the renamed member again."""
    rename_kickoff(applied, moved=False)
    groups = applied / "groups.yaml"
    typo = "group.customer-inc.workspace.kikoff"
    groups.write_text(groups.read_text(encoding="utf-8") + f"moved:\n  - {{from: {typo}, to: {NEW}}}\n",
                      encoding="utf-8")
    line = len(groups.read_text(encoding="utf-8").splitlines())
    code, out, err = run_cli(["plan", str(applied), *emu(applied)], capsys)
    assert (code, out) == (1, "")
    assert err == (f"Error: {groups}:{line}: moved: {typo} to {NEW}: the state records neither address, so this "
                   f"entry moves nothing: {typo} is not an address the state has (misspelled?). Did you mean {OLD}, "
                   "group.customer-inc.workspace.welcome, group.customer-inc.workspace.renewal? Correct 'from' "
                   f"('reconciler state list {applied}' shows what the state records), or remove the entry. Nothing was "
                   "called.\n")


def test_a_moved_entry_is_nothing_to_do_before_anything_was_applied(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No state yet: no move can be about it, so the entry is not refused (the first plan of a copy)."""
    root = tmp_path / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    rename_kickoff(root, moved=True)
    code, out, err = run_cli(["plan", str(root), *emu(root)], capsys)
    assert code == 0, err
    assert "has moved" not in out


def test_a_moved_entry_whose_two_ends_the_state_records_is_refused(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = applied / "reconciler.state.json"
    workspace = kickoff_id(applied)
    raw = json.loads(state.read_text(encoding="utf-8"))
    raw["resources"][NEW] = {"id": "ws_stale"}
    state.write_text(json.dumps(raw), encoding="utf-8")
    line = rename_kickoff(applied, moved=True)
    code, out, err = run_cli(["plan", str(applied), *emu(applied)], capsys)
    assert (code, out) == (1, "")
    assert err == (f"Error: {applied / 'groups.yaml'}:{line}: moved: {OLD} to {NEW}: the state records both ({OLD} as "
                   f"{workspace}, {NEW} as ws_stale), so the move cannot be made. Forget the stale one ('reconciler "
                   f"state rm {OLD} {applied}' or 'reconciler state rm {NEW} {applied}'), then plan again. Nothing "
                   "was called.\n")


# -- a group moves with its members ---------------------------------------------------------


def rename_group(root: Path, *, moved: bool) -> None:
    groups = root / "groups.yaml"
    text = groups.read_text(encoding="utf-8").replace("\n  customer-inc:  ", "\n  customer:      ")
    if moved:
        text += "moved:\n  - {from: group.customer-inc, to: group.customer}\n"
    groups.write_text(text, encoding="utf-8")


def test_a_moved_group_moves_its_members_with_it_and_nothing_is_created_again(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = load_state(applied / "reconciler.state.json").resources
    rename_group(applied, moved=True)
    code, out, _ = run_cli(["plan", str(applied), *emu(applied), "--format", "json"], capsys)
    moved = {m["previous_address"]: m["address"] for m in json.loads(out)["moved"]}
    assert code == 0 and json.loads(out)["changes"] == []
    assert moved == {a: a.replace("group.customer-inc", "group.customer", 1) for a in before
                     if a.startswith("group.customer-inc")}
    assert run_cli(["apply", str(applied), *emu(applied), "--auto-approve"], capsys)[0] == 0
    after = load_state(applied / "reconciler.state.json").resources
    assert {moved.get(a, a): r.id for a, r in before.items()} == {a: r.id for a, r in after.items()}
    code, out, _ = run_cli(["plan", str(applied), *emu(applied)], capsys)
    assert code == 0 and out.startswith("No changes.")


def test_state_mv_of_a_group_moves_its_members_with_it(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rename_group(applied, moved=False)
    code, out, _ = run_cli(["state", "mv", "group.customer-inc", "group.customer", str(applied)], capsys)
    assert code == 0
    assert f" {OLD} moved to group.customer.workspace.kickoff with it." in out
    code, out, _ = run_cli(["plan", str(applied), *emu(applied)], capsys)
    assert code == 0 and out.startswith("No changes.")


# -- what reads the company sees a pending move as the plan does ---------------------------


def test_who_shows_a_member_under_a_pending_move_in_its_group_not_probably_in_it(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Between a moved: entry and its apply the state records the member under its old address; who (and
    audit, report, review) read the state with the move made, as the plan does."""
    code, before, err = run_cli(["who", "jane@acme.com", str(applied), *emu(applied)], capsys)
    assert code == 0, err
    rename_kickoff(applied, moved=True)
    code, after, err = run_cli(["who", "jane@acme.com", str(applied), *emu(applied)], capsys)
    assert code == 0, err
    kickoff = next(line for line in after.splitlines() if "Kickoff" in line)
    assert "(account Customer Inc, in the group of ws_home)" in kickoff
    assert after == before


def test_review_close_removes_the_line_a_revocation_on_a_member_under_a_pending_move_contradicts(
        applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rename_kickoff(applied, moved=True)
    code, _, err = run_cli(["review", "start", "q4", str(applied), "--due", "2099-01-01", "--fallback",
                            "sec@acme.com", *emu(applied)], capsys)
    assert code == 0, err
    reviewer = applied / "reviews" / "q4" / "jane@acme.com.yaml"
    text = reviewer.read_text(encoding="utf-8")
    item = text.index("  - workspace: " + kickoff_id(applied) + '\n    name: "Customer Inc – Kickoff"\n'
                      "    kind: user\n    key: raj@customer.com\n")
    decision = text.index("    decision: null", item)
    reviewer.write_text(text[:decision] + "    decision: revoke" + text[decision + len("    decision: null"):],
                        encoding="utf-8")
    code, out, err = run_cli(["review", "close", "q4", str(applied), "--accept-undecided"], capsys)
    assert code == 0, err
    assert "1 manifest line removed:" in out and "user raj@customer.com from group.customer-inc" in out
    assert "raj@customer.com" not in (applied / "groups.yaml").read_text(encoding="utf-8")
