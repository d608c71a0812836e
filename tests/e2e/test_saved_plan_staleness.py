"""Why a saved plan is stale, said the way it happened."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import emu_args, run_cli


pytestmark = pytest.mark.usefixtures("no_ambient_connection")


def test_a_plan_made_without_state_applied_where_one_exists_says_so(project: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    assert run_cli(["plan", str(project), *emu_args(project), "--out", str(plan_file)], capsys)[0] == 0
    assert run_cli(["apply", str(project), *emu_args(project), "--target", "workspace.partner-portal",
                    "--auto-approve"], capsys)[0] == 0

    code, _, err = run_cli(["apply", str(project), *emu_args(project), "--plan", str(plan_file), "--auto-approve"],
                           capsys)

    assert code == 1
    assert "It was made without a state file; one exists now." in err
    assert "lineage" not in err


def test_a_saved_plan_finds_its_manifests_from_another_directory(project: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifests' path is kept relative to the plan file, not to where plan ran."""
    (tmp_path / "plans").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    emulator = ["--emulator", "quickstart/emulator.yaml", "--seed", "quickstart/seed.yaml"]
    assert run_cli(["plan", "quickstart", *emulator, "--out", "plans/plan.json"], capsys)[0] == 0
    monkeypatch.chdir(tmp_path / "elsewhere")

    code, out, err = run_cli(["apply", "--plan", "../plans/plan.json", "../quickstart", "--emulator", "../quickstart/emulator.yaml",
                              "--auto-approve"], capsys)

    assert code == 0, err
    assert out.startswith("reconciler will make these changes:")
