"""A directory.yaml written by directory sync is a manifest file like any other: validate accepts it (teams
naming its groups, however odd their names) and fmt --check finds it already in the layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.commands.directory import directory_sync
from reconciler.directory.store import open_directory_store
from tests.directory.conftest import FixedClock, scim_group, scim_user
from tests.e2e.conftest import run_cli

ODD_NAMES = ["Engineering: Backend", "yes", "1e3", "#ops", "Équipe R&D", " lead"]


@pytest.fixture
def synced(tmp_path: Path) -> Path:
    """Manifests holding a synced directory.yaml (odd group names, a leaver with a successor) and a team
    from each of its groups."""
    state = str(tmp_path / "reconciler.state.json")
    with open_directory_store(state, now=FixedClock()) as store:
        store.mirror([scim_user("u1", "ana@acme.com"), scim_user("u2", "bo@acme.com", active=False, manager="u3"),
                      scim_user("u3", "jane@acme.com")],
                     [scim_group(f"g{i}", name, "u1", "u3") for i, name in enumerate(ODD_NAMES)],
                     today=store.today())
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    directory_sync(manifests=manifests, state_path=state)
    teams = "".join(f"  team{i}: {{directoryGroup: {name!r}}}\n" for i, name in enumerate(ODD_NAMES))
    (manifests / "teams.yaml").write_text(f"version: 1\nteams:\n{teams}", encoding="utf-8")
    return manifests


def test_validate_accepts_a_synced_directory_and_teams_from_its_groups(synced: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["validate", str(synced)], capsys)
    assert code == 0, out + err


def test_fmt_check_finds_a_synced_directory_already_in_the_layout(synced: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (synced / "teams.yaml").unlink()  # the hand-written file is not what this test is about
    code, out, err = run_cli(["fmt", "--check", str(synced)], capsys)
    assert code == 0, out + err
