"""A plan made with ``--directory live`` and saved is applied as any saved plan, through the command line:
``apply --plan FILE --directory live`` carries it out, and refuses it (writing nothing) once the live
directory moved, or when the apply would read the committed directory instead (issue 42 item 4).

examples/directory on the command line's own emulator (``--emulator FILE --seed seed.yaml``); the
identity provider's directory is written into the state's store as a pull would (``mirror``): every
person of the example, Bo switched off.
"""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from reconciler.directory.store import open_directory_store
from reconciler.emulator import Emulator
from tests.e2e.conftest import ROOT, run_cli

PEOPLE = ("jane", "bo", "cy", "dora", "sec", "fay")


class Example:
    def __init__(self, tmp_path: Path) -> None:
        shutil.copytree(ROOT / "examples" / "directory", tmp_path / "directory")
        self.manifests = tmp_path / "directory" / "manifests"
        self.emulator = tmp_path / "emulator.yaml"
        self.state = tmp_path / "reconciler.state.json"
        self.connect = ["--emulator", str(self.emulator), "--seed", str(tmp_path / "directory" / "seed.yaml"),
                        "--state", str(self.state)]

    def identity_provider(self, *, inactive: tuple[str, ...], left: set[str] | None = None) -> None:
        """The identity provider's directory as a pull would mirror it: everyone of the example, ``inactive``
        switched off, ``left`` out of Customer Success."""
        users = [{"id": f"u-{name}", "userName": f"{name}@acme.com", "active": name not in inactive}
                 for name in PEOPLE]
        groups = [{"id": "g-cs", "displayName": "Customer Success",
                   "members": [{"value": f"u-{n}"} for n in ("bo", "cy", "dora") if n not in (left or set())]},
                  {"id": "g-sec", "displayName": "Security", "members": [{"value": "u-sec"}]}]
        with open_directory_store(str(self.state)) as store:
            store.mirror(users, groups, today=date(2026, 12, 7))

    def users_of(self, workspace_id: str) -> set[str]:
        company = Emulator.from_file(self.emulator).store.companies["acme"]
        workspace = company.workspace(workspace_id)
        assert workspace is not None
        return {e.key for e in workspace.access.users}


@pytest.fixture
def example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Example:
    example = Example(tmp_path)
    example.identity_provider(inactive=())
    code, _, err = run_cli(["apply", str(example.manifests), *example.connect, "--auto-approve"], capsys)
    assert code == 0, err
    example.identity_provider(inactive=("bo",))
    return example


def _save_live_plan(example: Example, plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["plan", str(example.manifests), *example.connect, "--directory", "live",
                            "--out", str(plan_file)], capsys)
    assert code == 0, err


def test_a_saved_live_plan_applied_with_directory_live_takes_the_leaver_off_every_list(
        example: Example, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _save_live_plan(example, tmp_path / "plan.json", capsys)
    code, _, err = run_cli(["apply", "--plan", str(tmp_path / "plan.json"), str(example.manifests),
                            *example.connect, "--directory", "live", "--auto-approve"], capsys)
    assert code == 0, err
    for workspace_id in ("ws_nw_home", "ws_nw_kickoff", "ws_contoso"):
        assert "bo@acme.com" not in example.users_of(workspace_id)


def test_a_saved_live_plan_is_refused_once_the_live_directory_moved_and_nothing_is_written(
        example: Example, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _save_live_plan(example, tmp_path / "plan.json", capsys)
    example.identity_provider(inactive=("bo", "cy"))  # Cy leaves too, after the plan was made
    code, _, err = run_cli(["apply", "--plan", str(tmp_path / "plan.json"), str(example.manifests),
                            *example.connect, "--directory", "live", "--auto-approve"], capsys)
    assert code == 1
    assert "The live directory changed since it was made." in err and "Traceback" not in err, err
    # The plan to make again is a live one, as the apply was.
    assert f"--state {example.state} --directory live --out plan.json'" in err
    assert "bo@acme.com" in example.users_of("ws_contoso")


def test_a_saved_live_plan_is_refused_by_an_apply_reading_the_committed_directory(
        example: Example, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _save_live_plan(example, tmp_path / "plan.json", capsys)
    code, _, err = run_cli(["apply", "--plan", str(tmp_path / "plan.json"), str(example.manifests),
                            *example.connect, "--auto-approve"], capsys)
    assert code == 1
    assert "It was made with --directory live, and this apply reads the committed directory" in err, err
    assert "bo@acme.com" in example.users_of("ws_contoso")
