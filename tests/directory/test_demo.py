"""``reconciler demo directory``: the identity provider's people and teams, end to end (issue 42 item 6).

One run of the demo (through the real entry point) is read by every test: each asserts one
thing the demo promises its reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli


@pytest.fixture(scope="module")
def steps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The demo's output by step title (the line after '$ '), in order; the run must exit 0."""
    import os

    from click.testing import CliRunner  # run_cli needs capsys, which a module-scoped fixture cannot have

    from reconciler.cli import cli

    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("demo"))
    try:
        result = CliRunner().invoke(cli, ["demo", "directory"], env={"RECONCILER_TOKEN": ""})
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    found: dict[str, str] = {}
    for block in re.split(r"^\$ ", result.output, flags=re.MULTILINE)[1:]:
        title, _, body = block.partition("\n")
        key = title
        n = 2
        while key in found:
            key, n = f"{title} #{n}", n + 1
        found[key] = body
    return found


def _step(steps: dict[str, str], start: str, nth: int = 1, *, live: bool = False) -> str:
    """The body of the ``nth`` step whose title starts with ``start`` (and holds --directory live, or not)."""
    matching = [body for title, body in steps.items()
                if title.startswith(start) and ("--directory live" in title) == live]
    assert len(matching) >= nth, list(steps)
    return matching[nth - 1]


def test_the_identity_provider_provisions_twenty_people_and_three_groups(steps: dict[str, str]) -> None:
    assert "20 people and 3 groups provisioned" in _step(steps, "# the identity provider provisions")


def test_the_first_sync_writes_directory_yaml_with_the_three_groups(steps: dict[str, str]) -> None:
    assert "a new file: 3 groups, 0 leavers" in _step(steps, "reconciler directory sync")


def test_the_live_plan_revokes_the_leaver_on_every_list_at_once_and_grants_nothing(steps: dict[str, str]) -> None:
    live = _step(steps, "reconciler plan", live=True)
    assert "Plan: 0 to add, 0 to change, 4 to remove." in live
    assert "1 addition to groups waits for reconciler directory sync" in live
    assert "eli@acme.com" not in live


def test_the_live_plan_leaves_the_workspace_the_leaver_was_last_owner_of_to_a_person(steps: dict[str, str]) -> None:
    live = _step(steps, "reconciler plan", live=True)
    assert re.search(r"unmanaged\.ws_u02 .*dora@acme\.com is its only owner", live), live


def test_the_second_sync_names_the_leaver_with_the_manager_as_successor_and_the_new_member(
        steps: dict[str, str]) -> None:
    synced = _step(steps, "reconciler directory sync", 2)
    assert "group Customer Success: +eli@acme.com -dora@acme.com" in synced
    assert re.search(r"new leaver dora@acme\.com \(since \d{4}-\d\d-\d\d, successor jane@acme\.com\)", synced)


def test_the_reviewed_plan_revokes_the_leaver_everywhere_hands_over_and_grants_the_new_member(
        steps: dict[str, str]) -> None:
    reviewed = _step(steps, "reconciler plan", 1)
    assert "Plan: 3 to add, 0 to change, 5 to remove." in reviewed
    assert "handover   unmanaged.ws_u02: user jane@acme.com gains owner" in reviewed
    # On every list, the team's ones too: the deactivation is why she left the team.
    assert reviewed.count("(deactivated in the directory on ") == 5
    assert "left team" not in reviewed
    assert reviewed.count("+ user   eli@acme.com   editor  (via team customer-success)") == 2


def test_the_last_plan_after_the_apply_has_no_changes(steps: dict[str, str]) -> None:
    assert _step(steps, "reconciler plan", 2).startswith("No changes.")


def test_the_demo_leaves_nothing_in_the_current_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RECONCILER_TOKEN", raising=False)
    code, _, err = run_cli(["demo", "directory"], capsys)
    assert code == 0, err
    assert list(tmp_path.iterdir()) == []
