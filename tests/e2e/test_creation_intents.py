"""The issue's repro: an apply of two connects, a creation from a template and four assets, killed
after the service made the workspace and before the answer was recorded.

The journal then holds the two connects and the intent to create, and no state file exists.  The next
apply adopts the workspace by its intent (no import, no second credit) and creates the four assets;
with the intent gone from the journal (a state lost on another machine), it creates the four assets,
lists the creation under "needs a person" with the import command, and exits 1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.state import journal_path, load_state
from tests.e2e.conftest import run_cli
from tests.e2e.test_crash import ASSET_NAMES, KICKOFF
from tests.e2e.test_crash_boundaries import (
    CREATION,
    KICKOFF_ADDRESS,
    Killer,
    Run,
    Setup,
    _force_unlock,
    _load_file,
    _served,
    token,  # noqa: F401 - the fixture
)

CONNECTS_THEN_CREATION = 3  # the creation is the third call that changes something


@pytest.fixture
def killed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[tuple[Run, str]]:
    """An apply killed right after the service made the workspace; the lock it left broken."""
    killer = Killer()
    with _served(killer) as url:
        run = Run(tmp_path, Setup(state=lambda root: str(root / "state.json"), load=_load_file, lock_file=True),
                  killer, at=CONNECTS_THEN_CREATION, after=True)
        run.killed_apply(url)
        assert killer.calls[-1] == CREATION
        _force_unlock(run.state, capsys)
        yield run, url


@pytest.mark.usefixtures("token")
def test_the_kill_leaves_the_two_connects_and_the_intent_in_the_journal_and_no_state_file(
        killed: tuple[Run, str]) -> None:
    run, _ = killed
    state = Path(run.state)
    assert not state.exists()
    lines = [json.loads(line) for line in journal_path(state).read_text(encoding="utf-8").splitlines()]
    assert [sorted(line.get("set", {})) for line in lines[1:]] == [
        ["group.customer-inc.workspace.welcome"], ["group.customer-inc.workspace.quarterly-review"],
        [KICKOFF_ADDRESS]]
    intent = lines[-1]["set"][KICKOFF_ADDRESS]
    assert intent["id"] == "" and {k: v for k, v in intent["intent"].items() if k != "at"} == {
        "name": KICKOFF, "account": "acc_1", "template": "tpl_kickoff", "group": "group.customer-inc",
        "homepage": "ws_home"}


@pytest.mark.usefixtures("token")
def test_the_next_apply_adopts_the_workspace_and_creates_the_four_assets(
        killed: tuple[Run, str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run, url = killed
    (made,) = [w for w in run.company.workspaces if w.name == KICKOFF]
    at = load_state(Path(run.state)).resources[KICKOFF_ADDRESS].intent.at  # type: ignore[union-attr]
    said = (f"adopted {made.id}: created by the interrupted apply of {at}, name, account and template match its "
            "recorded intent")

    code, out, err = run_cli([*run.args("plan", url), "--detailed-exitcode"], capsys)
    assert code == 2 and f"  {KICKOFF_ADDRESS} ({run.project / 'groups.yaml'}:8): {said}" in out.splitlines(), out

    audit = tmp_path / "audit.jsonl"
    code, out, err = run_cli([*run.args("apply", url), "--auto-approve", "--audit-log", str(audit)], capsys)
    assert code == 0, out + err
    assert f"  {KICKOFF_ADDRESS}: {said}" in err.splitlines(), err
    assert sorted(a.name for a in run.company.assets) == sorted(ASSET_NAMES)
    assert [w.name for w in run.company.workspaces].count(KICKOFF) == 1 and run.company.credits == run.credits - 1
    (line,) = [json.loads(s) for s in audit.read_text(encoding="utf-8").splitlines() if '"adopt"' in s]
    assert (line["address"], line["adopted"], line["method"], line["reason"]) == (
        KICKOFF_ADDRESS, made.id, None, said)
    code, out, err = run_cli([*run.args("plan", url), "--detailed-exitcode"], capsys)
    assert code == 0 and "No changes." in out, out + err


@pytest.mark.usefixtures("token")
def test_without_the_intent_the_next_apply_creates_the_assets_and_leaves_the_creation_to_a_person(
        killed: tuple[Run, str], capsys: pytest.CaptureFixture[str]) -> None:
    run, url = killed
    journal = journal_path(Path(run.state))
    journal.write_text("".join(line for line in journal.read_text(encoding="utf-8").splitlines(keepends=True)
                               if '"intent"' not in line), encoding="utf-8")  # a state lost on another machine
    (made,) = [w for w in run.company.workspaces if w.name == KICKOFF]

    code, out, err = run_cli([*run.args("apply", url), "--auto-approve"], capsys)
    assert code == 1, out + err
    assert sorted(a.name for a in run.company.assets) == sorted(ASSET_NAMES), "the four assets are created"
    assert run.company.credits == run.credits - 1, "no second credit"
    said = err.splitlines()
    start = said.index("Error: Apply made every other change (the plan's 4 changes, in 10 API calls), but 1 "
                       "resource needs a person (nothing is sent for it until then):")
    assert said[start + 1:start + 4] == [
        f"  {KICKOFF_ADDRESS} ({run.project / 'groups.yaml'}:8): workspace {made.id} \"{KICKOFF}\" of the same "
        "account and template tpl_kickoff already exists, the state does not know it and records no intent to "
        "create it (an apply whose state was lost may have made it); creating another would spend a second "
        "credit, so the creation is not planned.",
        f"    Open {made.id} in the web app: if it is the one this entry stands for, import it; if not, give the "
        "member another name in the manifest.",
        f"    If {made.id} is the one it stands for: reconciler import {KICKOFF_ADDRESS} {made.id} {run.project} "
        f"--state {run.state}",
    ]
    code, out, err = run_cli([*run.args("plan", url), "--detailed-exitcode"], capsys)
    assert code == 2 and "1 resource needs a person" in out, out + err
