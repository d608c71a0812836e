"""JSON a pull request or an artifact can hand the tool (the state file, a
saved plan, report --since) nested 200,000 deep or holding an integer of
100,000 digits: a clear error, exit 1, never exit 3 "Internal error".
Through the real entry point, on the quickstart emulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import emu_args, run_cli

pytestmark = pytest.mark.usefixtures("no_ambient_connection")

DEEP = b'{"resources": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
HUGE = b'{"version": 1, "serial": ' + b"9" * 100_000 + b', "resources": {}}'
NESTED = "it is nested too deeply to be read (JSON arrays or objects inside each other about a thousand levels deep)"
DIGITS = "it holds an integer of 100000 digits (at most 64 are read)"


@pytest.mark.parametrize(("data", "why"), [(DEEP, NESTED), (HUGE, DIGITS)], ids=["deep", "huge-integer"])
def test_a_hostile_state_file_is_a_clear_error(project: Path, capsys: pytest.CaptureFixture[str], data: bytes,
                                               why: str) -> None:
    (project / "reconciler.state.json").write_bytes(data)

    code, _, err = run_cli(["plan", str(project), *emu_args(project)], capsys)

    assert code == 1
    assert f"Cannot read the state file {project / 'reconciler.state.json'}: {why}." in err
    assert "Internal error" not in err


@pytest.mark.parametrize(("data", "why"), [(DEEP, NESTED), (HUGE, DIGITS)], ids=["deep", "huge-integer"])
def test_a_hostile_saved_plan_is_a_clear_error(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               data: bytes, why: str) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_bytes(data)

    code, _, err = run_cli(["apply", "--plan", str(plan_file), str(project), *emu_args(project), "--auto-approve"],
                           capsys)

    assert code == 1
    assert f"{plan_file} is not a plan saved by reconciler plan --out: {why}." in err
    assert "Internal error" not in err


@pytest.mark.parametrize(("data", "why"), [(DEEP, NESTED), (HUGE, DIGITS)], ids=["deep", "huge-integer"])
def test_a_hostile_since_file_is_a_clear_error(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               data: bytes, why: str) -> None:
    since = tmp_path / "access.json"
    since.write_bytes(data)

    code, _, err = run_cli(["report", str(project), *emu_args(project), "--out", str(tmp_path / "report"),
                            "--since", str(since)], capsys)

    assert code == 1
    assert f"--since {since} is not JSON ({why}); give the access.json of an earlier report." in err
    assert "Internal error" not in err
